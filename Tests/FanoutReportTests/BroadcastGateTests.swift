import FanoutResults
import Foundation
import Testing

@testable import FanoutReport

/// `fanout gate` on a broadcast section, and the section's merge and per-broadcast rows.
@Suite struct BroadcastGateTests {
    /// The golden run folder's summary with a sink's broadcast section: 1,000 broadcasts reaching
    /// 9,000,000 devices, 2 channels left open, p99 40 ms, the last 55 ms.
    static func section() -> BroadcastSummary {
        var broadcast = BroadcastSummary(channels: .init(created: 100, deleted: 98, kept: 0, given: 0))
        broadcast.channels.open = 2
        broadcast.broadcasts = 1000
        broadcast.accepted = 1000
        broadcast.devices = .init(subscribers: 10_000_000, delivered: 9_000_000, stored: 500_000, missed: 500_000)
        broadcast.deliveryMs = .init(p50: 20, p90: 30, p99: 40, last: 55)
        broadcast.lastSubscriberMs = .init(p50: 50, p99: 54, max: 55)
        return broadcast
    }

    static func folder(_ broadcast: BroadcastSummary?) throws -> String {
        var summary = try SummaryDocument.read(GoldenFilesTests.golden + "/summary.json")
        summary.broadcast = broadcast
        let folder = NSTemporaryDirectory() + "fanout-broadcast-gate-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try JSONDocument.data(summary).write(to: URL(fileURLWithPath: folder + "/summary.json"))
        return folder
    }

    @Test(
        arguments: [
            ("broadcast.delivered >= 9000000", true), ("broadcast.delivered > 9000000", false),
            ("broadcast.accepted == 1000", true), ("broadcast.open == 0", false), ("broadcast.open <= 2", true),
            ("broadcast.p99 <= 40ms", true), ("broadcast.p99 < 40ms", false), ("broadcast.last < 1s", true),
            ("broadcast.last.p99 < 54ms", false), ("broadcast.last.p99 <= 54ms", true),
        ] as [(String, Bool)]
    )
    func thresholdsPassAndFailAsTheySay(threshold: String, passes: Bool) throws {
        let folder = try Self.folder(Self.section())
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let outcome = try Gate(run: folder, baseline: nil, thresholds: [threshold], file: nil).evaluate()
        #expect(outcome.verdicts.map(\.passed) == [passes], "\(threshold): \(outcome.verdicts.map(\.measured))")
    }

    /// A sender's folder has broadcasts but no devices: gating it on them says so.
    @Test func aFolderWithoutTheFigureIsRefusedByName() throws {
        var sender = BroadcastSummary(channels: .init(created: 3, deleted: 3))
        sender.broadcasts = 30
        sender.accepted = 30
        let folder = try Self.folder(sender)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(
            try Gate(run: folder, baseline: nil, thresholds: ["broadcast.accepted == 30"], file: nil).evaluate().status
                == .passed
        )
        let error = #expect(throws: GateError.self) {
            try Gate(run: folder, baseline: nil, thresholds: ["broadcast.delivered > 0"], file: nil)
        }
        #expect(
            error?.description
                == "broadcast.delivered > 0: broadcast.delivered is measured with broadcasts (the devices and times by "
                + "fanout sink --output); \(folder) has no such figure in its broadcast section"
        )
        let none = #expect(throws: GateError.self) {
            try Gate(run: GoldenFilesTests.golden, baseline: nil, thresholds: ["broadcast.accepted > 0"], file: nil)
        }
        #expect(none != nil)
    }

    @Test func theSectionRoundTripsAndMerges() throws {
        let folder = try Self.folder(Self.section())
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try SummaryDocument.read(folder + "/summary.json").broadcast == Self.section())
        var other = Self.section()
        other.rejected = ["ChannelNotRegistered": 3]
        other.deliveryMs?.p99 = 70
        let merged = try #require(BroadcastSummary.merged([Self.section(), nil, other]))
        #expect(
            merged.channels
                == {
                    var channels = BroadcastSummary.Channels(created: 200, deleted: 196, kept: 0, given: 0)
                    channels.open = 4
                    return channels
                }()
        )
        #expect(merged.broadcasts == 2000)
        #expect(merged.rejected == ["ChannelNotRegistered": 3])
        #expect(merged.devices?.delivered == 18_000_000)
        #expect(merged.deliveryMs == .init(p50: 20, p90: 30, p99: 70, last: 55))
        #expect(BroadcastSummary.merged([nil, nil]) == nil)
    }

    @Test func aRowRoundTripsThroughItsLine() {
        let row = BroadcastRow(
            broadcast: 7,
            acceptedMs: 12.5,
            channel: "q7nE0wM1pS2o3Lr9Yx2bUg==",
            devices: .init(subscribers: 10, delivered: 8, stored: 1, missed: 0, unreachable: 1, fromStorage: 1),
            p50Ms: 1,
            p99Ms: 2,
            storageP50Ms: 2.5,
            storageP99Ms: 3,
            lastMs: 3.25
        )
        #expect(row.line == "7,12.500,q7nE0wM1pS2o3Lr9Yx2bUg==,10,8,1,0,1,1,0,0,0,1.000,2.000,2.500,3.000,3.250")
        #expect(BroadcastRow(line: row.line) == row)
        #expect(BroadcastRow(line: BroadcastRow.header) == nil)
    }

    @Test func theTextSpeaksOfChannelsBroadcastsAndDevices() {
        let lines = Self.section().lines
        #expect(lines[0] == "broadcast channels: 100 created, 98 deleted, 0 kept, 2 open")
        #expect(lines[1] == "broadcasts: 1,000 sent, 1,000 accepted, 0 rejected")
        #expect(lines[2].hasPrefix("devices reached: 9,000,000 delivered of 10,000,000 subscribers"))
    }
}
