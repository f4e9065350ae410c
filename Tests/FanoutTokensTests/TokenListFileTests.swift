import FanoutAPNs
import Foundation
import Testing

@testable import FanoutTokens

#if canImport(Glibc)
import Glibc
#endif

/// The sink's token lists (`--unregistered-tokens`, `--bad-tokens`, `--expect-tokens`) are read
/// in the lines `fanout send` reads.
@Suite struct TokenListFileTests {
    static let first = String(repeating: "ab", count: 32)
    static let second = String(repeating: "0F", count: 32)
    static let third = String(repeating: "c1", count: 50)

    /// A tab and fields after the token, CRLF line ends, a byte order mark, comments, blank lines
    /// and a last line without its newline: the tokens, in order, and nothing else.
    @Test func readsTheLinesTheSenderReads() throws {
        let folder = TemporaryFolder()
        let text =
            "\u{FEFF}# devices\n\(Self.first)\t3\tAlice\n\n\(Self.second)\r\n# the last\r\n\(Self.third)\t\tx"
        let tokens = try TokenListFile.tokens(at: folder.file("list.txt", text))
        #expect(tokens == [Self.first, Self.second, Self.third])
    }

    /// A FIFO whose writer comes later is waited for, as before the reader's FIFOs were opened
    /// without waiting (a sink's list read then as empty).
    @Test func aFIFOIsWaitedForAndReadWhole() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/list.fifo"
        try #require(mkfifo(path, 0o600) == 0)
        let text = "\(Self.first)\n\(Self.second)\n"
        let writer = Thread {
            let descriptor = open(path, O_WRONLY)
            guard descriptor >= 0 else { return }
            _ = Array(text.utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        writer.start()
        #expect(try TokenListFile.tokens(at: path) == [Self.first, Self.second])
    }

    /// More tokens than a batch holds come out whole and in order.
    @Test func readsPastOneBatch() throws {
        let folder = TemporaryFolder()
        let generator = TokenGenerator(count: 5000, seed: 7)
        let expected = (0..<generator.count).map { generator.token($0) }
        let tokens = try TokenListFile.tokens(
            at: folder.file("many.txt", expected.enumerated().map { "\($1)\t\($0)" }.joined(separator: "\n") + "\n")
        )
        #expect(tokens == expected)
    }

    /// A line that is not a token stops the reading, naming the file, the line and the column.
    @Test func aBadLineIsNamed() throws {
        let folder = TemporaryFolder()
        let path = folder.file("bad.txt", "\(Self.first)\n# fine\n\(Self.second.dropLast())\n\(Self.third)\n")
        #expect {
            try TokenListFile.tokens(at: path)
        } throws: { error in
            guard let error = error as? TokenSetError else { return false }
            return error.source == path && error.line == 3 && error.column == 1
                && error.description.hasPrefix("\(path):3:1: the token has 63 hex digits")
        }
        let spaced = folder.file("spaced.txt", "\(Self.first) x\n")
        #expect {
            try TokenListFile.tokens(at: spaced)
        } throws: { error in
            (error as? TokenSetError)?.description.hasPrefix("\(spaced):1:65: ") == true
        }
    }

    /// A file that cannot be read is named, with no line.
    @Test func aMissingFileIsNamed() throws {
        let path = TemporaryFolder().path + "/absent.txt"
        #expect {
            try TokenListFile.tokens(at: path)
        } throws: { error in
            guard let error = error as? TokenSetError else { return false }
            return error.source == path && error.line == nil && error.message.hasPrefix("cannot open")
        }
    }

    /// Review of issue 61: `sink --expect-tokens /dev/zero` read without end, 24 GB, until the
    /// kernel killed it. A device is refused, with the file named.
    @Test func aDeviceIsRefused() {
        #expect(throws: TokenSetError("cannot read: a device, not a token list", source: "/dev/zero")) {
            try TokenListFile.tokens(at: "/dev/zero")
        }
    }
}
