import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// The wire in front of the sink (`--sink-rtt`) is the endpoint's path, not a queue of the
/// harness: a timed answer's hold carries the wire's two ways, its write time is when the wire
/// hands it on, and the sink's lateness from the send leaves the way in out. Before, `fanout run
/// --sink-rtt 80ms --sink-latency fixed:5ms` read the harness's own delay at p99 as 86.85 ms (95%
/// of the measured p99: HARNESS-BOUND), the way back 41 ms and the sink's lateness from the send
/// 42 ms, each with half the wire in it.
@Suite struct HarnessWireTests {
    @Test func theWireIsNotTheHarnesssOwnDelay() throws {
        let folder = NSTemporaryDirectory() + "fanout-harness-wire-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try CommandRunner.run(
            [
                "run", "--count", "8000", "--sink-rtt", "80ms", "--sink-latency", "fixed:5ms", "--connections", "2",
                "--streams", "200", "--output", folder,
            ],
            timeout: .seconds(120)
        )
        #expect(run.status == 0, "\(run.standardError)")
        let summary = try CommandRunner.summary(in: folder)
        let harness = try #require(summary.harness, "\(summary)")
        let latency = try #require(summary.latency)
        // Every answer took the wire's 80 ms and the hold's 5 ms.
        #expect(latency.p50 >= 85)
        // Half the wire, each way, is 40 ms: a figure holding a way of it reads at least that.
        // Bounded against the run's own latency, so that a loaded machine, which adds to both
        // sides, cannot fail it: the harness's own share is the latency less the hold and the
        // wire's 80 ms (with the wire in it, it read the latency less the hold), and the sink's
        // part before the write and the sender's after it, with the hold, fit in the latency
        // less the wire (with the wire, they held all of it).
        let sender = harness.sender
        let sink = try #require(harness.sink, "\(harness)")
        let latencyP50 = latency.p50
        #expect(harness.ownMeasured == true)
        #expect(try #require(harness.own?.p50) < latencyP50 - 5 - 40, "\(harness)")
        let parts = try #require(sender.returnPath?.p50) + sink.fromSend.p50 + 5
        #expect(parts < latencyP50 - 40, "\(sender) \(sink)")
        // The hold the sink reports is its own 5 ms, the wire not in it.
        #expect(sink.injected.p50 == 5, "\(sink)")
    }
}
