// The token line parser fed arbitrary text, with sharding as its oracle.
//
//   input := options(1) text*
//
// `options` picks the batch size (64 << (options & 7) bytes), whether an invalid token fails
// the read or is skipped (options & 8), and the accepted hex lengths (2...16 when options & 16,
// else APNs' 32...400). The text is parsed whole and as shards 1 and 2 of 2: every token handed
// out must pass the format's own check, the shards together must hold what the whole set holds
// (same sequence numbers, same bytes), and a failing read must fail at the same line each time.
import FanoutAPNs
import FanoutTokens
import FuzzSupport

let generator = TokenGenerator(count: 20, seed: 1)
let plain = (0..<generator.count).map { generator.token($0) }.joined(separator: "\n")
let fields = (0..<generator.count).map { generator.token($0) + "\t\($0)\tAlice" }.joined(separator: "\r\n")
runFuzzer(
    seeds: [[0x00] + Array(plain.utf8), [0x08] + Array(fields.utf8), [0x18] + Array("ab\ncd\n\nzz\n0123\n".utf8)],
    test
)

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let options = input.byte()
    let batchBytes = 64 << Int(options & 7)
    let policy: InvalidTokenPolicy = options & 8 != 0 ? .skip : .fail
    let format = options & 16 != 0 ? DeviceTokenFormat(hexLengths: 2...16) : .default
    let whole = read(input.bytes, TokenShard.all, format, policy, batchBytes)
    var shards: [Read] = []
    for index in 1...2 {
        shards.append(read(input.bytes, try! TokenShard(index, of: 2), format, policy, batchBytes))
    }
    if whole.failedAt != nil || shards.contains(where: { $0.failedAt != nil }) {
        precondition(
            shards.allSatisfy { $0.failedAt == whole.failedAt },
            "shards fail at another line than the whole set"
        )
        return 0
    }
    let merged = (shards[0].tokens + shards[1].tokens).sorted { $0.sequence < $1.sequence }
    precondition(merged.elementsEqual(whole.tokens, by: ==), "the shards do not hold what the whole set holds")
    return 0
}

struct Token: Equatable {
    var sequence: UInt64
    var line: Int
    var bytes: [UInt8]
    var fields: [UInt8]
}

struct Read {
    var tokens: [Token] = []
    var failedAt: Int?
}

func read(
    _ text: UnsafeRawBufferPointer,
    _ shard: TokenShard,
    _ format: DeviceTokenFormat,
    _ policy: InvalidTokenPolicy,
    _ batchBytes: Int
) -> Read {
    var parser = TokenTextParser(format: format, shard: shard, invalidTokens: policy, source: "fuzz")
    let batch = TokenBatch(byteCapacity: batchBytes, tokenCapacity: 16)
    var result = Read()
    var offset = 0
    while offset < text.count {
        let used: Int
        do {
            used = try parser.parse(UnsafeRawBufferPointer(rebasing: text[offset...]), into: batch, isLast: true)
        } catch {
            result.failedAt = error.line ?? -1
            return result
        }
        for index in 0..<batch.count {
            let record = batch[index]
            precondition(format.problem(in: record.token) == nil, "the parser handed out an invalid token")
            result.tokens.append(
                Token(
                    sequence: record.sequence,
                    line: record.line,
                    bytes: Array(record.token),
                    fields: Array(record.fields)
                )
            )
        }
        parser.recycle(batch)
        precondition(used > 0 || offset == text.count, "the parser made no progress")
        offset += used
    }
    return result
}
