import FanoutResults
import FanoutRun
import FanoutTestSupport
import Foundation
import Testing

/// `fanout send --broadcast` against `fanout sink`: channels created, updates broadcast, the
/// channels deleted, the deliveries counted in the sink's folder and gated.
@Suite(.serialized) struct BroadcastSendCommandTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-broadcast-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A `fanout send --broadcast` that keeps its channels (`send`'s options added), to a sink
    /// started with `sink`'s options that writes `FOLDER/sink` 3 s after the last request; the
    /// sender's folder is `FOLDER/run`. Both end with status 0; the sink's `broadcast` section.
    /// A dozen broadcasts are what these measure (their devices are thousands): both ends are
    /// told so (`--min-measured 1`).
    static func keptChannels(in folder: String, sink options: [String], send: [String]) throws -> BroadcastSummary {
        let (sink, port) = try CommandRunner.sink(
            options + ["--output", folder + "/sink", "--idle-exit", "3s", "--min-measured", "1"]
        )
        defer { sink.stop() }
        let sent = try CommandRunner.run(
            [
                "send", "--verbose", "--broadcast", "--endpoint", "http://127.0.0.1:\(port)", "--topic",
                "com.example.app",
                "--template", "fixtures/liveactivity-update.json", "--keep-channels", "--output", folder + "/run",
                "--min-measured", "1",
            ] + send,
            timeout: .seconds(120)
        )
        #expect(sent.status == 0, "\(sent.standardOutput)\(sent.standardError)")
        let ended = try sink.wait(timeout: .seconds(60))
        #expect(ended.status == 0, "\(ended.errors)")
        return try #require(try CommandRunner.summary(in: folder + "/sink").broadcast)
    }

    /// 100 channels × 10 updates to a sink whose channels have 10,000 subscribers each: 1,000
    /// broadcasts, 10,000,000 device deliveries in the sink's folder with a row per broadcast,
    /// no channel left open, and the gate on the deliveries passes one threshold and fails
    /// another.
    @Test func hundredChannelsTenUpdatesReachTenMillionDevices() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(
            ["--channel-subscribers", "10000", "--output", folder + "/sink", "--idle-exit", "3s"]
        )
        defer { sink.stop() }
        let send = try CommandRunner.run(
            [
                "send", "--verbose", "--broadcast", "--endpoint", "http://127.0.0.1:\(port)", "--topic",
                "com.example.app",
                "--channels", "100", "--updates", "10", "--template", "fixtures/liveactivity-update.json",
                "--priority", "5", "--apns-id", "random", "--output", folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(send.status == 0, "\(send.standardOutput)\(send.standardError)")
        #expect(
            lines(of: send.standardOutput, keyed: "broadcast channels: ") == [
                "broadcast channels: 100 created, 100 deleted, 0 kept"
            ],
            "\(send.standardOutput)"
        )
        let run = try CommandRunner.summary(in: folder + "/run")
        let sent = try #require(run.broadcast, "no broadcast section in the sender's summary.json")
        #expect(sent.channels == .init(created: 100, deleted: 100, kept: 0, given: 0))
        #expect(sent.broadcasts == 1000)
        #expect(sent.accepted == 1000)
        #expect(sent.rejected.isEmpty, "\(sent.rejected)")
        #expect(run.accepted == 1000)

        let ended = try sink.wait(timeout: .seconds(60))
        #expect(ended.status == 0, "\(ended.errors)")
        let summary = try CommandRunner.summary(in: folder + "/sink")
        let reached = try #require(summary.broadcast, "no broadcast section in the sink's summary.json")
        #expect(reached.broadcasts == 1000)
        #expect(reached.devices?.delivered == 10_000_000)
        #expect(reached.devices?.subscribers == 10_000_000)
        #expect(reached.channels.created == 100)
        #expect(reached.channels.deleted == 100)
        #expect(reached.channels.open == 0)
        #expect(reached.deliveryMs == .init(p50: 0, p90: 0, p99: 0, last: 0))
        #expect(reached.broadcastsLeftOut == 0)
        // A well-behaved broadcaster: one connection (each channel's updates in order), its
        // channels deleted, creations and deletions on connections of 100 requests each.
        let card = try #require(summary.provider?.card)
        #expect(card.passed, "\(card.checks.filter { !$0.passed }.map { "\($0.rule.rawValue) \($0.count)" })")
        let lines = try String(contentsOfFile: folder + "/sink/broadcasts.csv", encoding: .utf8)
            .split(separator: "\n").map(String.init)
        #expect(lines.first == BroadcastRow.header)
        let rows = lines.dropFirst().compactMap(BroadcastRow.init(line:))
        #expect(rows.count == 1000)
        #expect(rows.allSatisfy { $0.devices.delivered == 10_000 && $0.lastMs == 0 })
        #expect(Set(rows.map(\.channel)).count == 100)

        let passes = try CommandRunner.run(
            [
                "gate", folder + "/sink", "--threshold", "broadcast.delivered >= 10000000", "--threshold",
                "broadcast.open == 0",
            ]
        )
        #expect(passes.status == 0, "\(passes.standardOutput)\(passes.standardError)")
        let fails = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "broadcast.delivered > 10000000"])
        #expect(fails.status == 1, "\(fails.standardOutput)\(fails.standardError)")
    }

    /// With the device fleet's delay, each broadcast's times are the delay's quantiles: a fixed
    /// 40 ms delay puts every percentile and the last at 40 ms, and the gate reads them.
    @Test func aFleetDelayGivesEachBroadcastItsTimes() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reached = try Self.keptChannels(
            in: folder,
            sink: ["--channel-subscribers", "500", "--device-delay", "fixed:40ms", "--device-offline", "10%"],
            send: ["--channels", "4", "--updates", "3", "--storage-policy", "0"]
        )
        let run = try CommandRunner.summary(in: folder + "/run")
        #expect(run.broadcast?.channels == .init(created: 4, deleted: 0, kept: 4, given: 0))
        #expect(reached.channels.open == 4)
        #expect(reached.devices == .init(subscribers: 6000, delivered: 5400, stored: 0, missed: 600, unreachable: 0))
        #expect(reached.deliveryMs == .init(p50: 40, p90: 40, p99: 40, last: 40))
        #expect(reached.lastSubscriberMs == .init(p50: 40, p99: 40, max: 40))
        let passes = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "broadcast.last.p99 <= 40ms"])
        #expect(passes.status == 0, "\(passes.standardOutput)\(passes.standardError)")
        let fails = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "broadcast.open == 0"])
        #expect(fails.status == 1, "\(fails.standardOutput)\(fails.standardError)")
    }

    /// Offline subscribers come back (`--device-return`): each channel's last update, kept
    /// stored, reaches every one of them from storage before the sink's folder is written
    /// (returns within 1 s, the folder 3 s after the last request), timed within that second;
    /// the earlier updates' stored, replaced within milliseconds, are mostly discarded; every
    /// stored update's fate adds up.
    @Test func storedUpdatesReachTheSubscribersWhoComeBack() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let reached = try Self.keptChannels(
            in: folder,
            sink: ["--channel-subscribers", "1000", "--device-offline", "50%", "--device-return", "uniform:0s-1s"],
            send: ["--channels", "2", "--updates", "3"]
        )
        let devices = try #require(reached.devices)
        #expect(devices.stored > 0 && devices.missed == 0)
        #expect(devices.stored == devices.fromStorage + devices.discarded + devices.expired + devices.stillStored)
        #expect(devices.stillStored == 0 && devices.expired == 0)
        let text = try String(contentsOfFile: folder + "/sink/" + BroadcastRow.fileName, encoding: .utf8)
        let rows = text.split(separator: "\n").dropFirst().compactMap { BroadcastRow(line: String($0)) }
        #expect(rows.count == 6)
        for channel in Set(rows.map(\.channel)) {
            let last = try #require(rows.last { $0.channel == channel })
            #expect(last.devices.stored > 0 && last.devices.fromStorage == last.devices.stored, "\(last)")
            #expect(last.storageP50Ms > 0 && last.lastMs <= 1000, "\(last)")
        }
        let storage = try #require(reached.storageMs)
        #expect(storage.p50 > 0 && storage.last <= 1000, "\(storage)")
        let gate = try CommandRunner.run([
            "gate", folder + "/sink", "--threshold", "broadcast.from_storage > 0", "--threshold",
            "broadcast.storage.p99 <= 1s",
        ])
        #expect(gate.status == 0, "\(gate.standardOutput)\(gate.standardError)")
        let fails = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "broadcast.storage.p99 < 1ms"])
        #expect(fails.status == 1, "\(fails.standardOutput)\(fails.standardError)")
    }

    /// A channel-ids file with a bad line is refused with its place and what is wrong, before
    /// anything is sent.
    @Test func aBadChannelIDLineIsRefusedWithItsPlace() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "q7nE0wM1pS2o3Lr9Yx2bUg==\n\nnot*base64!\n".write(
            toFile: folder + "/ids.txt",
            atomically: true,
            encoding: .utf8
        )
        let result = try CommandRunner.run([
            "send", "--verbose", "--broadcast", "--endpoint", "http://127.0.0.1:1", "--topic", "com.example.app",
            "--channel-ids", folder + "/ids.txt", "--template", "fixtures/liveactivity-update.json",
            "--output", folder + "/run",
        ])
        #expect(result.status != 0)
        #expect(result.standardError.contains(folder + "/ids.txt:3: a channel id is base64"), "\(result.standardError)")
    }

    @Test func broadcastNeedsABundleID() throws {
        let result = try CommandRunner.run([
            "send", "--verbose", "--broadcast", "--endpoint", "http://127.0.0.1:1", "--channels", "3", "--template",
            "fixtures/liveactivity-update.json",
        ])
        #expect(result.status == 64, "\(result.standardError)")
        #expect(
            errorLine(of: result.standardError)
                == "error: --broadcast needs the app's bundle id: --topic com.example.app (or topic in --scenario).",
            "\(result.standardError)"
        )
    }

    @Test func broadcastDoesNotTakeTokens() throws {
        let result = try CommandRunner.run([
            "send", "--verbose", "--broadcast", "--endpoint", "http://127.0.0.1:1", "--channels", "3", "--topic",
            "com.example.app",
            "--tokens", "fixtures/poll.json", "--template", "fixtures/liveactivity-update.json",
        ])
        #expect(result.status == 64, "\(result.standardError)")
        #expect(
            errorLine(of: result.standardError)
                == "error: --broadcast sends to channels, not tokens: --tokens and --generate do not go with it.",
            "\(result.standardError)"
        )
    }

    /// Synthetic channels are not created on Apple's production management host without
    /// --production, whichever endpoint names it.
    @Test func applesProductionManagementHostNeedsProduction() throws {
        let result = try CommandRunner.run([
            "send", "--verbose", "--broadcast", "--endpoint", "https://api.sandbox.push.apple.com",
            "--channels-endpoint",
            "https://api-manage-broadcast.push.apple.com:2196", "--channels", "3", "--topic", "com.example.app",
            "--template", "fixtures/liveactivity-update.json",
        ])
        #expect(result.status == 64, "\(result.standardError)")
        #expect(
            errorLine(of: result.standardError) == "error: "
                + (SendJob.Endpoint(tls: true, host: "api-manage-broadcast.push.apple.com", port: 443)
                    .refusal(generatedTokens: false, production: false) ?? ""),
            "\(result.standardError)"
        )
    }
}
