import Benchmark
import FanoutTokens
import Foundation

// Reading device-token sets: a text file of 64-hex-character lines, the same set in the binary
// format, and the batch hand-off alone. Each benchmark iteration is one token (a sample is a
// million), so times are per token and throughput is tokens per second. The reader parses on
// its own thread, one core; the benchmark thread only takes and recycles batches.

/// A million tokens, written once per process to the temporary folder (so, page cache).
let tokenCount: UInt64 = 1_000_000
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-token-benchmarks-\(getpid())").path

func writeSet(_ format: TokenFileFormat) -> String {
    try! FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let path = "\(folder)/tokens.\(format)"
    let generator = TokenGenerator(count: tokenCount, seed: 11)
    let writer = try! TokenSetWriter(path: path, format: format)
    let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: generator.length, alignment: 8)
    for index in 0..<generator.count {
        generator.writeToken(index, to: raw.baseAddress!)
        try! writer.append(raw: UnsafeRawBufferPointer(raw), line: Int(index) + 1)
    }
    try! writer.finish()
    raw.deallocate()
    return path
}

let textSet = writeSet(.text)
/// The text file's bytes, for parsing without I/O; written once, then only read.
nonisolated(unsafe) let textImage: UnsafeRawBufferPointer = {
    let bytes = try! Data(contentsOf: URL(fileURLWithPath: textSet))
    let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
    memory.copyBytes(from: bytes)
    return UnsafeRawBufferPointer(memory)
}()
let binarySet = writeSet(.binary)

/// Takes every token of `source`, touching each, and returns how many there were.
func drain(_ source: TokenSource, _ configuration: TokenReaderConfiguration = .init()) -> UInt64 {
    let stream = try! TokenStream(source, configuration: configuration)
    var tokens: UInt64 = 0
    var checksum: UInt64 = 0
    while let batch = stream.next() {
        for index in 0..<batch.count { checksum &+= batch[index].sequence }
        tokens &+= UInt64(batch.count)
        stream.recycle(batch)
    }
    blackHole(checksum)
    return tokens
}

let benchmarks: @Sendable () -> Void = {
    let mallocOnly = ProcessInfo.processInfo.environment["FANOUT_BENCHMARK_METRICS"] == "malloc"
    Benchmark.defaultConfiguration = .init(
        metrics: mallocOnly ? [.mallocCountTotal] : [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        scalingFactor: .mega,
        maxDuration: .seconds(5),
        maxIterations: 20,
        // A sample is a million tokens and opening a stream allocates a few dozen times (its
        // batches, queues, thread): a thousand per sample is setup; one per token would be a
        // million, and fails.
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 1000])]
    )

    // The parser alone, on this thread: copy a batch's worth of the file image (as read(2)
    // would), parse it, repeat. This is the per-core parse rate.
    Benchmark("TokenTextParse-64hex") { benchmark in
        var parser = TokenTextParser()
        let batch = TokenBatch()
        let text = textImage
        var offset = 0
        var tokens = 0
        while offset < text.count {
            offset += try parser.parse(UnsafeRawBufferPointer(rebasing: text[offset...]), into: batch, isLast: true)
            tokens += batch.count
            parser.recycle(batch)
        }
        precondition(tokens == Int(tokenCount) && tokens == benchmark.scaledIterations.count)
    }

    Benchmark("TokenTextRead-64hex") { benchmark in
        precondition(benchmark.scaledIterations.count == Int(tokenCount))
        blackHole(drain(.file(textSet)))
    }

    Benchmark("TokenBinaryRead-32bytes") { benchmark in
        blackHole(drain(.file(binarySet)))
    }

    Benchmark("TokenGenerated") { benchmark in
        blackHole(drain(.generated(TokenGenerator(count: tokenCount, seed: 11))))
    }

    // One token per batch: what is left is the queue hand-off, both ways, per token.
    Benchmark("TokenQueueHandoff-perBatch") { benchmark in
        blackHole(
            drain(
                .generated(TokenGenerator(count: UInt64(benchmark.scaledIterations.count), seed: 11)),
                .init(batchTokens: 1, batchCount: 64)
            )
        )
    }
}
