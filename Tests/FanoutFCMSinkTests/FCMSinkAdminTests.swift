import FanoutFCM
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutFCMSink

/// The FCM sink's admin endpoint read by curl while it serves, its `/metrics` linted by
/// Prometheus' own promtool: every count is the one the sends planted, in FCM's words.
@Suite(.requires(.curl)) struct FCMSinkAdminTests {
    /// curl's status and body for one request.
    static func curl(_ arguments: [String]) throws -> (status: String, body: String) {
        let result = try PeerProcess.run(
            "curl",
            ["-sS", "--max-time", "20", "-w", "\n%{http_code}"] + arguments,
            timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    /// Eight requests of known fates: three delivered (over both protocols), one validate_only,
    /// one to a token listed unregistered, one with two targets, one without a bearer, and a GET
    /// of the token endpoint (404, a refusal of the token endpoint's, no send).
    static func plant(on port: Int) throws {
        let url = "http://127.0.0.1:\(port)/v1/projects/fanout-test/messages:send"
        let bearer = ["-H", "authorization: Bearer anything"]
        let sends: [(body: String, http: String, bearer: [String], status: String)] = [
            (#"{"message":{"token":"tok-a"}}"#, "--http2-prior-knowledge", bearer, "200"),
            (#"{"message":{"token":"tok-b"}}"#, "--http2-prior-knowledge", bearer, "200"),
            (#"{"message":{"token":"tok-c"}}"#, "--http1.1", bearer, "200"),
            (#"{"validate_only":true,"message":{"token":"tok-d"}}"#, "--http1.1", bearer, "200"),
            (#"{"message":{"token":"gone"}}"#, "--http1.1", bearer, "404"),
            (#"{"message":{"token":"a","topic":"b"}}"#, "--http1.1", bearer, "400"),
            (#"{"message":{"token":"tok-e"}}"#, "--http1.1", [], "401"),
        ]
        for send in sends {
            let answer = try curl([send.http, "-d", send.body, url] + send.bearer)
            #expect(answer.status == send.status, "\(send.body): \(answer.body)")
        }
        let get = try curl(["--http1.1", "http://127.0.0.1:\(port)/token"])
        #expect(get.status == "404", "\(get.body)")
    }

    @Test func statsCountWhatTheSendsPlantedByOutcomeStatusAndCode() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: false) {
            $0.unregisteredTokens = [FCMTokenFate.hash("gone")]
        }
        defer { running.stop() }
        let admin = try FCMSinkAdmin(sink: running.sink, host: "127.0.0.1", port: 0)
        defer { admin.close() }
        try Self.plant(on: running.port)
        let (status, body) = try Self.curl(["http://127.0.0.1:\(admin.localAddress.port!)/stats"])
        #expect(status == "200")
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(stats["requests"] as? Int == 8)
        // --expect's count: delivered for a device, not the validate_only send's 200.
        #expect(stats["accepted"] as? Int == 3)
        #expect(stats["by_protocol"] as? [String: Int] == ["h2": 2, "http/1.1": 6])
        #expect(
            stats["by_outcome"] as? [String: Int]
                == [
                    "delivered": 3, "validated": 1, "unregistered": 1, "invalid_argument": 1, "unauthenticated": 1,
                    "token_refused": 1,
                ]
        )
        // The statuses written: the token endpoint's refusal of a GET is a 404.
        #expect(stats["by_status"] as? [String: Int] == ["200": 4, "404": 2, "400": 1, "401": 1])
        // A missing bearer's 401 carries no FCM code: a sender cannot classify it as one.
        #expect(stats["by_code"] as? [String: Int] == ["UNREGISTERED": 1, "INVALID_ARGUMENT": 1])
        // One connection a curl; none open once each has ended.
        let connections = try #require(stats["connections"] as? [String: Any])
        #expect(connections["opened"] as? Int == 8)
        #expect(connections["opened_by_protocol"] as? [String: Int] == ["h2": 2, "http/1.1": 6])
        // The quota counts what passed the bearer, 4xx answers too: all but the 401.
        let quota = try #require(stats["quota"] as? [String: Any])
        #expect(quota["counted"] as? Int == 6)
        #expect(quota["messages"] as? Int == 600_000)
        #expect((quota["seconds_left"] as? Double).map { $0 > 0 && $0 <= 60 } == true)
        let digest = try #require(stats["digest"] as? [String: Any])
        #expect(digest["count"] as? Int == 4, "the 200s with a token: three delivered, one validated")
        #expect(stats["devices"] == nil, "no device fleet")
        let other = try Self.curl(["http://127.0.0.1:\(admin.localAddress.port!)/deliveries/x"])
        #expect(other.status == "404")
        #expect(other.body == "not found: try /stats or /metrics\n")
    }

    @Test(.requires(.promtool)) func metricsPassPromtoolAndCarryTheSameCounts() throws {
        let running = try FCMSinkFixture.Running(tls: false, account: false) {
            $0.unregisteredTokens = [FCMTokenFate.hash("gone")]
            $0.devices.offline = 0.5
        }
        defer { running.stop() }
        let admin = try FCMSinkAdmin(sink: running.sink, host: "127.0.0.1", port: 0)
        defer { admin.close() }
        try Self.plant(on: running.port)
        let (status, body) = try Self.curl(["http://127.0.0.1:\(admin.localAddress.port!)/metrics"])
        #expect(status == "200")
        let remarks = try promtoolRemarks(body + "\n")
        #expect(remarks == nil, "\(remarks ?? "")")
        let samples = Set(body.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        for line in [
            #"fanout_fcm_sink_requests_total{protocol="h2"} 2"#,
            #"fanout_fcm_sink_requests_total{protocol="http/1.1"} 6"#,
            #"fanout_fcm_sink_responses_total{status="200"} 4"#,
            #"fanout_fcm_sink_responses_total{status="404"} 2"#,
            #"fanout_fcm_sink_responses_total{status="400"} 1"#,
            #"fanout_fcm_sink_responses_total{status="401"} 1"#,
            #"fanout_fcm_sink_outcomes_total{outcome="delivered",code=""} 3"#,
            #"fanout_fcm_sink_outcomes_total{outcome="unregistered",code="UNREGISTERED"} 1"#,
            #"fanout_fcm_sink_outcomes_total{outcome="invalid_argument",code="INVALID_ARGUMENT"} 1"#,
            #"fanout_fcm_sink_outcomes_total{outcome="token_refused",code=""} 1"#,
            "fanout_fcm_sink_accepted_total 3",
            "fanout_fcm_sink_quota_counted 6.0",
            // The devices behind the sink, in FCM's words: the three delivered were received.
            #"fanout_fcm_sink_device_notifications_total{category="Received by FCM"} 3"#,
        ] {
            #expect(samples.contains(line), "\(line) not in:\n\(body)")
        }
        // Every category in FCM's words (with Fanout's two), none in Apple's.
        let prefix = #"fanout_fcm_sink_device_notifications_total{category=""#
        let categories = samples.filter { $0.hasPrefix(prefix) }.compactMap {
            $0.dropFirst(prefix.count).split(separator: "\"").first.map(String.init)
        }
        #expect(
            Set(categories) == [
                "Received by FCM", "Delivered to the device", "Delivered to the device (kept first)",
                "Kept – device offline", "Kept – Doze", "Discarded – app uninstalled",
                "Discarded – app uninstalled (kept first)", "Discarded – ttl expired",
                "Discarded – notifications disabled", "Discarded – notifications disabled (kept first)",
                "Discarded – Replaced", "Forgotten",
            ]
        )
    }
}
