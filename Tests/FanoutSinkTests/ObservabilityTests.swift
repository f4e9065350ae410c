import FanoutAPNs
import FanoutHTTP2
import FanoutTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import FanoutSink

/// What a long run shows while it runs and leaves behind: the admin endpoint read by curl and
/// by prometheus_client's parser while h2load sends, and captured notifications.
@Suite(.serialized) struct ObservabilityTests {
    /// A sink with its admin endpoint on loopback, stopped by `stop()`.
    final class AdminSink {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sink: Sink
        let admin: SinkAdmin
        var port: Int { sink.localAddress.port! }
        var adminPort: Int { admin.localAddress.port! }

        init(_ configuration: SinkConfiguration = .init()) throws {
            sink = try Sink(host: "127.0.0.1", port: 0, group: group, configuration: configuration)
            admin = try SinkAdmin(sink: sink, host: "127.0.0.1", port: 0, group: group)
        }

        func stop() {
            sink.drain(grace: .seconds(2))
            admin.close()
            try? group.syncShutdownGracefully()
        }
    }

    static let token = String(repeating: "ab", count: 32)

    /// GET (or another method) with curl: the status and the body.
    static func fetch(_ port: Int, _ path: String, method: String = "GET") throws -> (status: Int, body: String) {
        let result = try PeerProcess.run(
            "curl",
            ["-s", "--max-time", "10", "-X", method, "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"]
        )
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    static func stats(_ port: Int) throws -> SinkStatsDocument {
        let (status, body) = try fetch(port, "/stats")
        try #require(status == 200, "\(body)")
        return try SinkStatsDocument(json: body)
    }

    /// /metrics parsed by prometheus_client.
    static func metrics(_ port: Int) throws -> [PrometheusSample] {
        let (status, body) = try fetch(port, "/metrics")
        try #require(status == 200)
        let output = try SinkPeerTests.python("prometheus_parse.py", [], input: Data(body.utf8))
        return try JSONDecoder().decode([PrometheusSample].self, from: Data(output.utf8))
    }

    /// A summary before its first observation has NaN quantiles, a histogram's last bucket is
    /// `+Inf`: the bridge from prometheus_client carries both (JSON has no number for them), and
    /// a value that is neither is refused.
    @Test(.requires(.prometheusClient)) func theParserBridgeCarriesValuesJSONCannotHold() throws {
        let exposition = """
            # TYPE a summary
            a{quantile="0.99"} NaN
            a_count 0
            a_sum 0
            # TYPE b gauge
            b -Inf
            c +Inf

            """
        let output = try SinkPeerTests.python("prometheus_parse.py", [], input: Data(exposition.utf8))
        let samples = try JSONDecoder().decode([PrometheusSample].self, from: Data(output.utf8))
        #expect(samples.first { $0.name == "a" }?.value.isNaN == true, "\(output)")
        #expect(samples.first { $0.name == "b" }?.value == -.infinity, "\(output)")
        #expect(samples.first { $0.name == "c" }?.value == .infinity, "\(output)")
        let odd = Data(#"[{"name":"a","type":"gauge","labels":{},"value":"many"}]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([PrometheusSample].self, from: odd) }
    }

    @Test(.requires(.h2load, .curl, .prometheusClient))
    func statsShowEachOpenConnectionWhileH2loadRunsAndMetricsParse() throws {
        let running = try AdminSink()
        defer { running.stop() }
        // Two connections that stay open for 10 s, 40 requests a second each.
        let load = try PeerProcess(
            "h2load",
            [
                "-c", "2", "-m", "1", "-D", "10", "--rps", "40", "-d", "\(repositoryRoot)/fixtures/poll.json",
                "-H", "apns-topic: com.example.app", "http://127.0.0.1:\(running.port)/3/device/\(Self.token)",
            ]
        )
        defer { _ = load.stop() }
        // Counts reach the statistics at least once a second: both connections show up with
        // requests while they are open.
        var live: [SinkStatsDocument.Connection] = []
        try poll(timeout: .seconds(9), every: .milliseconds(200)) {
            live = try Self.stats(running.adminPort).openConnections
            return live.count == 2 && live.allSatisfy({ $0.requests > 0 })
        }
        try #require(live.count == 2, "open connections: \(live)")
        for connection in live {
            #expect(connection.requests > 0)
            #expect(connection.requests == connection.accepted)
            #expect(connection.peer.hasPrefix("127.0.0.1:"))
        }
        #expect(Set(live.map(\.id)) == [1, 2])

        let result = try load.wait(timeout: .seconds(30))
        // h2load's "requests: 800 total, 800 started, 798 done, 798 succeeded, …": when its
        // duration ends, a request in flight is not counted as succeeded, whether or not it
        // reached the sink, so the sink's count lies between succeeded and started; every
        // other total must equal the sink's own count.
        func count(_ label: String) -> Int? {
            result.output.split(separator: "\n").first { $0.hasPrefix("requests:") }
                .flatMap { line in line.split(separator: ",").first { $0.hasSuffix(" " + label) } }
                .flatMap { Int($0.split(separator: " ").first { Int($0) != nil } ?? "") }
        }
        let started = try #require(count("started"), "\(result.output)")
        let succeeded = try #require(count("succeeded"), "\(result.output)")
        // After the connections close, every request is in the totals and none is open.
        var stats: SinkStatsDocument?
        try poll(timeout: .seconds(5), every: .milliseconds(100)) {
            stats = try Self.stats(running.adminPort)
            return stats?.openConnections.isEmpty == true
        }
        let after = try #require(stats)
        let received = after.requests
        #expect(succeeded <= received && received <= started, "sink \(received), h2load \(result.output)")
        #expect(started - succeeded <= 2, "\(result.output)")
        #expect(after.accepted == received)
        #expect(after.byStatus == ["200": received])
        #expect(after.connections == .init(opened: 2, closed: 2, open: 0))
        #expect(after.digest.count == received)

        let samples = try Self.metrics(running.adminPort)
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        #expect(value("fanout_sink_requests_total") == Double(received))
        #expect(value("fanout_sink_responses_total", ["status": "200", "reason": ""]) == Double(received))
        #expect(value("fanout_sink_connections_opened_total") == 2)
        #expect(value("fanout_sink_connections_open") == 0)
        #expect(value("fanout_sink_payload_bytes_total") == Double(received * 280))
        #expect(samples.first { $0.name == "fanout_sink_requests_total" }?.type == "counter")
    }

    @Test(.requires(.curl, .prometheusClient)) func metricsCountRejectionsByStatusAndReasonAndOnlyGoUp() throws {
        let running = try AdminSink()
        defer { running.stop() }
        let requests = [(Self.token, 200), ("xyz", 400), ("", 400)]
        for (token, _) in requests + requests {
            _ = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "10", "-d", #"{"aps":{}}"#,
                    "-H", "apns-topic: com.example.app", "http://127.0.0.1:\(running.port)/3/device/\(token)",
                ]
            )
        }
        let first = try Self.metrics(running.adminPort)
        let second = try Self.metrics(running.adminPort)
        for samples in [first, second] {
            func value(_ labels: [String: String]) -> Double? {
                samples.first { $0.name == "fanout_sink_responses_total" && $0.labels == labels }?.value
            }
            #expect(value(["status": "200", "reason": ""]) == 2)
            #expect(value(["status": "400", "reason": "BadDeviceToken"]) == 2)
            #expect(value(["status": "400", "reason": "MissingDeviceToken"]) == 2)
        }
        let stats = try Self.stats(running.adminPort)
        #expect(stats.byReason == ["BadDeviceToken": 2, "MissingDeviceToken": 2])
        #expect(stats.byStatus == ["200": 2, "400": 4])
    }

    @Test(.requires(.curl)) func adminRefusesOtherPathsAndMethods() throws {
        let running = try AdminSink()
        defer { running.stop() }
        #expect(try Self.fetch(running.adminPort, "/nope").status == 404)
        #expect(try Self.fetch(running.adminPort, "/stats", method: "POST").status == 405)
        #expect(try Self.fetch(running.adminPort, "/stats?pretty").status == 200)
    }

    /// `/deliveries/ID` is routed: without a fleet, and for an id the fleet never saw, a 404 saying
    /// which (SinkDeviceFleetTests reads a stored-then-delivered history from the same page).
    @Test(.requires(.curl)) func deliveriesAreServedByApnsID() throws {
        let id = "6f4a1c2e-0b3d-4e5f-8a9b-0c1d2e3f4a5b"
        let plain = try AdminSink()
        let without = try Self.fetch(plain.adminPort, "/deliveries/" + id)
        plain.stop()
        #expect(
            without.status == 404
                && without.body
                    == "not found: the sink has no device fleet (fanout sink --device-offline and the like)\n",
            "\(without)"
        )
        var configuration = SinkConfiguration()
        configuration.scenario.devices.offline = 0.3
        let running = try AdminSink(configuration)
        defer { running.stop() }
        let unknown = try Self.fetch(running.adminPort, "/deliveries/" + id)
        #expect(
            unknown.status == 404
                && unknown.body
                    == "not found: \(id) is not among the last 65536 "
                    + "notifications the sink accepted\n",
            "\(unknown)"
        )
    }

    /// A line of the capture file.
    struct Captured: Decodable {
        var token: String
        var status: Int
        var reason: String?
        var topic: String
        var pushType: String
        var apnsID: String
        var payload: JSONValue

        enum CodingKeys: String, CodingKey {
            case token, status, reason, topic
            case pushType = "push_type"
            case apnsID = "apns_id"
            case payload
        }
    }

    static func capturedLines(_ path: String) throws -> [Captured] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try JSONDecoder().decode(Captured.self, from: Data(line.utf8))
        }
    }

    @Test(.requires(.h2)) func captureWritesTheFirstNotificationsAsJSONLines() throws {
        let path = NSTemporaryDirectory() + "fanout-capture-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = SinkConfiguration()
        configuration.capture = try SinkCapture(path: path, selection: .first(25))
        configuration.scenario.unregisteredTokens.insert(String(repeating: "cd", count: 32))
        let running = try AdminSink(configuration)
        var requests: [(headers: [(String, String)], body: String)] = []
        for index in 0..<40 {
            let token = index == 3 ? String(repeating: "cd", count: 32) : String(format: "%064x", index)
            requests.append(
                (SinkHarness.fields(token: token, [("apns-topic", #"com.example."app""#)]), SinkHarness.poll)
            )
        }
        requests.insert((SinkHarness.fields(token: "zz"), SinkHarness.poll), at: 0)  // not a notification
        let answers = try SinkPeerTests.ask(port: running.port, requests)
        running.stop()
        #expect(answers.count == 41)
        let lines = try Self.capturedLines(path)
        #expect(lines.count == 25)
        #expect(configuration.capture?.count == 25)
        let poll = try JSONDecoder().decode(JSONValue.self, from: Data(SinkHarness.poll.utf8))
        for (index, line) in lines.enumerated() {
            #expect(line.token == (index == 3 ? String(repeating: "cd", count: 32) : String(format: "%064x", index)))
            #expect(line.status == (index == 3 ? 410 : 200))
            #expect(line.reason == (index == 3 ? "Unregistered" : nil))
            #expect(line.topic == #"com.example."app""#)
            #expect(line.pushType == "alert")
            #expect(line.apnsID.count == 36)
            #expect(line.payload == poll)
        }
    }

    @Test(.requires(.h2load)) func captureSamplesAShareOfNotifications() throws {
        let path = NSTemporaryDirectory() + "fanout-capture-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = SinkConfiguration()
        configuration.capture = try SinkCapture(path: path, selection: .sample(0.25))
        let running = try AdminSink(configuration)
        let result = try PeerProcess.run(
            "h2load",
            [
                "-n", "4000", "-c", "2", "-m", "50", "-d", "\(repositoryRoot)/fixtures/poll.json",
                "-H", "apns-topic: com.example.app", "http://127.0.0.1:\(running.port)/3/device/\(Self.token)",
            ]
        )
        running.stop()
        #expect(H2loadReport(result.output) == .allSucceeded(4000), "\(result.output)")
        let count = try Self.capturedLines(path).count
        // Binomial(4000, 0.25): mean 1000, σ ≈ 27; ±6σ never fails by chance.
        #expect((840...1160).contains(count), "\(count) captured")
    }
}
