import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutTokens

#if canImport(Glibc)
import Glibc
#endif

/// A FIFO or pipe whose writer is slow or silent: opening the stream never waits for it (the
/// first bytes are the reader's to wait for), and cancelling the stream ends the reader's wait
/// (`TokenWake`) rather than leaving it blocked in read(2) (issue #61, case 9).
@Suite struct WaitingFileTests {
    /// A FIFO in a fresh folder.
    static func fifo(in folder: TemporaryFolder) throws -> String {
        let path = folder.path + "/tokens.fifo"
        try #require(mkfifo(path, 0o600) == 0)
        return path
    }

    /// No writer ever opens it: the stream opens at once, and a cancel ends its reader.
    @Test func aFIFONobodyWritesOpensAtOnceAndACancelEndsTheReader() throws {
        let folder = TemporaryFolder()
        let path = try Self.fifo(in: folder)
        // Before, this blocked in open(2) for as long as no writer came.
        let stream = try TokenStream(.file(path))
        #expect(stream.tryNext() == nil)
        stream.cancel()
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)), "the reader stayed blocked")
        #expect(summary.cancelled && summary.tokens == 0 && summary.error == nil)
    }

    /// A writer holds the FIFO open and writes part of a line, then nothing: the cancel wakes
    /// the reader, and the partial line is not read as a token (nor turned down as a bad one).
    @Test func aSilentWriterIsWokenOutOfAndAPartialLineIsNoToken() throws {
        let folder = TemporaryFolder()
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path), configuration: .init(invalidTokens: .skip))
        let writer = open(path, O_WRONLY)
        try #require(writer >= 0)
        defer { close(writer) }
        let partial = Array("0123456789abcdef".utf8)
        #expect(partial.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == partial.count)
        stream.cancel()
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)), "the reader stayed blocked")
        #expect(summary.cancelled)
        #expect(summary.tokens == 0 && summary.skipped == 0 && summary.error == nil, "\(summary)")
    }

    /// A FIFO still reads as a file does, text and binary alike, its kind told by the reader:
    /// the writer comes after the stream was opened.
    @Test(arguments: [false, true]) func aFIFOWrittenLaterIsReadWhole(binary: Bool) throws {
        let folder = TemporaryFolder()
        let tokens = (0..<1000).map { String(format: "%064x", $0) }
        let text = folder.file("tokens.txt", tokens.joined(separator: "\n") + "\n")
        var source = text
        if binary {
            source = folder.path + "/tokens.bin"
            let writer = try TokenSetWriter(path: source, format: .binary)
            for (index, token) in tokens.enumerated() {
                try Array(token.utf8).withUnsafeBytes { try writer.append(hex: $0, line: index + 1) }
            }
            try writer.finish()
        }
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let copy = Thread {
            let writer = open(path, O_WRONLY)
            guard writer >= 0 else { return }
            _ = bytes.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        copy.start()
        // Bounded: a writer that failed leaves the reader waiting; the cancel ends it, and the
        // tokens read then are short of the set.
        let read = Self.drain(stream)
        let summary = try #require(stream.waitForSummary(timeout: .seconds(30)))
        #expect(summary.error == nil, "\(String(describing: summary.error))")
        #expect(read == tokens)
    }

    /// Issue 61, review: a writer that sends a few lines and stays open. The reader read until
    /// its 64 KiB batch was full, so `send --tokens -` sent nothing of the five tokens written
    /// and, interrupted, counted them nowhere. Its lines go out as they come now; the partial
    /// line after them waits for its end.
    @Test func linesFromAWriterThatStaysOpenAreHandedOnAtOnce() throws {
        let folder = TemporaryFolder()
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path))
        let writer = open(path, O_WRONLY)
        try #require(writer >= 0)
        defer { close(writer) }
        let tokens = (0..<5).map { String(format: "%064x", $0) }
        let text = Array((tokens.joined(separator: "\n") + "\n0123").utf8)
        #expect(text.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == text.count)
        // Bounded: before the fix the batch never came and `next()` would wait for ever.
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { stream.cancel() }
        var read: [String] = []
        while read.count < tokens.count, let batch = stream.next() {
            for index in 0..<batch.count { read.append(String(decoding: batch[index].token, as: UTF8.self)) }
            stream.recycle(batch)
        }
        #expect(read == tokens)
        stream.cancel()
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)), "the reader stayed blocked")
        #expect(summary.cancelled && summary.tokens == 5 && summary.error == nil, "\(summary)")
    }

    /// A binary set's header written in pieces (a writer's first write shorter than the
    /// magic) is still read as binary: the reader reads on while the bytes could be a header,
    /// and no further once they cannot (a text line is told at its first byte).
    @Test func aHeaderWrittenInPiecesIsStillBinary() throws {
        let folder = TemporaryFolder()
        let (tokens, bytes) = try Self.binarySet(100, in: folder)
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path))
        let writer = open(path, O_WRONLY)
        try #require(writer >= 0)
        // FANOU, a pause the reader can wake in, then the rest.
        #expect(bytes.prefix(5).withUnsafeBytes { write(writer, $0.baseAddress, 5) } == 5)
        hold(for: .milliseconds(200)) { true }
        #expect(bytes.dropFirst(5).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == bytes.count - 5)
        close(writer)
        let read = Self.drain(stream)
        let summary = try #require(stream.waitForSummary(timeout: .seconds(30)))
        #expect(summary.error == nil, "\(String(describing: summary.error))")
        #expect(read == tokens)
    }

    /// A binary set of `count` tokens (`%064x` of 0, 1, …) written to `folder`: its bytes.
    static func binarySet(_ count: Int, in folder: TemporaryFolder) throws -> (tokens: [String], bytes: Data) {
        let tokens = (0..<count).map { String(format: "%064x", $0) }
        let path = folder.path + "/set-\(count).bin"
        let writer = try TokenSetWriter(path: path, format: .binary)
        for (index, token) in tokens.enumerated() {
            try Array(token.utf8).withUnsafeBytes { try writer.append(hex: $0, line: index + 1) }
        }
        try writer.finish()
        return (tokens, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The tokens of every batch until the stream ends or `enough` are read (a cancel 30 s on
    /// bounds the wait).
    static func drain(_ stream: TokenStream, until enough: Int = .max) -> [String] {
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { stream.cancel() }
        var read: [String] = []
        while read.count < enough, let batch = stream.next() {
            for index in 0..<batch.count { read.append(String(decoding: batch[index].token, as: UTF8.self)) }
            stream.recycle(batch)
        }
        return read
    }

    /// Issue 61, session 37's pass: binary records were read 1,024 at a time, so ten from a
    /// writer that stays open were never sent, as text lines once were. They go out as they
    /// come; half a record after them waits for the rest.
    @Test func binaryRecordsFromAWriterThatStaysOpenAreHandedOnAtOnce() throws {
        let folder = TemporaryFolder()
        let (tokens, bytes) = try Self.binarySet(3000, in: folder)
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path))
        let writer = open(path, O_WRONLY)
        try #require(writer >= 0)
        defer { close(writer) }
        let written = BinaryTokenFormat.headerSize + 10 * 32 + 16
        #expect(bytes.prefix(written).withUnsafeBytes { write(writer, $0.baseAddress, written) } == written)
        let read = Self.drain(stream, until: 10)
        #expect(read.elementsEqual(tokens.prefix(10)), "\(read.count) read")
        stream.cancel()
        let summary = try #require(stream.waitForSummary(timeout: .seconds(10)), "the reader stayed blocked")
        #expect(summary.cancelled && summary.tokens == 10 && summary.error == nil, "\(summary)")
    }

    /// A binary stream cut short: every whole record before the cut is handed on and counted,
    /// and the error names the first record missing (1,500 of 3,000 read, then 5 bytes: before,
    /// the 476 after the last full 1,024 were in no count).
    @Test func aTruncatedBinaryStreamHandsOnEveryWholeRecord() throws {
        let folder = TemporaryFolder()
        let (tokens, bytes) = try Self.binarySet(3000, in: folder)
        let path = try Self.fifo(in: folder)
        let stream = try TokenStream(.file(path))
        let cut = bytes.prefix(BinaryTokenFormat.headerSize + 1500 * 32 + 5)
        let copy = Thread {
            let writer = open(path, O_WRONLY)
            guard writer >= 0 else { return }
            _ = cut.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        copy.start()
        let read = Self.drain(stream)
        #expect(read.count == 1500 && read.elementsEqual(tokens.prefix(1500)), "\(read.count) read")
        let summary = try #require(stream.waitForSummary(timeout: .seconds(30)))
        #expect(summary.tokens == 1500)
        #expect(summary.error == TokenSetError("truncated while reading: record 1501 ends early", source: path))
    }
}
