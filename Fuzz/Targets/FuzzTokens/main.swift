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

// Made before the fuzzer calls `test` (top-level code runs in order).
/// One batch of each size the options pick (64 << 0 ... 64 << 7 bytes), made once: the target
/// checks the parser, not the allocator (under ASan, allocations were most of its time).
let batches = (0..<8).map { TokenBatch(byteCapacity: 64 << $0, tokenCapacity: 16) }
let firstHalf = try! TokenShard(1, of: 2)
let secondHalf = try! TokenShard(2, of: 2)
/// The three reads of an input: the whole set and its two shards.
nonisolated(unsafe) var whole = Read()
nonisolated(unsafe) var shards = [Read(), Read()]

func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var input = FuzzInput(start, count)
    let options = input.byte()
    let batch = batches[Int(options & 7)]
    let policy: InvalidTokenPolicy = options & 8 != 0 ? .skip : .fail
    let format = options & 16 != 0 ? DeviceTokenFormat(hexLengths: 2...16) : .default
    read(input.bytes, .all, format, policy, batch, into: &whole)
    read(input.bytes, firstHalf, format, policy, batch, into: &shards[0])
    read(input.bytes, secondHalf, format, policy, batch, into: &shards[1])
    if whole.failedAt != nil || shards[0].failedAt != nil || shards[1].failedAt != nil {
        precondition(
            shards[0].failedAt == whole.failedAt && shards[1].failedAt == whole.failedAt,
            "shards fail at another line than the whole set"
        )
        return 0
    }
    // Each shard's tokens come in increasing sequence: merged, they must be the whole set's.
    precondition(
        shards[0].records.count + shards[1].records.count == whole.records.count,
        "the shards do not hold as many tokens as the whole set"
    )
    var next = (0, 0)
    for expected in whole.records.indices {
        let fromFirst =
            next.1 == shards[1].records.count
            || (next.0 < shards[0].records.count
                && shards[0].records[next.0].sequence < shards[1].records[next.1].sequence)
        let shard = fromFirst ? 0 : 1
        let index = fromFirst ? next.0 : next.1
        precondition(
            shards[shard].same(index, as: whole, expected),
            "the shards do not hold what the whole set holds (token \(expected))"
        )
        if fromFirst { next.0 += 1 } else { next.1 += 1 }
    }
    return 0
}

func read(
    _ text: UnsafeRawBufferPointer,
    _ shard: TokenShard,
    _ format: DeviceTokenFormat,
    _ policy: InvalidTokenPolicy,
    _ batch: TokenBatch,
    into result: inout Read
) {
    result.reset()
    var parser = TokenTextParser(format: format, shard: shard, invalidTokens: policy, source: "fuzz")
    // A read that failed left its tokens in the batch.
    parser.recycle(batch)
    var offset = 0
    while offset < text.count {
        let used: Int
        do {
            used = try parser.parse(UnsafeRawBufferPointer(rebasing: text[offset...]), into: batch, isLast: true)
        } catch {
            result.failedAt = error.line ?? -1
            return
        }
        for index in 0..<batch.count {
            let record = batch[index]
            precondition(format.problem(in: record.token) == nil, "the parser handed out an invalid token")
            result.append(record)
        }
        parser.recycle(batch)
        precondition(used > 0 || offset == text.count, "the parser made no progress")
        offset += used
    }
}

/// What one read handed out: each token's sequence, line and bytes (token, then fields) in one
/// byte array. Kept between inputs with their capacity.
struct Read {
    struct Record {
        var sequence: UInt64
        var line: Int
        var token: Range<Int>
        var fields: Range<Int>
    }

    var records: [Record] = []
    var bytes: [UInt8] = []
    var failedAt: Int?

    mutating func reset() {
        records.removeAll(keepingCapacity: true)
        bytes.removeAll(keepingCapacity: true)
        failedAt = nil
    }

    mutating func append(_ record: TokenRecord) {
        let tokenStart = bytes.count
        bytes.append(contentsOf: record.token)
        let fieldsStart = bytes.count
        bytes.append(contentsOf: record.fields)
        records.append(
            Record(
                sequence: record.sequence,
                line: record.line,
                token: tokenStart..<fieldsStart,
                fields: fieldsStart..<bytes.count
            )
        )
    }

    /// Whether record `index` is `other`'s record `otherIndex`: sequence, line, token, fields.
    func same(_ index: Int, as other: Read, _ otherIndex: Int) -> Bool {
        let mine = records[index]
        let theirs = other.records[otherIndex]
        return mine.sequence == theirs.sequence && mine.line == theirs.line
            && bytes[mine.token].elementsEqual(other.bytes[theirs.token])
            && bytes[mine.fields].elementsEqual(other.bytes[theirs.fields])
    }
}

runFuzzer(
    seeds: [[0x00] + Array(plain.utf8), [0x08] + Array(fields.utf8), [0x18] + Array("ab\ncd\n\nzz\n0123\n".utf8)],
    test
)
