import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout send` against a `fanout sink` process that fails under it — killed (SIGKILL) and
/// restarted on the same port, frozen (SIGSTOP) past the stream timeout, or behind a proxy that
/// resets connections — with every token ending in one outcome, none failing while tries remain,
/// every connection coming back, and the run ending on its own.
@Suite(.serialized) struct SendFaultTests {
    static let notifications = 100_000

    /// A new folder path for a run's results.
    static func folder() -> String { NSTemporaryDirectory() + "fanout-fault-\(UUID().uuidString)" }

    /// `fanout sink` on `port` (0: a port of its own, read back with `announcedPort()`); its
    /// answers take 5 ms, so 4 × 50 streams carry at most 40,000/s and a run outlasts the fault
    /// it is meant to meet.
    static func slowSink(port: Int = 0) throws -> PeerProcess {
        try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:\(port)", "--latency", "fixed:5ms"]
        )
    }

    /// `fanout send`'s arguments for the generated set to `port`, results in `folder/run`.
    static func send(to port: Int, streams: Int = 50, into folder: String, _ extra: [String] = []) -> [String] {
        [
            "send", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "\(notifications)", "--template",
            CommandRunner.repositoryRoot + "/fixtures/poll.json", "--topic", "com.example.app",
            "--connections", "4", "--streams", "\(streams)", "--output", folder + "/run",
        ] + extra
    }

    /// Waits (bounded) until `send` has written some 2,500 requests (~400 bytes each, /proc/PID/io's
    /// `wchar`): some of the run is done, most of its 100,000 is not.
    static func waitUntilUnderWay(_ send: PeerProcess) throws {
        let underWay = poll(timeout: .seconds(30)) { send.bytesWritten > 1_000_000 }
        try #require(underWay, "the send wrote \(send.bytesWritten) bytes in 30 s")
    }

    /// The run's summary, after checking that every notification was accepted and none failed.
    static func everyNotificationAccepted(in folder: String) throws -> SummaryDocument {
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.sent == notifications)
        #expect(summary.accepted == notifications)
        #expect(summary.failed.isEmpty, "\(summary.failed)")
        return summary
    }

    /// Down 0.3, 1 and 4 s: each within the reconnect backoff (50 ms doubling to 5 s, 8 tries:
    /// the 7th comes 6.35 s after the loss). Two tries a notification: the outage may cost one
    /// and no more — a notification lost at the kill waits for a connection whose peer has
    /// answered a PING since, rather than going into another connection that has not read its
    /// own end yet (with three tries, that cascade once failed 45 of 100,000 under load).
    @Test(arguments: [300, 1000, 4000])
    func aSinkKilledAndRestartedLosesNothing(downMilliseconds: Int) throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try Self.slowSink()
        defer { first.stop() }
        let port = try first.announcedPort()
        let send = try PeerProcess(
            CommandRunner.executable.path,
            Self.send(to: port, into: folder, ["--attempts", "2"])
        )
        defer { send.stop() }
        try Self.waitUntilUnderWay(send)
        first.signal(SIGKILL)
        let gone = poll(timeout: .seconds(10)) { !first.isRunning }
        try #require(gone, "the sink outlived SIGKILL by 10 s")
        // The outage itself, the parameter under test: the sink stays down this long while the
        // send is still running. The second life binds the port the first one chose.
        let outage = hold(for: .milliseconds(downMilliseconds)) { send.isRunning }
        try #require(outage, "the send ended during the outage: \(send.stop().output)")
        let second = try Self.slowSink(port: port)
        defer { second.stop() }
        let result = try send.wait(timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(lines(of: result.output, keyed: "gave up").isEmpty, "\(result.output)")
        _ = try Self.everyNotificationAccepted(in: folder)
        let lives = second.stop()
        // All four connections came back to the sink's second life.
        #expect(
            lines(of: lives.output, keyed: "connections: ") == ["connections: 4 opened, 4 closed"],
            "\(lives.output)"
        )
    }

    /// A sink frozen (SIGSTOP) for longer than the stream timeout and then thawed: the streams
    /// that timed out are reset and tried again, and every notification ends accepted.
    @Test func aSinkFrozenPastTheTimeoutLosesNothing() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try Self.slowSink()
        defer {
            sink.signal(SIGCONT)
            sink.stop()
        }
        let port = try sink.announcedPort()
        let send = try PeerProcess(
            CommandRunner.executable.path,
            Self.send(to: port, into: folder, ["--timeout", "1s", "--attempts", "5"])
        )
        defer { send.stop() }
        try Self.waitUntilUnderWay(send)
        sink.signal(SIGSTOP)
        let frozen = poll(timeout: .seconds(10)) { sink.isStopped }
        try #require(frozen, "the sink did not stop on SIGSTOP in 10 s")
        // The freeze lasts until the sender has given up on what the sink holds. First it
        // stalls: every stream is in flight and nothing is answered, so it writes nothing for
        // 300 ms. Past the 1 s stream timeout it resets those streams and sends them again —
        // some 200 requests, ~80 kB, to a sink that reads nothing: then the sink is thawed.
        var written = send.bytesWritten
        var stillSince = ContinuousClock.now
        let stalled = poll(timeout: .seconds(10)) {
            let now = send.bytesWritten
            if now != written { (written, stillSince) = (now, .now) }
            return ContinuousClock.now - stillSince >= .milliseconds(300)
        }
        try #require(stalled, "the send kept writing to a frozen sink: \(send.bytesWritten) bytes")
        let retried = poll(timeout: .seconds(10)) { sink.isStopped && send.bytesWritten > written + 40_000 }
        try #require(retried && sink.isStopped, "no retries written in 10 s: \(send.bytesWritten - written) bytes")
        sink.signal(SIGCONT)
        let result = try send.wait(timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        let summary = try Self.everyNotificationAccepted(in: folder)
        // The freeze outlasted the timeout: streams were reset and sent again.
        #expect(summary.retries > 0, "\(summary)")
        let counts = sink.stop()
        #expect(labelledCounts(counts.output)["accepted"] != nil, "\(counts.output)")
    }

    /// Behind a proxy that resets a connection at random every 0.4 s or so: every token ends in
    /// one outcome and is accepted. The sink may count more than the sender (an answer lost in
    /// a reset is sent again) and may have received fewer requests than were sent (a request
    /// lost in a reset never arrived), never the other way round.
    @Test(.requires(.python3)) func connectionsResetByAProxyLoseNothing() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, sinkPort) = try CommandRunner.sink([])
        defer { sink.stop() }
        let proxy = try PeerProcess(
            "python3",
            [PythonPeer.path("reset_proxy.py"), "0", "\(sinkPort)", "0.4", "7", "150"]
        )
        defer { proxy.stop() }
        let proxyPort = try listeningPort(of: proxy.processIdentifier)
        let result = try CommandRunner.run(
            Self.send(to: proxyPort, streams: 200, into: folder, ["--attempts", "10"]),
            timeout: .seconds(140)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let summary = try Self.everyNotificationAccepted(in: folder)
        let resets = proxy.stop().output.split(separator: "\n").filter { $0.hasPrefix("reset") }.count
        #expect(resets > 0, "the proxy reset nothing")
        let counts = sink.stop().output
        func count(_ name: String) -> Int? {
            counts.split(separator: "\n").first { $0.hasPrefix("\(name): ") }.flatMap {
                Int($0.split(separator: " ")[1].replacing(",", with: ""))  // grouped: 6,000
            }
        }
        let accepted = try #require(count("accepted"), "\(counts)")
        let received = try #require(count("requests"), "\(counts)")
        #expect(accepted >= Self.notifications)
        #expect(received <= summary.requests)
    }
}
