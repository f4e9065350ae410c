import FanoutAPNs
import Testing

@testable import FanoutTokens

/// `TextTokenParser` alone: lines parsed in place from a batch's bytes, fed in chunks, with its
/// place (line, sequence) kept from one call to the next.
@Suite struct TextTokenParserTests {
    static let a = String(repeating: "a1", count: 32)
    static let b = String(repeating: "B2", count: 32)
    static let c = String(repeating: "c3", count: 16)

    /// A batch holding `text`'s bytes from offset 0.
    static func batch(_ text: String, tokenCapacity: Int = 64) -> TokenBatch {
        let batch = TokenBatch(byteCapacity: 4096, tokenCapacity: tokenCapacity)
        let bytes = Array(text.utf8)
        batch.bytes.copyBytes(from: bytes)
        return batch
    }

    static func parser(
        _ policy: InvalidTokenPolicy = .fail,
        shard: TokenShard = .all,
        onReject: @escaping (RejectedToken) -> Void = { _ in }
    ) -> TextTokenParser {
        TextTokenParser(source: "tokens.txt", format: .default, shard: shard, policy: policy, onReject: onReject)
    }

    /// The batch's tokens as (token, fields, line, sequence).
    static func read(_ batch: TokenBatch) -> [ReadToken] {
        (0..<batch.count).map { index in
            let record = batch[index]
            return ReadToken(
                token: String(decoding: record.token, as: UTF8.self),
                fields: String(decoding: record.fields, as: UTF8.self),
                line: record.line,
                sequence: record.sequence
            )
        }
    }

    @Test func commentsBlankLinesByteOrderMarkAndCRLFAreLinesButNotTokens() throws {
        let text = "\u{FEFF}# a comment\n\n\(Self.a)\r\n\(Self.b)\tid=7\tgroup\n\(Self.c)"
        let batch = Self.batch(text)
        var parser = Self.parser()
        let end = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        #expect(end == text.utf8.count)
        #expect(
            Self.read(batch) == [
                ReadToken(token: Self.a, fields: "", line: 3, sequence: 0),
                ReadToken(token: Self.b, fields: "\tid=7\tgroup", line: 4, sequence: 1),
                ReadToken(token: Self.c, fields: "", line: 5, sequence: 2),
            ]
        )
        #expect(parser.line == 5 && parser.sequence == 3 && parser.skipped == 0)
    }

    /// A chunk that ends inside a line returns where that line starts; the next call, given the
    /// rest, carries on with the same line numbers and sequence.
    @Test func aLineCutByTheChunkWaitsForTheRest() throws {
        let text = "\(Self.a)\n\(Self.b)\n"
        let batch = Self.batch(text)
        var parser = Self.parser()
        let cut = Self.a.utf8.count + 1 + 10
        let resume = try parser.parse(batch, from: 0, to: cut, isLast: false)
        #expect(resume == Self.a.utf8.count + 1)
        #expect(batch.count == 1 && parser.line == 1)
        let end = try parser.parse(batch, from: resume, to: text.utf8.count, isLast: false)
        #expect(end == text.utf8.count)
        #expect(Self.read(batch).map(\.line) == [1, 2])
        #expect(Self.read(batch).map(\.sequence) == [0, 1])
        // Without a newline, the last line counts only when the caller says it is the last.
        let unfinished = Self.batch(Self.c)
        var last = Self.parser()
        #expect(try last.parse(unfinished, from: 0, to: Self.c.utf8.count, isLast: false) == 0)
        #expect(try last.parse(unfinished, from: 0, to: Self.c.utf8.count, isLast: true) == Self.c.utf8.count)
        #expect(Self.read(unfinished).map(\.token) == [Self.c])
    }

    @Test func underFailABadLineThrowsWithItsPlace() {
        let text = "\(Self.a)\n\(Self.a.dropLast(1))\n"
        let batch = Self.batch(text)
        var parser = Self.parser()
        let error = #expect(throws: TokenSetError.self) {
            _ = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        }
        #expect(error?.line == 2 && error?.column == 1, "\(String(describing: error))")
        #expect(error?.message == "the token has 63 hex digits; hex needs an even number")
        #expect(batch.count == 1)
    }

    @Test func underSkipBadLinesAreCountedAndHandedOver() throws {
        let text = "\(Self.a)\nzz\(Self.a)\n\(Self.a)x\n\tfield\n\(Self.b)\n\(Self.a)\r\(Self.b)\n"
        let batch = Self.batch(text)
        var rejected: [RejectedToken] = []
        var parser = Self.parser(.skip) { rejected.append($0) }
        _ = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        #expect(Self.read(batch).map(\.token) == [Self.a, Self.b])
        #expect(Self.read(batch).map(\.sequence) == [0, 1])
        #expect(parser.skipped == 4)
        #expect(rejected.map(\.line) == [2, 3, 4, 6])
        #expect(rejected.map(\.column) == [1, 65, 1, 65])
        #expect(rejected[0].reason == "'z' is not a hex digit")
        #expect(rejected[1].reason == "'x' is not a hex digit")
        #expect(rejected[2].reason == "the line has no token before its first tab")
        #expect(rejected[3].reason.hasPrefix("a carriage return (CR) without a line feed after it"))
        #expect(rejected[1].text == Array("\(Self.a)x".utf8))
    }

    /// Every valid token takes a sequence number; a shard's batch holds only its own.
    @Test func aShardKeepsItsOwnButCountsEveryToken() throws {
        let tokens = (0..<6).map { String(repeating: String(format: "%02x", $0 + 16), count: 32) }
        let text = tokens.joined(separator: "\n") + "\n"
        let batch = Self.batch(text)
        let shard = try TokenShard(2, of: 3)
        var parser = Self.parser(shard: shard)
        _ = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        #expect(parser.sequence == 6)
        let kept = Self.read(batch)
        #expect(kept.map(\.sequence).allSatisfy { shard.contains($0) })
        #expect(kept.map(\.token) == kept.map { tokens[Int($0.sequence)] })
        #expect(kept.count == 2)
    }

    /// A full batch stops the parse where the next token's line starts.
    @Test func aFullBatchStopsBeforeTheNextLine() throws {
        let text = "\(Self.a)\n\(Self.b)\n\(Self.c)\n"
        let batch = Self.batch(text, tokenCapacity: 2)
        var parser = Self.parser()
        let stop = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        #expect(stop == Self.a.utf8.count + Self.b.utf8.count + 2)
        #expect(Self.read(batch).map(\.token) == [Self.a, Self.b])
        #expect(parser.line == 2)
    }
}

/// FCM registration tokens (`DeviceTokenFormat.fcm`): their own alphabet, any length in range,
/// hex among them, and a character outside it named with its place.
@Suite struct FCMTokenTextTests {
    /// A registration token as FCM issues them: an instance id, `:APA91b`, then base64url.
    static let token = "dXpLq3mTRkq8c1Zb-0_9aQ:APA91bHn" + String(repeating: "Ab3_-x", count: 22)

    static func parse(
        _ text: String,
        _ policy: InvalidTokenPolicy = .fail,
        onReject: @escaping (RejectedToken) -> Void = { _ in }
    )
        throws -> (TokenBatch, TextTokenParser)
    {
        let batch = TokenBatch(byteCapacity: 8192, tokenCapacity: 64)
        batch.bytes.copyBytes(from: Array(text.utf8))
        var parser = TextTokenParser(source: "fcm.txt", format: .fcm, shard: .all, policy: policy, onReject: onReject)
        _ = try parser.parse(batch, from: 0, to: text.utf8.count, isLast: true)
        return (batch, parser)
    }

    @Test func registrationTokensAndOddLengthHexAreTokens() throws {
        let text = "\(Self.token)\tname=Ada\nabc\n"
        let (batch, parser) = try Self.parse(text)
        #expect(
            TextTokenParserTests.read(batch) == [
                ReadToken(token: Self.token, fields: "\tname=Ada", line: 1, sequence: 0),
                ReadToken(token: "abc", fields: "", line: 2, sequence: 1),
            ]
        )
        #expect(parser.skipped == 0)
        // The same lines as APNs device tokens: neither is hex of an even length in range.
        let apns = TextTokenParserTests.batch(text)
        var hex = TextTokenParserTests.parser(.skip)
        _ = try hex.parse(apns, from: 0, to: text.utf8.count, isLast: true)
        #expect(apns.count == 0 && hex.skipped == 2)
    }

    @Test func aCharacterOutsideTheAlphabetIsNamedWithItsPlace() throws {
        var rejected: [RejectedToken] = []
        let (batch, parser) = try Self.parse("\(Self.token)\nab/cd\n\(Self.token)\n", .skip) { rejected.append($0) }
        #expect(batch.count == 2 && parser.skipped == 1)
        #expect(rejected.map(\.line) == [2] && rejected.map(\.column) == [3])
        #expect(rejected.first?.reason == "'/' is not in an FCM registration token (A-Z a-z 0-9 - _ :)")
        let tooLong = String(repeating: "a", count: 4097)
        let error = #expect(throws: TokenSetError.self) { _ = try Self.parse(tooLong + "\n") }
        #expect(error?.message == "the FCM registration token has 4097 characters; accepted are 1 to 4096")
    }
}
