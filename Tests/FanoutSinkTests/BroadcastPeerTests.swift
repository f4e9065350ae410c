import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutChannels
@testable import FanoutSink

/// Broadcast channels on a real socket, asked by clients nobody here wrote: curl
/// (`--http2-prior-knowledge`) and Python's h2 create, read, list, broadcast on and delete a
/// channel, and the 10,001st channel of an app is refused.
@Suite(.serialized) struct BroadcastPeerTests {
    typealias Checks = BroadcastChecksTests

    static func curl(_ port: Int, _ method: String, _ path: String, headers: [String], body: String?) throws -> String {
        var arguments = [
            "-s", "--http2-prior-knowledge", "--max-time", "20", "-X", method, "-D", "-",
            "-w", "%{http_version} %{http_code}",
        ]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        let result = try PeerProcess.run("curl", arguments + ["http://127.0.0.1:\(port)\(path)"])
        #expect(result.status == 0, "\(result.errors)")
        return result.output
    }

    /// The value of response header `name` in curl's `-D -` output.
    static func header(_ name: String, in output: String) -> String? {
        for line in output.split(whereSeparator: \.isNewline) where line.lowercased().hasPrefix(name + ":") {
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    @Test(.requires(.curl)) func curlCreatesReadsListsBroadcastsAndDeletes() throws {
        var configuration = SinkConfiguration()
        configuration.scenario.channelSubscribers = .fixed(10_000)
        let running = try SinkPeerTests.RunningSink(configuration)
        defer { running.stop() }
        let port = running.port
        let created = try Self.curl(
            port,
            "POST",
            Checks.channels,
            headers: ["apns-request-id: \(Checks.requestID)"],
            body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#
        )
        #expect(created.hasSuffix("2 201"), "\(created)")
        #expect(Self.header("apns-request-id", in: created) == Checks.requestID)
        let channel = try #require(Self.header("apns-channel-id", in: created), "\(created)")
        let read = try Self.curl(port, "GET", Checks.channels, headers: ["apns-channel-id: \(channel)"], body: nil)
        #expect(read.hasSuffix(#"{"message-storage-policy":1,"push-type":"LiveActivity"}2 200"#), "\(read)")
        let list = try Self.curl(port, "GET", "/1/apps/\(Checks.app)/all-channels", headers: [], body: nil)
        #expect(list.hasSuffix(#"{"channels":["\#(channel)"]}2 200"#), "\(list)")
        let broadcastHeaders = [
            "apns-channel-id: \(channel)", "apns-push-type: liveactivity", "apns-priority: 10",
        ]
        let sent = try Self.curl(port, "POST", Checks.broadcasts, headers: broadcastHeaders, body: Checks.update)
        #expect(sent.hasSuffix("2 200"), "\(sent)")
        #expect(Self.header("apns-request-id", in: sent)?.count == 36)
        let deleted = try Self.curl(
            port,
            "DELETE",
            Checks.channels,
            headers: ["apns-channel-id: \(channel)"],
            body: nil
        )
        #expect(deleted.hasSuffix("2 204"), "\(deleted)")
        let again = try Self.curl(port, "POST", Checks.broadcasts, headers: broadcastHeaders, body: Checks.update)
        #expect(again.hasSuffix(#"{"reason":"ChannelNotRegistered"}2 400"#), "\(again)")
        let counts = try #require(running.sink.broadcastCounts)
        #expect((counts.created, counts.deleted, counts.broadcasts, counts.delivered) == (1, 1, 1, 10_000))
        #expect(running.sink.statistics.json(broadcast: counts).contains(#""broadcast":{"#))
    }

    @Test(.requires(.h2)) func pythonH2CreatesReadsListsBroadcastsAndDeletes() throws {
        let running = try SinkPeerTests.RunningSink()
        defer { running.stop() }
        let create: (headers: [(String, String)], body: String) = (
            Checks.fields("POST", Checks.channels), #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#
        )
        let created = try SinkPeerTests.ask(port: running.port, [create])
        #expect(created.map(\.status) == [201])
        let channel = try #require(created.first?.apns_channel_id)
        let id = ("apns-channel-id", Optional(channel))
        let answers = try SinkPeerTests.ask(
            port: running.port,
            [
                (Checks.fields("GET", Checks.channels, [id]), ""),
                (Checks.fields("GET", "/1/apps/\(Checks.app)/all-channels"), ""),
                (Checks.broadcast(channel: channel, [("apns-expiration", "0")]), Checks.update),
                (Checks.fields("DELETE", Checks.channels, [id]), ""),
                (Checks.broadcast(channel: channel), Checks.update),
                (Checks.broadcast(channel: channel, [("apns-channel-id", nil)]), Checks.update),
                (Checks.broadcast(channel: "not base64!"), Checks.update),
            ]
        )
        #expect(answers.map(\.status) == [200, 200, 200, 204, 400, 400, 400])
        #expect(answers[0].message_storage_policy == 0)
        #expect(answers[1].channels == [channel])
        #expect(answers.allSatisfy { $0.apns_request_id?.count == 36 })
        #expect(
            answers.map(\.reason) == [nil, nil, nil, nil, "ChannelNotRegistered", "MissingChannelId", "BadChannelId"]
        )
    }

    @Test(.requires(.h2)) func theTenThousandAndFirstChannelIsRefused() throws {
        let running = try SinkPeerTests.RunningSink()
        defer { running.stop() }
        let create: (headers: [(String, String)], body: String) = (
            Checks.fields("POST", Checks.channels), #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#
        )
        let answers = try SinkPeerTests.ask(
            port: running.port,
            Array(repeating: create, count: ChannelStore.limitPerApp + 1)
        )
        #expect(answers.count == ChannelStore.limitPerApp + 1)
        #expect(answers.dropLast().allSatisfy { $0.status == 201 && $0.apns_channel_id != nil })
        #expect(answers.last?.status == 400)
        #expect(answers.last?.reason == "CannotCreateChannelConfig")
        #expect(Set(answers.compactMap(\.apns_channel_id)).count == ChannelStore.limitPerApp)
    }
}
