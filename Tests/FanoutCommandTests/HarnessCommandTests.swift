import FanoutTestSupport
import Foundation
import Testing

/// Fanout's account of its own delays, as a user reads it: the `harness` section of
/// summary.json, the printed summary, summary.md, report.html, `fanout gate`'s `harness`
/// metric, and the sink's /stats and /metrics. (How large the delays are against injected
/// ground truth is scripts/bench/harness.sh's: timing on a shared machine is no unit test.)
@Suite(.serialized) struct HarnessCommandTests {
    static func folder() -> String { NSTemporaryDirectory() + "fanout-harness-\(UUID().uuidString)" }

    /// A run with the sink holding every answer 10 ms, flagged harness-bound by a share no run
    /// can stay under: every place a user looks says so, with what to change.
    @Test func aHarnessBoundRunSaysSoEverywhere() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            [
                "run", "--rate", "2000/s", "--duration", "2s", "--sink-latency", "fixed:10ms",
                "--max-harness-share", "0.001%", "--max-lag", "10s", "--output", folder,
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(
            result.standardOutput.contains("timed answers' latency less the sink's hold"),
            "\(result.standardOutput)"
        )
        #expect(result.standardOutput.contains("HARNESS-BOUND: "), "\(result.standardOutput)")
        #expect(result.standardOutput.contains("or offer a lower rate (--rate)"), "\(result.standardOutput)")

        let summary = try CommandRunner.summary(in: folder)
        #expect(summary["schema_version"] as? Int == 7)
        let harness = try #require(summary["harness"] as? [String: Any])
        #expect(harness["bound"] as? Bool == true)
        #expect(harness["max_share"] as? Double == 0.00001)
        #expect((harness["guidance"] as? [String])?.isEmpty == false)
        let sender = try #require(harness["sender"] as? [String: Any])
        let readDelay = try #require(sender["read_delay_ms"] as? [String: Any])
        // One answer in 8 of each connection has its read delay recorded, its first included.
        #expect((500...504).contains(readDelay["count"] as? Int ?? 0), "\(readDelay)")
        let sendLateness = try #require(sender["send_lateness_ms"] as? [String: Any])
        #expect(sendLateness["count"] as? Int == 4000, "\(sendLateness)")
        // The loop-lag probe samples every 5 ms: a 2-second run has hundreds of samples.
        let loopLag = try #require(sender["loop_lag_ms"] as? [String: Any])
        #expect((loopLag["count"] as? Int ?? 0) > 100, "\(loopLag)")
        #expect((sender["loop_utilisation"] as? [Double])?.count == 1)
        let sink = try #require(harness["sink"] as? [String: Any])
        // Every answer is timed from its due time; one request in 8 of each connection carries
        // its send time, and those answers are timed from it too.
        for key in ["lateness_ms", "injected_ms"] {
            let delay = try #require(sink[key] as? [String: Any], "\(key) missing from \(sink)")
            #expect(delay["count"] as? Int == 4000, "\(key): \(delay)")
        }
        let fromSend = try #require(sink["from_send_ms"] as? [String: Any])
        #expect((500...504).contains(fromSend["count"] as? Int ?? 0), "\(fromSend)")
        // What the scenario held each answer is the injected 10 ms, and it is reported as such.
        let injected = try #require(sink["injected_ms"] as? [String: Double])
        #expect(injected["p50"].map { abs($0 - 10) < 0.05 } == true, "\(injected)")
        #expect(injected["max"].map { abs($0 - 10) < 0.05 } == true, "\(injected)")
        // The timed answers say when the sink wrote them and what it held them: the way back and
        // the harness's whole share are measured on each, and the own delay at p99 is never
        // below a part's. The share is against the measured p99.
        #expect(harness["own_measured"] as? Bool == true)
        for delay in [harness["own_ms"], sender["return_path_ms"], sender["per_answer_ms"]] {
            #expect((500...504).contains((delay as? [String: Any])?["count"] as? Int ?? 0), "\(delay ?? "none")")
        }
        // The sender's share of an answer is a part of the harness's whole share of it (the
        // rest is the sink's), and holds the way back: answer by answer, so at every percentile.
        let perAnswer = try #require(sender["per_answer_ms"] as? [String: Double])
        let ownDelay = try #require(harness["own_ms"] as? [String: Double])
        let wayBack = try #require(sender["return_path_ms"] as? [String: Double])
        for key in ["p50", "p99", "max"] {
            #expect(perAnswer[key]! <= ownDelay[key]! && wayBack[key]! <= perAnswer[key]!, "\(key)")
        }
        let own = try #require(harness["own_p99_ms"] as? Double)
        let measured = try #require(harness["measured_p99_ms"] as? Double)
        let share = try #require(harness["share_of_p99"] as? Double)
        #expect(abs(share - own / measured) < 1e-9)
        let parts = [sendLateness, loopLag, readDelay, sink["from_send_ms"] as? [String: Any] ?? [:]]
        #expect(own >= parts.compactMap { $0["p99"] as? Double }.max() ?? .infinity)
        #expect(own >= (harness["own_ms"] as? [String: Any])?["p99"] as? Double ?? .infinity)
        let intervals = try #require(summary["intervals"] as? [[String: Any]])
        for interval in intervals {
            #expect(interval["max_loop_lag_ms"] is Double && interval["read_delay_p99_ms"] is Double, "\(interval)")
        }

        let markdown = try String(contentsOfFile: folder + "/summary.md", encoding: .utf8)
        #expect(markdown.contains("⚠️ **harness-bound**"), "\(markdown)")
        #expect(markdown.contains("| sink hold as told (injected, not the harness's) | 10.00 |"), "\(markdown)")
        let html = try String(contentsOfFile: folder + "/report.html", encoding: .utf8)
        #expect(html.contains("HARNESS-BOUND"))
        #expect(html.contains("<h2>The harness's own share</h2>"))

        // `fanout gate` says so too, and thresholds the harness's delay like `lag`.
        let loose = try CommandRunner.run(["gate", folder, "--threshold", "harness < 10s"])
        #expect(loose.status == 0, "\(loose.standardOutput)\(loose.standardError)")
        #expect(
            loose.standardOutput.contains("HARNESS-BOUND the harness's own delay at p99"),
            "\(loose.standardOutput)"
        )
        let strict = try CommandRunner.run(["gate", folder, "--threshold", "harness < 1us"])
        #expect(strict.status == 1, "\(strict.standardOutput)\(strict.standardError)")
        #expect(strict.standardOutput.contains("harness < 1us"), "\(strict.standardOutput)")
    }

    @Test func aShareThatIsNotOneIsAUsageError() throws {
        // What is not a share is refused as the option is read; a share of 0 or below by the run.
        let cases = [
            ("abc", "error: --max-harness-share: 'abc' is not a share; write it like 5% or 0.05"),
            ("0", "--max-harness-share: 0% is not a share above 0"),
            ("-5%", "--max-harness-share: -5% is not a share above 0"),
        ]
        for (share, message) in cases {
            let result = try CommandRunner.run(["run", "--count", "10", "--max-harness-share=\(share)"])
            #expect(result.status == 64, "\(share)")
            #expect(result.standardError.contains(message), "\(result.standardError)")
        }
    }

    /// `fanout send --apns-id timed` to a `fanout sink` on this host: the sink times its answers
    /// from each request's send, and says so in /stats, /metrics and its summary.
    @Test func aSinkTimesTimedRequestsFromTheirSend() throws {
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--latency", "fixed:2ms"]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let admin = try sink.announcedPort(after: "admin on ")
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for policy in ["timed", "random"] {
            let send = try CommandRunner.run(
                [
                    "send", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "3000", "--template",
                    "\(repositoryRoot)/fixtures/poll.json", "--topic", "com.example.app", "--apns-id", policy,
                    "--output", folder + "/" + policy,
                ],
                timeout: .seconds(120)
            )
            #expect(send.status == 0, "\(send.standardOutput)\(send.standardError)")
        }
        // Loops hand their delays over once a second: /stats is read until every answer's is in.
        var read: [String: Any] = [:]
        let countIn = { (delays: [String: Any], key: String) in (delays[key] as? [String: Any])?["count"] as? Int }
        let handedOver = try poll(timeout: .seconds(10), every: .milliseconds(100)) {
            let stats = try PeerProcess.run("curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(admin)/stats"])
            let object = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
            read = object?["own_delays"] as? [String: Any] ?? [:]
            return countIn(read, "lateness_ms") == 6000
        }
        let delays = read
        #expect(handedOver, "\(delays)")
        let count = { (key: String) in countIn(delays, key) }
        // Every answer is timed from its due time; only the 3,000 timed ones from their send.
        #expect(count("lateness_ms") == 6000, "\(delays)")
        #expect(count("from_send_ms") == 3000, "\(delays)")
        #expect(count("injected_ms") == 6000, "\(delays)")
        #expect((delays["loop_utilisation"] as? [Double])?.count == 1, "\(delays)")
        let metrics = try PeerProcess.run("curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(admin)/metrics"])
        for line in [
            #"fanout_sink_lateness_seconds{quantile="0.99"}"#, #"fanout_sink_injected_seconds{quantile="0.5"} 0.002"#,
            #"fanout_sink_loop_lag_seconds{quantile="1"}"#, #"fanout_sink_loop_cpu_utilisation{loop="0"}"#,
        ] {
            #expect(metrics.output.contains(line), "\(line) missing from \(metrics.output)")
        }
        let result = sink.stop()
        #expect(result.output.contains("own lateness from the send (timed apns-ids"), "\(result.output)")
        #expect(
            result.output.contains("held by the scenario (latency, pacing, stalls): p50 2.00 ms"),
            "\(result.output)"
        )

        let bad = try CommandRunner.run(
            [
                "send", "--endpoint", "http://127.0.0.1:1", "--generate", "1", "--template",
                "\(repositoryRoot)/fixtures/poll.json", "--topic", "com.example.app", "--apns-id", "soon",
            ]
        )
        #expect(bad.status == 64)
        #expect(
            bad.standardError.contains(
                "The value 'soon' is invalid for '--apns-id <policy>'. Please provide one of 'random', 'timed' or 'none'"
            ),
            "\(bad.standardError)"
        )
    }
}
