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

    /// A regular file past the bound is refused by its size, before a byte is read: a sparse
    /// 3 GB file was read to 1 GiB, 1.35 GB resident, first (issue 61, session 37's pass).
    /// Sparse: it takes no disk, and reading it would take seconds and a gigabyte of memory.
    @Test func aRegularFilePastTheBoundIsRefusedByItsSize() throws {
        let folder = TemporaryFolder()
        let path = folder.path + "/sparse.txt"
        let descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
        try #require(descriptor >= 0)
        try #require(ftruncate(descriptor, off_t(TokenListFile.largest) + 1) == 0)
        close(descriptor)
        let peakBefore = Self.peakResidentBytes()
        #expect(
            throws: TokenSetError(
                "cannot read: longer than 1 GiB (about 15 million tokens), the most a list is read into memory",
                source: path
            )
        ) {
            try TokenListFile.tokens(at: path)
        }
        // Read first, the process's peak grew by the gigabyte; refused by its size, by nothing
        // (half of it is room for whatever other suites of this process hold meanwhile).
        let grown = Self.peakResidentBytes() - peakBefore
        #expect(grown < TokenListFile.largest / 2, "the peak grew \(grown) bytes")
    }

    /// This process's peak resident set (`VmHWM` of /proc/self/status), in bytes.
    static func peakResidentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
}
