import FanoutTestSupport
import Foundation
import Testing

/// `fanout send` against a `fanout sink` process that dies mid-run (SIGKILL) and comes back on
/// the same port: every token ends in one outcome, none fails while tries remain, every
/// connection comes back, and the run ends on its own.
@Suite(.serialized) struct SendFaultTests {
    @Test(arguments: [300, 1000])
    func aSinkKilledAndRestartedLosesNothing(downMilliseconds: Int) throws {
        let folder = NSTemporaryDirectory() + "fanout-fault-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = freePort()
        let sink = ["sink", "--listen", "127.0.0.1:\(port)"]
        let first = try PeerProcess(CommandRunner.executable.path, sink)
        defer { first.stop() }
        try waitForListener(port: port)
        let send = try PeerProcess(
            CommandRunner.executable.path,
            [
                "send", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "100000", "--template",
                CommandRunner.repositoryRoot + "/fixtures/poll.json", "--topic", "com.example.app",
                "--connections", "4", "--streams", "200", "--output", folder + "/run",
            ]
        )
        defer { send.stop() }
        // Some of the run is done, most is not.
        Thread.sleep(forTimeInterval: 0.8)
        first.signal(SIGKILL)
        Thread.sleep(forTimeInterval: Double(downMilliseconds) / 1000)
        let second = try PeerProcess(CommandRunner.executable.path, sink)
        defer { second.stop() }
        let result = try send.wait(timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(!result.output.contains("gave up"), "\(result.output)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary["accepted"] as? Int == 100_000)
        #expect((summary["failed"] as? [String: Int] ?? [:]).isEmpty, "\(summary["failed"] ?? "")")
        let lives = second.stop()
        // All four connections came back to the sink's second life.
        #expect(lives.output.contains("connections: 4 opened"), "\(lives.output)")
    }

    /// A sink frozen (SIGSTOP) for longer than the stream timeout and then thawed: the streams
    /// that timed out are reset and tried again, and every notification ends accepted.
    @Test func aSinkFrozenPastTheTimeoutLosesNothing() throws {
        let folder = NSTemporaryDirectory() + "fanout-fault-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = freePort()
        let sink = try PeerProcess(CommandRunner.executable.path, ["sink", "--listen", "127.0.0.1:\(port)"])
        defer {
            sink.signal(SIGCONT)
            sink.stop()
        }
        try waitForListener(port: port)
        let send = try PeerProcess(
            CommandRunner.executable.path,
            [
                "send", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "100000", "--template",
                CommandRunner.repositoryRoot + "/fixtures/poll.json", "--topic", "com.example.app",
                "--connections", "4", "--streams", "200", "--timeout", "1s", "--attempts", "5",
                "--output", folder + "/run",
            ]
        )
        defer { send.stop() }
        Thread.sleep(forTimeInterval: 0.8)
        sink.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 2.5)
        sink.signal(SIGCONT)
        let result = try send.wait(timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary["accepted"] as? Int == 100_000)
        #expect((summary["failed"] as? [String: Int] ?? [:]).isEmpty, "\(summary["failed"] ?? "")")
        // The freeze outlasted the timeout: streams were reset and sent again.
        #expect((summary["retries"] as? Int ?? 0) > 0, "\(summary)")
        let counts = sink.stop()
        #expect(counts.output.contains("accepted: "), "\(counts.output)")
    }
}
