import FanoutAPNs
import FanoutRandom
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutTokens

/// A stream of ten million generated tokens in batches of 100, `batchCount` of them, nothing
/// taken: returned once its reader has filled them all and waits for a free one.
private func parkedStream(batchCount: Int) throws -> TokenStream {
    let stream = try TokenStream(
        .generated(TokenGenerator(count: 10_000_000, seed: 1)),
        configuration: .init(batchTokens: 100, batchCount: batchCount)
    )
    let parked = poll(timeout: .seconds(10), every: .milliseconds(1)) { stream.free.parks > 0 }
    #expect(parked, "the reader never waited for a free batch")
    return stream
}

@Suite struct GeneratorAndBinaryTests {
    @Test func sameSeedSameFileByteForByte() throws {
        let folder = TemporaryFolder()
        for format in TokenFileFormat.allCases {
            var files: [Data] = []
            for (name, seed) in [("a", UInt64(42)), ("b", 42), ("c", 43)] {
                let path = "\(folder.path)/\(name).\(format)"
                let writer = try TokenSetWriter(path: path, format: format)
                try write(TokenGenerator(count: 1000, seed: seed), to: writer)
                files.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
            #expect(files[0] == files[1], "\(format)")
            #expect(files[0] != files[2], "\(format)")
        }
    }

    func write(_ generator: TokenGenerator, to writer: TokenSetWriter) throws {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: generator.length, alignment: 8)
        defer { raw.deallocate() }
        for index in 0..<generator.count {
            generator.writeToken(index, to: raw.baseAddress!)
            try writer.append(raw: UnsafeRawBufferPointer(raw), line: Int(index) + 1)
        }
        try writer.finish()
    }

    @Test(arguments: [16, 32, 100, 200])
    func generateWriteReadRoundTrips(length: Int) throws {
        let folder = TemporaryFolder()
        let generator = TokenGenerator(count: 3000, seed: 9, length: length)
        let expected = (0..<generator.count).map { generator.token($0) }
        let generated = try readAll(.generated(generator)).tokens
        #expect(generated.map(\.token) == expected)
        #expect(generated.map(\.sequence) == Array(0..<3000))
        for format in TokenFileFormat.allCases {
            let path = "\(folder.path)/set.\(format)"
            try write(generator, to: TokenSetWriter(path: path, format: format))
            let (tokens, summary) = try readAll(.file(path), .init(batchBytes: 4096))
            #expect(summary.error == nil, "\(format)")
            #expect(tokens.map(\.token) == expected, "\(format)")
            #expect(tokens.map(\.sequence) == Array(0..<3000), "\(format)")
        }
    }

    @Test func textWithFieldsConvertsBackOnlyWithoutFields() throws {
        let folder = TemporaryFolder()
        let writer = try TokenSetWriter(path: "\(folder.path)/b.bin", format: .binary)
        try token64.utf8.withContiguousStorageIfAvailable {
            try writer.append(hex: UnsafeRawBufferPointer($0), line: 1)
        }
        let shorter = String(token64.prefix(40))
        #expect(throws: TokenSetError.self) {
            try shorter.utf8.withContiguousStorageIfAvailable {
                try writer.append(hex: UnsafeRawBufferPointer($0), line: 2)
            }
        }
    }

    func binary(tokenLength: Int, count: UInt64, records: Int, extra: Int = 0, version: UInt16 = 1) -> [UInt8] {
        var header = BinaryTokenFormat.Header(tokenLength: tokenLength, count: count).bytes
        header[8] = UInt8(version & 0xFF)
        return header + [UInt8](repeating: 0xAB, count: records * tokenLength + extra)
    }

    @Test func binaryFilesThatDisagreeWithTheirHeaderAreRefused() throws {
        let folder = TemporaryFolder()
        let cases: [([UInt8], String)] = [
            (
                binary(tokenLength: 32, count: 3, records: 2),
                "truncated: the header promises 3 records of 32 bytes but the file holds 2"
            ),
            (binary(tokenLength: 32, count: 3, records: 2, extra: 5), "but the file holds 2 and 5 bytes of another"),
            (
                binary(tokenLength: 32, count: 2, records: 2, extra: 1),
                "the file has 1 bytes after the 2 records its header promises"
            ),
            (
                binary(tokenLength: 8, count: 1, records: 1),
                "the header says tokens are 8 bytes; accepted are 16 to 200"
            ),
            (
                binary(tokenLength: 32, count: 1, records: 1, version: 2),
                "format version 2 is not one this Fanout reads"
            ),
            (Array(BinaryTokenFormat.magic) + [1, 0, 32], "truncated header: 11 of 24 bytes"),
        ]
        for (bytes, message) in cases {
            let path = folder.file("bad.bin", bytes)
            do {
                _ = try TokenStream(.file(path))
                Issue.record("expected an error saying \(message)")
            } catch {
                #expect(error.source == path)
                #expect(error.message.contains(message), "\(error)")
            }
        }
        let good = folder.file("good.bin", binary(tokenLength: 32, count: 2, records: 2))
        #expect(
            try readAll(.file(good)).tokens.map(\.token)
                == Array(repeating: String(repeating: "ab", count: 32), count: 2)
        )
    }
}

@Suite struct ShardTests {
    @Test func shardsAreDisjointCoverTheSetAndBalance() throws {
        let folder = TemporaryFolder()
        let generator = TokenGenerator(count: 1001, seed: 5)
        let text = (0..<generator.count).map { generator.token($0) }.joined(separator: "\n")
        let sources: [TokenSource] = [.generated(generator), .file(folder.file("t.txt", text))]
        let whole = Set((0..<generator.count).map { generator.token($0) })
        for source in sources {
            for count in 1...5 {
                var union: [ReadToken] = []
                var sizes: [Int] = []
                for index in 1...count {
                    let tokens = try readAll(source, .init(shard: try TokenShard(index, of: count))).tokens
                    #expect(tokens.allSatisfy { Int($0.sequence % UInt64(count)) == index - 1 })
                    union += tokens
                    sizes.append(tokens.count)
                }
                #expect(union.count == whole.count, "\(source) in \(count)")
                #expect(Set(union.map(\.token)) == whole, "\(source) in \(count)")
                #expect(sizes.max()! - sizes.min()! <= 1)
            }
        }
    }

    @Test func shardSyntax() throws {
        #expect(try TokenShard(parsing: "2/8") == TokenShard(2, of: 8))
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "1/2/3", ""] {
            #expect(throws: TokenShardError.self, "\(bad)") { try TokenShard(parsing: bad) }
        }
    }
}

@Suite struct StreamTests {
    @Test func everyTokenReachesExactlyOneOfSeveralConsumers() async throws {
        let generator = TokenGenerator(count: 200_000, seed: 3)
        let stream = try TokenStream(.generated(generator), configuration: .init(batchTokens: 500, batchCount: 4))
        let counts = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var seen: [UInt64] = []
                    while let batch = stream.next() {
                        for index in 0..<batch.count { seen.append(batch[index].sequence) }
                        stream.recycle(batch)
                    }
                    return seen
                }
            }
            var all: [UInt64] = []
            for try await seen in group { all += seen }
            return all
        }
        #expect(counts.count == 200_000)
        #expect(Set(counts).count == 200_000)
        #expect(stream.waitForSummary(timeout: .seconds(10))?.tokens == 200_000)
    }

    @Test func cancelEndsTheStream() throws {
        let stream = try TokenStream(
            .generated(TokenGenerator(count: 100_000_000, seed: 1)),
            configuration: .init(batchCount: 2)
        )
        let first = try #require(stream.next())
        stream.recycle(first)
        stream.cancel()
        var batches = 0
        while let batch = stream.next() {
            batches += 1
            stream.recycle(batch)
        }
        #expect(batches <= 2)
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)))
        #expect(summary.cancelled)
        #expect(summary.tokens < 100_000_000)
    }

    @Test func aSlowConsumerHoldsTheReaderBack() throws {
        // Nothing is taken: the reader can fill at most the pool of batches, then must wait for
        // a free one (it parks on the free queue), and stays there.
        let stream = try parkedStream(batchCount: 4)
        #expect(stream.summary == nil)
        stream.cancel()
        while let batch = stream.next() { stream.recycle(batch) }
        // The pool of four, and at most one more: the reader may already have been waiting for a
        // free batch when the stream was cancelled, and gets one as the drain recycles.
        #expect(try #require(stream.waitForSummary(timeout: .seconds(10))).tokens <= 500)
    }
}

@Suite struct RobustnessTests {
    @Test func randomBytesNeverCrashTheReader() throws {
        let folder = TemporaryFolder()
        let alphabet = Array("0123456789abcdefABCDEF\t\n\r# ".utf8) + [0x00, 0xEF, 0xBB, 0xBF, 0xFF, 0x80]
        for seed in UInt64(0)..<300 {
            var random = SeededRandom(seed: seed)
            let count = Int(random.next() % 3000)
            var bytes = (0..<count).map { _ in
                random.next() % 4 == 0
                    ? UInt8(truncatingIfNeeded: random.next()) : alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
            if seed % 10 == 0 { bytes = BinaryTokenFormat.magic + bytes }
            let path = folder.file("random-\(seed)", bytes)
            for policy in [InvalidTokenPolicy.fail, .skip] {
                do {
                    let (tokens, summary) = try readAll(.file(path), .init(invalidTokens: policy, batchBytes: 512))
                    #expect(tokens.allSatisfy { $0.token.count % 2 == 0 && $0.token.count >= 32 })
                    if policy == .skip {
                        #expect(
                            summary.error == nil
                                || summary.error!.message.wholeMatch(
                                    of: #/line [0-9]+ is longer than [0-9,]+ bytes; no token line is that long/#
                                ) != nil
                        )
                    }
                } catch {
                    #expect((error as? TokenSetError)?.source == path, "\(error)")
                }
            }
        }
    }
}

@Suite struct StreamLifetimeTests {
    @Test func cancellingWithoutDrainingStopsTheReader() throws {
        // Cancelled once the reader has filled both batches and waits for a free one.
        let stream = try parkedStream(batchCount: 2)
        stream.cancel()
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)))
        #expect(summary.cancelled)
    }
}

@Suite struct FieldRoundTripTests {
    @Test func tokensAndFieldsSurviveWriteAndRead() throws {
        let folder = TemporaryFolder()
        let generator = TokenGenerator(count: 2000, seed: 8, length: 50)
        let lines = (0..<generator.count).map { index in
            generator.token(index) + (index % 3 == 0 ? "" : "\t\(index)\tname \(index)\t")
        }
        let original = folder.file("in.txt", lines.joined(separator: "\n") + "\n")
        let (first, _) = try readAll(.file(original))
        let copy = "\(folder.path)/copy.txt"
        let writer = try TokenSetWriter(path: copy, format: .text)
        let stream = try TokenStream(.file(original))
        while let batch = stream.next() {
            for index in 0..<batch.count {
                try writer.append(hex: batch[index].token, fields: batch[index].fields, line: batch[index].line)
            }
            stream.recycle(batch)
        }
        try writer.finish()
        let (second, _) = try readAll(.file(copy))
        #expect(second == first)
        #expect(first.count == 2000)
        #expect(first[1].fields == "\t1\tname 1\t")
        #expect(try String(contentsOfFile: copy, encoding: .utf8) == String(contentsOfFile: original, encoding: .utf8))
    }
}
