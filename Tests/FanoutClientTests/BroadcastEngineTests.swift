import FanoutAPNs
import FanoutEndpoint
import FanoutHPACK
import FanoutPayload
import FanoutSink
import FanoutTokens
import Foundation
import NIOPosix
import Testing

@testable import FanoutClient

/// Broadcasts through the load engine: the channel id in `apns-channel-id`, the app in the
/// path, against a mock APNs in this process that counts what each broadcast reached.
struct BroadcastEngineTests {
    static let update = #"{"aps":{"timestamp":"{{field.1:int}}","event":"update","content-state":{"score":"{{seq}}"}}}"#

    /// Five channels created over the management client, three updates broadcast to each by the
    /// engine, every channel deleted: the sink counted 15 broadcasts of 7 subscribers and has
    /// no channel open; a second deletion is ChannelNotRegistered.
    @Test func channelsCreatedBroadcastToAndDeleted() throws {
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? sinkGroup.syncShutdownGracefully() }
        var sinkConfiguration = SinkConfiguration()
        sinkConfiguration.scenario.channelSubscribers = .fixed(7)
        let sink = try Sink(host: "127.0.0.1", port: 0, group: sinkGroup, configuration: sinkConfiguration)
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: sink.localAddress.port!,
            headers: try NotificationHeaders(
                topic: "com.example.app.push-type.liveactivity",
                pushType: .liveactivity,
                expiration: 0
            ),
            encoder: PayloadEncoder(
                template: try PayloadTemplate(json: Array(Self.update.utf8), options: .init(pushType: .liveactivity))
            )
        )
        configuration.endpoint.broadcastApp = "com.example.app"
        configuration.shape.connections = 2
        configuration.shape.deadline = .seconds(60)
        let management = ChannelManagement(connection: configuration, app: "com.example.app")
        let created = management.perform(Array(repeating: .create(storagePolicy: 1), count: 5))
        #expect(created.failure == nil)
        #expect(created.answers.map(\.status) == Array(repeating: 201, count: 5))
        let ids = created.answers.compactMap(\.channel)
        #expect(Set(ids).count == 5)

        let tokens = try TokenStream(.channels(ChannelRounds(channels: ids, rounds: 3, firstTimestamp: 1_732_000_000)))
        let senderGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? senderGroup.syncShutdownGracefully() }
        let report = LoadEngine(configuration: configuration, tokens: tokens, group: senderGroup).run()
        #expect(report.snapshot.accepted == 15, "\(report.snapshot.rejected)")
        let counts = try #require(sink.broadcastCounts)
        #expect(counts.broadcasts == 15)
        #expect(counts.delivered == 105)

        let deleted = management.perform(ids.map { .delete(channel: $0) })
        #expect(deleted.answers.map(\.status) == Array(repeating: 204, count: 5))
        #expect(sink.broadcastCounts?.open == 0)
        let again = management.perform([.delete(channel: ids[0])])
        // Seen once in a full suite under load without it: the outcome says why (status, failure).
        #expect(again.answers.first?.reason == "ChannelNotRegistered", "\(again)")
        sink.drain(grace: .seconds(1))
    }

    /// Nothing listening: every request is unanswered and the outcome says why.
    @Test func anUnreachableManagementEndpointIsSaid() throws {
        var configuration = LoadConfiguration(
            host: "127.0.0.1",
            port: 1,
            headers: try NotificationHeaders(topic: "com.example.app"),
            encoder: PayloadEncoderFixture.encoder
        )
        configuration.endpoint.connectTimeout = .seconds(2)
        let outcome = ChannelManagement(connection: configuration, app: "com.example.app")
            .perform([.create(storagePolicy: 0)])
        #expect(outcome.answers.map(\.status) == [0])
        #expect(outcome.failure?.hasPrefix("cannot connect") == true, "\(outcome.failure ?? "")")
    }
}

/// An encoder for tests that need one and do not send its payload.
enum PayloadEncoderFixture {
    static let encoder = PayloadEncoder(template: try! PayloadTemplate(json: Array(SinkRun.poll.utf8)))
}
