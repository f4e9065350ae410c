import FanoutTokens
import Testing

/// A broadcast run's channels and updates read as a token set: round by round, the channel id as
/// the token, the update's timestamp as its field.
struct ChannelRoundsTests {
    static let ids = ["q7nE0wM1pS2o3Lr9Yx2bUg==", "M2xkYWJjZGVmZ2hpamtsbQ==", "AAAA"]

    @Test func roundByRoundWithAnIncreasingTimestamp() throws {
        let (tokens, summary) = try readAll(
            .channels(ChannelRounds(channels: Self.ids, rounds: 4, firstTimestamp: 1_732_000_000)),
            .init(batchTokens: 5)
        )
        #expect(tokens.count == 12)
        #expect(summary.tokens == 12)
        #expect(summary.validTokens == 12)
        for (index, token) in tokens.enumerated() {
            #expect(token.token == Self.ids[index % 3])
            #expect(token.fields == "\t\(1_732_000_000 + index / 3)")
            #expect(token.sequence == UInt64(index))
            #expect(token.line == index + 1)
        }
    }

    @Test func aShardReadsItsOwnRecords() throws {
        let rounds = ChannelRounds(channels: Self.ids, rounds: 2, firstTimestamp: 5)
        let (tokens, _) = try readAll(.channels(rounds), .init(shard: try TokenShard(parsing: "2/2")))
        #expect(tokens.map(\.sequence) == [1, 3, 5])
        #expect(tokens.map(\.fields) == ["\t5", "\t6", "\t6"])
    }

    @Test func noChannelsReadNothing() throws {
        let (tokens, summary) = try readAll(.channels(ChannelRounds(channels: [], rounds: 3, firstTimestamp: 0)))
        #expect(tokens.isEmpty)
        #expect(summary.error == nil)
    }

    @Test func anIDWithASpaceIsRefusedAtOpen() throws {
        #expect(throws: TokenSetError.self) {
            try TokenStream(.channels(ChannelRounds(channels: ["AAAA", "AA AA"], rounds: 1, firstTimestamp: 0)))
        }
    }

    @Test func aFileOfIDsSkipsBlanksAndCommentsAndSaysWhereALineIsBad() throws {
        let text = "# channels of the match\nq7nE0wM1pS2o3Lr9Yx2bUg==\n\n  AAAA  \n"
        #expect(try ChannelRounds.ids(in: text, source: "ids.txt") == ["q7nE0wM1pS2o3Lr9Yx2bUg==", "AAAA"])
        for (line, problem) in [
            ("AAA", "a multiple of 4 characters"), ("AA*A", "'*' is not a base64 character"),
            ("A=AA", "'=' only as padding"), (String(repeating: "A", count: 68), "at most 64 characters"),
        ] {
            do {
                _ = try ChannelRounds.ids(in: "AAAA\n\(line)\n", source: "ids.txt")
                Issue.record("\(line) was taken")
            } catch {
                #expect(error.description.hasPrefix("ids.txt:2: "), "\(error)")
                #expect(error.description.contains(problem), "\(error)")
            }
        }
        #expect(throws: TokenSetError.self) { try ChannelRounds.ids(in: "\n# none\n", source: "ids.txt") }
    }
}
