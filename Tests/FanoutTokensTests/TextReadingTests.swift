import FanoutAPNs
import FanoutTokens
import Testing

@Suite struct TextReadingTests {
    @Test func linesCommentsBlanksFieldsAndLineEndings() throws {
        let folder = TemporaryFolder()
        let upper = token64.uppercased()
        let text = "\u{FEFF}# a comment\n\n\(token64)\t3\tAlice\r\n\(upper)\n   \n"
        // "   " is not blank: it is a line whose first character is not hex.
        let path = folder.file("tokens.txt", text.replacingOccurrences(of: "   \n", with: "\(token64)\t\t"))
        let (tokens, summary) = try readAll(.file(path))
        #expect(
            tokens == [
                ReadToken(token: token64, fields: "\t3\tAlice", line: 3, sequence: 0),
                ReadToken(token: upper, fields: "", line: 4, sequence: 1),
                ReadToken(token: token64, fields: "\t\t", line: 5, sequence: 2),
            ]
        )
        #expect(summary.tokens == 3)
        #expect(summary.lines == 5)
        #expect(summary.error == nil)
    }

    @Test(arguments: [64, 100, 200, 400])
    func tokensOfAnyAcceptedLength(length: Int) throws {
        let folder = TemporaryFolder()
        let token = String(repeating: "aB", count: length / 2)
        let (tokens, _) = try readAll(.file(folder.file("t.txt", token + "\n" + token)))
        #expect(tokens.map(\.token) == [token, token])
    }

    struct BadLine: Sendable, CustomTestStringConvertible {
        let line: String
        let column: Int
        let says: String
        var testDescription: String { says }
    }

    static let badLines: [BadLine] = [
        BadLine(line: String(token64.dropLast()) + "g", column: 64, says: "'g' is not a hex digit"),
        BadLine(line: " " + token64, column: 1, says: "a space is not a hex digit"),
        BadLine(line: token64 + " ", column: 65, says: "a space is not a hex digit"),
        BadLine(line: token64 + ",3", column: 65, says: "',' is not a hex digit"),
        BadLine(
            line: String(token64.prefix(31)) + "é" + String(token64.suffix(32)),
            column: 32,
            says: "byte 0xC3 is not a hex digit"
        ),
        BadLine(
            line: String(token64.dropLast()),
            column: 1,
            says: "the token has 63 hex digits; hex needs an even number"
        ),
        BadLine(line: "abcd", column: 1, says: "the token has 4 hex digits; accepted are 32 to 400"),
        BadLine(
            line: String(repeating: "ab", count: 201),
            column: 1,
            says: "the token has 402 hex digits; accepted are 32 to 400"
        ),
        BadLine(line: "\tfield", column: 1, says: "the line has no token before its first tab"),
        // Old Mac line ends (CR alone): the lines run together; the message says why.
        BadLine(
            line: token64 + "\r" + token64,
            column: 65,
            says:
                "a carriage return (CR) without a line feed after it: token lists end lines with LF or CRLF (tr '\\r' '\\n' converts the file)"
        ),
    ]

    @Test(arguments: badLines)
    func badLineIsAnErrorWithItsPlace(_ bad: BadLine) throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.txt", "\(token64)\n# comment\n\(bad.line)\n\(token64)\n")
        let (tokens, summary) = try readAll(.file(path))
        #expect(summary.error == TokenSetError(bad.says, source: path, line: 3, column: bad.column))
        #expect(tokens.count <= 1)
    }

    @Test func skippedLinesAreCountedAndWrittenToTheRejectFile() throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.txt", "\(token64)\nxyz\n\(token64)\t1\nabc\tq\n\(token64)")
        let rejects = "\(folder.path)/rejects.tsv"
        let (tokens, summary) = try readAll(.file(path), .init(invalidTokens: .skip, rejectsPath: rejects))
        #expect(tokens.map(\.line) == [1, 3, 5])
        #expect(tokens.map(\.sequence) == [0, 1, 2])
        #expect(summary.skipped == 2)
        #expect(summary.error == nil)
        let written = try String(contentsOfFile: rejects, encoding: .utf8)
        #expect(
            written
                == "2\t1\t'x' is not a hex digit\txyz\n4\t1\tthe token has 3 hex digits; hex needs an even number\tabc q\n"
        )
    }

    /// A line that stops the read (too long, under `.skip`) still leaves the lines turned down
    /// before it in the rejects file: it came back empty (#61 case 7).
    @Test func aLineThatStopsTheReadLeavesTheRejectsWritten() throws {
        let folder = TemporaryFolder()
        let long = String(repeating: "a", count: 70_000)
        let path = folder.file("t.txt", "\(token64)\nxyz\n\(token64)\n\(long)\n\(token64)\n")
        let rejects = "\(folder.path)/rejects.tsv"
        let (tokens, summary) = try readAll(.file(path), .init(invalidTokens: .skip, rejectsPath: rejects))
        #expect(tokens.map(\.line) == [1, 3])
        #expect(summary.error?.line == 4)
        #expect(try String(contentsOfFile: rejects, encoding: .utf8) == "2\t1\t'x' is not a hex digit\txyz\n")
    }

    /// One limit on a token line whatever the reader's batch: a run's (64 KiB) and the default
    /// (256 KiB, `fanout tokens`) refuse the same 65,537-byte line and take the 65,536-byte one.
    @Test(arguments: [64 * 1024, 256 * 1024])
    func everyReaderHasTheSameLongestLine(batchBytes: Int) throws {
        let folder = TemporaryFolder()
        let longest = token64 + "\t" + String(repeating: "f", count: TokenReaderConfiguration.longestLine - 66)
        #expect(longest.utf8.count + 1 == TokenReaderConfiguration.longestLine)
        let fits = try readAll(.file(folder.file("a.txt", longest + "\n")), .init(batchBytes: batchBytes))
        #expect(fits.1.error == nil && fits.0.count == 1, "\(String(describing: fits.1.error))")
        let over = try readAll(.file(folder.file("b.txt", longest + "f\n")), .init(batchBytes: batchBytes))
        #expect(over.1.error?.line == 1)
        #expect(
            over.1.error?.message == "line 1 is longer than 65,536 bytes; no token line is that long",
            "\(String(describing: over.1.error))"
        )
    }

    @Test func linesStraddlingBatchesAreReadWhole() throws {
        let folder = TemporaryFolder()
        var text = ""
        var expected: [ReadToken] = []
        for index in 0..<500 {
            let token = String(repeating: String(format: "%02x", index % 256), count: 16 + index % 50)
            let fields = index % 3 == 0 ? "\t\(index)" : ""
            text += token + fields + (index % 2 == 0 ? "\n" : "\r\n")
            expected.append(ReadToken(token: token, fields: fields, line: index + 1, sequence: UInt64(index)))
        }
        let path = folder.file("t.txt", text)
        for batchBytes in [256, 257, 1000, 4096] {
            let (tokens, summary) = try readAll(
                .file(path),
                .init(batchBytes: batchBytes, batchTokens: 7, batchCount: 3)
            )
            #expect(summary.error == nil, "batch of \(batchBytes) bytes")
            #expect(tokens == expected, "batch of \(batchBytes) bytes")
        }
    }

    @Test func aLineLongerThanABatchIsAnError() throws {
        let folder = TemporaryFolder()
        let path = folder.file("t.txt", "\(token64)\n\(token64)\t\(String(repeating: "x", count: 600))\n")
        let (_, summary) = try readAll(.file(path), .init(batchBytes: 256))
        #expect(summary.error?.line == 2)
        #expect(summary.error?.message == "line 2 is longer than 256 bytes; no token line is that long")
    }

    @Test func unreadableFilesAreReported() throws {
        #expect(throws: TokenSetError("cannot open: No such file or directory", source: "/nonexistent/tokens.txt")) {
            try TokenStream(.file("/nonexistent/tokens.txt"))
        }
        let folder = TemporaryFolder()
        #expect(throws: TokenSetError("cannot read: it is a directory", source: folder.path)) {
            try TokenStream(.file(folder.path))
        }
    }

    @Test func emptyFileHasNoTokens() throws {
        let folder = TemporaryFolder()
        let (tokens, summary) = try readAll(.file(folder.file("empty.txt", "")))
        #expect(tokens.isEmpty)
        #expect(summary.tokens == 0)
        #expect(summary.error == nil)
    }
}

@Suite struct TokenTextParserTests {
    @Test func parsesMemoryInBatchSizedSteps() throws {
        let generator = TokenGenerator(count: 1000, seed: 2)
        let text = Array(((0..<generator.count).map { generator.token($0) + "\t\($0)" }.joined(separator: "\n")).utf8)
        var parser = TokenTextParser()
        let batch = TokenBatch(byteCapacity: 1000, tokenCapacity: 64)
        var seen: [String] = []
        var offset = 0
        try text.withUnsafeBytes { bytes in
            while offset < bytes.count {
                let used = try parser.parse(
                    UnsafeRawBufferPointer(rebasing: bytes[offset...]),
                    into: batch,
                    isLast: true
                )
                for index in 0..<batch.count { seen.append(String(decoding: batch[index].token, as: UTF8.self)) }
                #expect(used > 0)
                parser.recycle(batch)
                offset += used
            }
        }
        #expect(seen == (0..<generator.count).map { generator.token($0) })
        #expect(parser.lines == 1000)
        #expect(parser.validTokens == 1000)
    }
}
