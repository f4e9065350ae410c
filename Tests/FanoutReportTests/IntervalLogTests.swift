import FanoutAssembly
import FanoutClient
import FanoutMeasure
import FanoutRun
import FanoutTestSupport
import Foundation
import Histogram
import Testing

@testable import FanoutResults

/// `latency.hlog` is read by HdrHistogram's reference Python reader to the same counts, values
/// and percentiles as the run's own histograms.
@Suite(.serialized) struct IntervalLogTests {
    @Test(.requires(.hdrh)) func pythonsReaderDecodesEverySecondOfARun() throws {
        var job = RunJob()
        job.shape.model.schedule = try ArrivalSchedule(rate: 4000, duration: .milliseconds(2500))
        job.count = 10_000
        job.shape.connections = 2
        job.shape.streamsPerConnection = 100
        let summary = try job.run()
        let folder = NSTemporaryDirectory() + "fanout-hlog-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try summary.write(to: folder)

        let read = try PeerProcess.run(
            "python3",
            [repositoryRoot + "/Tests/FanoutReportTests/Peers/read_hlog.py", folder + "/latency.hlog"]
        )
        try #require(read.status == 0, "\(read.errors)")
        /// What `Peers/read_hlog.py` decoded with HdrHistogram's Python reader.
        struct Decoded: Decodable {
            struct Interval: Decodable {
                var start: Double
                var count: Int
                /// Pairs of a value and its count.
                var recorded: [[Int]]
            }
            struct Total: Decodable {
                var count: Int
                var p50: Int
                var p99: Int
                var max: Int
            }
            var startTime: Double
            var intervals: [Interval]
            var total: Total
            enum CodingKeys: String, CodingKey {
                case startTime = "start_time"
                case intervals, total
            }
        }
        let decoded = try JSONDecoder().decode(Decoded.self, from: Data(read.output.utf8))
        let intervals = summary.report.snapshot.intervals
        let pythonIntervals = decoded.intervals
        #expect(intervals.count >= 3)
        #expect(pythonIntervals.count == intervals.count)
        let start = decoded.startTime
        #expect(abs(start - summary.started.timeIntervalSince1970) < 0.001)
        for (interval, python) in zip(intervals, pythonIntervals) {
            let histogram = interval.latencies.unpacked()
            #expect(python.count == Int(histogram.totalCount))
            #expect(abs(python.start - (start + Double(interval.second))) < 0.001)
            let recorded = python.recorded
            #expect(recorded.map { $0[1] }.reduce(0, +) == Int(histogram.totalCount))
            for pair in recorded {
                #expect(histogram.countForValue(UInt64(pair[0])) == UInt64(pair[1]), "value \(pair[0])")
            }
        }
        let total = decoded.total
        let latency = summary.report.snapshot.latency
        #expect(total.count == Int(latency.totalCount))
        #expect(latency.valuesAreEquivalent(UInt64(total.p50), latency.valueAtPercentile(50)))
        #expect(latency.valuesAreEquivalent(UInt64(total.p99), latency.valueAtPercentile(99)))
        #expect(latency.valuesAreEquivalent(UInt64(total.max), latency.max))
    }

    @Test func theLogStartsWithHdrHistogramsHeaderLines() throws {
        let log = IntervalLog(entries: [], start: 1_795_330_800).text
        let lines = log.split(separator: "\n")
        #expect(lines[1] == "#[Histogram log format version 1.3]")
        #expect(lines[2] == "#[StartTime: 1795330800.000 (seconds since epoch), 2026-11-22T07:00:00Z]")
        #expect(lines[3] == "#[BaseTime: 1795330800.000 (seconds since epoch)]")
        #expect(lines[4] == #""StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram""#)
    }

    @Test(.requires(.python3)) func zlibStreamsOfStoredBlocksInflate() throws {
        #expect(ZlibStored.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        // More than one stored block (65,535 bytes each), inflated by Python's zlib.
        var bytes: [UInt8] = []
        for index in 0..<150_000 { bytes.append(UInt8(truncatingIfNeeded: index &* 31)) }
        let stream = ZlibStored.wrap(bytes)
        let inflated = try PeerProcess.run(
            "python3",
            [
                "-c",
                "import sys, zlib, hashlib; print(hashlib.sha256(zlib.decompress(sys.stdin.buffer.read())).hexdigest())",
            ],
            input: Data(stream)
        )
        try #require(inflated.status == 0, "\(inflated.errors)")
        let expected = try PeerProcess.run(
            "python3",
            ["-c", "import sys, hashlib; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())"],
            input: Data(bytes)
        )
        #expect(inflated.output == expected.output)
    }

    @Test func fanoutReadsBackWhatItWroteAndSaysWhereALineIsWrong() throws {
        var histogram = LoadStatistics.makeHistogram()
        for value: UInt64 in [1, 2, 2, 900, 1_500, 65_000, 2_000_000, 3_500_000_000] { _ = histogram.record(value) }
        let packed = PackedHistogram(histogram)
        let log = IntervalLog(entries: [.init(start: 0, length: 1, histogram: packed)], start: 1_795_330_800)
        let (start, entries) = try IntervalLog.read(log.text, file: "run.hlog")
        #expect(start == 1_795_330_800)
        #expect(entries.count == 1)
        #expect(entries.first?.histogram == packed)

        let broken = log.text.replacingOccurrences(of: ",HISTF", with: ",HISTX")
        #expect {
            _ = try IntervalLog.read(broken, file: "run.hlog")
        } throws: { error in
            "\(error)" == "run.hlog:6: not a histogram Fanout wrote (V2, 1 µs to an hour, 3 digits, zlib stored blocks)"
        }
        #expect {
            _ = try IntervalLog.read("0.000,1.000\n", file: "short.hlog")
        } throws: { error in
            "\(error)" == "short.hlog:1: an interval is START,LENGTH,MAX,HISTOGRAM"
        }
    }
}
