import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// The return wave against its ground truth (issue #63), with the processes users run: a
/// `fanout sink` whose devices engage, `fanout send` fanning 100,000 tokens out to it at once,
/// and a backend written here counting every request it gets. 20% of the devices open the poll
/// uniformly over 0–10 s after its delivery, two requests an open, OK by 60% of them and NOK by
/// 30%: the backend must see 40,000 requests ± 1.5%, 4,000 in each of seconds 1–9 ± 10% (from
/// its first request: the fan-out itself takes a fraction of a second), the actions by their
/// shares ± 1 point; and the sink's `return_wave` must agree with the backend. The poll goes
/// without mutable-content here (100,000 media downloads at the fan-out's second would measure
/// this debug-built backend's parsing, not the wave): ReturnWaveShapeTests counts the downloads.
///
/// Timing, so run by scripts/test.sh alone against the release build (`FANOUT_EXECUTABLE`), as
/// GroundTruthTests are.
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["FANOUT_EXECUTABLE"] != nil,
        "measures timing: run by scripts/test.sh against the release build (FANOUT_EXECUTABLE)"
    )
)
struct ReturnWaveGroundTruthTests {
    @Test func aHundredThousandAtOnceMakeTheWaveTheModelSays() throws {
        let backend = try CountingBackend(threads: 2)
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-truth-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let poll = try String(contentsOfFile: CommandRunner.repositoryRoot + "/fixtures/poll.json", encoding: .utf8)
        let template = folder + "/poll-plain.json"
        try poll.replacingOccurrences(of: #","mutable-content":1"#, with: "").write(
            toFile: template,
            atomically: true,
            encoding: .utf8
        )
        let (sink, port) = try CommandRunner.sink([
            "--device-open", "20%", "--device-open-after", "uniform:0s-10s", "--device-actions", "OK=60%,NOK=30%",
            "--device-requests-per-open", "2", "--return-to", backend.url, "--return-campaign", "truth",
            "--expect", "100000", "--output", folder + "/sink",
        ])
        defer { _ = sink.stop() }
        let sent = try CommandRunner.run(
            [
                "send", "--endpoint", "http://127.0.0.1:\(port)", "--template", template, "--topic", "com.example.app",
                "--generate", "100000", "--output", folder + "/send",
            ],
            timeout: .seconds(60)
        )
        #expect(sent.status == 0, "\(sent.standardError)")
        // The sink ends by itself once the wave it waits for is answered (or 30 s after its last event).
        let ended = try sink.wait(timeout: .seconds(60))
        #expect(ended.status == 0, "\(ended.output)")
        let arrivals = backend.all.sorted { $0.time < $1.time }
        let first = try #require(arrivals.first).time

        // 20,000 opens of 100,000 (σ 126), two requests each: 40,000 ± 1.5%.
        #expect(abs(arrivals.count - 40_000) <= 600, "\(arrivals.count) requests")
        var perSecond = [Int](repeating: 0, count: 12)
        for arrival in arrivals {
            let second = Int((arrival.time - first) / 1_000_000_000)
            if second < perSecond.count { perSecond[second] += 1 }
        }
        for second in 1...9 {
            #expect(abs(perSecond[second] - 4_000) <= 400, "second \(second): \(perSecond)")
        }
        let firsts = arrivals.filter { $0.event != "launch" }
        #expect(firsts.count * 2 == arrivals.count)
        for (action, share) in [("OK", 0.6), ("NOK", 0.3), ("default", 0.1)] {
            let measured = Double(firsts.count { $0.action == action }) / Double(firsts.count)
            #expect(abs(measured - share) <= 0.01, "\(action): \(measured)")
        }
        #expect(arrivals.allSatisfy { $0.event != "media" })
        // The sink's own account of the wave agrees with the backend's.
        let summary = try CommandRunner.summary(in: folder + "/sink")
        let wave = try #require(summary.returnWave)
        #expect(wave.offered == arrivals.count && wave.answered == arrivals.count && wave.errors == 0)
        #expect(wave.byKind["action"]?.offered == firsts.count { $0.action != "default" })
    }
}
