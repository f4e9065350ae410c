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
        // 5 ms answers over 4 × 50 streams: at most 40,000/s, so the run outlasts the fault.
        let sink = ["sink", "--listen", "127.0.0.1:\(port)", "--latency", "fixed:5ms"]
        let first = try PeerProcess(CommandRunner.executable.path, sink)
        defer { first.stop() }
        try waitForListener(port: port)
        let send = try PeerProcess(
            CommandRunner.executable.path,
            [
                "send", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "100000", "--template",
                CommandRunner.repositoryRoot + "/fixtures/poll.json", "--topic", "com.example.app",
                "--connections", "4", "--streams", "50", "--output", folder + "/run",
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
        // 5 ms answers over 4 × 50 streams: at most 40,000/s, so the run outlasts the freeze.
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:\(port)", "--latency", "fixed:5ms"]
        )
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
                "--connections", "4", "--streams", "50", "--timeout", "1s", "--attempts", "5",
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

    /// Behind a proxy that resets a connection at random every 0.4 s or so: every token ends in
    /// one outcome and is accepted. The sink may count more than the sender (an answer lost in
    /// a reset is sent again) and may have received fewer requests than were sent (a request
    /// lost in a reset never arrived), never the other way round.
    @Test func connectionsResetByAProxyLoseNothing() throws {
        let folder = NSTemporaryDirectory() + "fanout-fault-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sinkPort = freePort()
        let sink = try PeerProcess(CommandRunner.executable.path, ["sink", "--listen", "127.0.0.1:\(sinkPort)"])
        defer { sink.stop() }
        try waitForListener(port: sinkPort)
        let proxyPort = freePort()
        let proxy = try PeerProcess(
            "python3",
            [PythonPeer.path("reset_proxy.py"), "\(proxyPort)", "\(sinkPort)", "0.4", "7", "150"]
        )
        defer { proxy.stop() }
        try waitForListener(port: proxyPort)
        let result = try CommandRunner.run(
            [
                "send", "--endpoint", "http://127.0.0.1:\(proxyPort)", "--generate", "100000", "--template",
                "fixtures/poll.json", "--topic", "com.example.app", "--connections", "4", "--streams", "200",
                "--attempts", "10", "--output", folder + "/run",
            ],
            timeout: .seconds(140)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary["sent"] as? Int == 100_000)
        #expect(summary["accepted"] as? Int == 100_000)
        #expect((summary["failed"] as? [String: Int] ?? [:]).isEmpty, "\(summary["failed"] ?? "")")
        let resets = proxy.stop().output.split(separator: "\n").filter { $0.hasPrefix("reset") }.count
        #expect(resets > 0, "the proxy reset nothing")
        let counts = sink.stop().output
        func count(_ name: String) -> Int? {
            counts.split(separator: "\n").first { $0.hasPrefix("\(name): ") }.flatMap {
                Int($0.split(separator: " ")[1])
            }
        }
        let accepted = try #require(count("accepted"), "\(counts)")
        let received = try #require(count("requests"), "\(counts)")
        #expect(accepted >= 100_000)
        #expect(received <= summary["requests"] as? Int ?? 0)
    }
}
