import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// Issue #45: the card's broadcast rules, judged by `fanout sink --output` of a broadcaster
/// nobody here wrote the sink for (`Peers/broadcast_peer.py`, Python's h2). A bad one gets
/// exactly the faults it planted; a good one gets the broadcast rules on its card, all passed.
@Suite(.serialized) struct BroadcastCardTests {
    static let peer = CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/broadcast_peer.py"
    static let broadcastRules = [
        "channels-left-open", "channels-near-limit", "deleted-channel-retried", "liveactivity-over-budget",
        "timestamp-backwards",
    ]

    /// The peer's last line: its answers' statuses and the violations it planted.
    struct Said: Decodable {
        var statuses: [Int]
        var planted: [String: Int]
    }

    typealias Outcome = (card: [String: Int], said: Said, summary: SummaryDocument)

    /// Runs the sink with a budget of 3 priority-10 broadcasts an hour and the peer as its
    /// trigger; the card from summary.json and what the peer said.
    static func run(_ mode: String, into folder: String) throws -> Outcome {
        let trigger = ["python3", Self.peer, mode, "\"$FANOUT_SINK_PORT\"", "3"].joined(separator: " ")
        let result = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder, "--idle-exit", "1s",
                "--duration", "60s", "--liveactivity-priority-budget", "3/h", "--trigger", trigger,
                // The card's counts are exact: a dozen broadcasts are enough for them.
                "--min-measured", "1",
            ],
            timeout: .seconds(90)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let log = try String(contentsOfFile: folder + "/trigger.log", encoding: .utf8)
        let last = try #require(log.split(separator: "\n").last, "\(log)")
        let said = try JSONDecoder().decode(Said.self, from: Data(last.utf8))
        let summary = try CommandRunner.summary(in: folder)
        return (try ProviderUnderTestTests.card(summary), said, summary)
    }

    @Test(.requires(.h2, .jsonschema)) func aBadBroadcasterGetsExactlyWhatItPlanted() throws {
        let folder = NSTemporaryDirectory() + "fanout-bcard-bad-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (card, said, summary) = try Self.run("bad", into: folder)
        // 3 creates, 5 updates, 2 updates, a delete, 2 broadcasts to the deleted channel.
        #expect(said.statuses == [201, 201, 201, 200, 200, 200, 200, 200, 200, 200, 204, 400, 400])
        for rule in Self.broadcastRules {
            #expect(card[rule] == said.planted[rule, default: 0], "\(rule): \(card)")
        }
        #expect(card.filter { !Self.broadcastRules.contains($0.key) }.values.allSatisfy { $0 == 0 }, "\(card)")
        let checks = try #require(summary.provider?.card.checks)
        let backwards = try #require(checks.first { $0.rule == .timestampBackwards })
        #expect(backwards.examples.first?.detail.hasSuffix("after 2000") == true, "\(backwards.examples)")
        let retried = try #require(checks.first { $0.rule == .deletedChannelRetried })
        #expect(
            retried.examples.first?.detail
                == "a broadcast again to a channel answered ChannelNotRegistered (deleted by the provider)"
        )
        #expect(try #require(checks.first { $0.rule == .channelsLeftOpen }).examples.count == 2)
        // Each rule is gateable by its name.
        let gate = try CommandRunner.run(["gate", folder, "--threshold", "violations.timestamp-backwards == 0"])
        #expect(gate.status == 1, "\(gate.standardOutput)")
        let held = try CommandRunner.run(["gate", folder, "--threshold", "violations.channels-near-limit == 0"])
        #expect(held.status == 0, "\(held.standardOutput)")
        // The rules' names are summary.schema.json's.
        let schema = try SummarySchemaCheck.validate([folder + "/summary.json"])
        #expect(schema.status == 0, "\(schema.output)")
    }

    @Test(.requires(.h2)) func aGoodBroadcasterPassesEveryBroadcastRule() throws {
        let folder = NSTemporaryDirectory() + "fanout-bcard-good-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (card, said, _) = try Self.run("good", into: folder)
        #expect(said.statuses.filter { $0 == 400 }.count == 1, "\(said.statuses)")
        for rule in Self.broadcastRules { #expect(card[rule] == 0, "\(rule): \(card)") }
        #expect(card.values.allSatisfy { $0 == 0 }, "\(card)")
    }

    /// Two sinks behind one broadcaster (`fanout merge`): the cards add rule by rule, the
    /// broadcast rules with them.
    @Test(.requires(.h2)) func mergedCardsAddTheBroadcastRules() throws {
        let folder = NSTemporaryDirectory() + "fanout-bcard-merge-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bad = try Self.run("bad", into: folder + "/bad")
        _ = try Self.run("good", into: folder + "/good")
        let merged = try CommandRunner.run(
            ["merge", folder + "/bad", folder + "/good", "--output", folder + "/all", "--max-skew", "1h"]
        )
        #expect(merged.status == 0, "\(merged.standardOutput)\(merged.standardError)")
        let card = try ProviderUnderTestTests.card(try CommandRunner.summary(in: folder + "/all"))
        for rule in Self.broadcastRules { #expect(card[rule] == bad.card[rule], "\(rule): \(card)") }
    }

    @Test(arguments: [
        (
            ["--liveactivity-priority-budget", "3/h"],
            "--liveactivity-priority-budget measures the provider: add --output DIR."
        ),
        (
            ["--output", "/tmp/unused", "--liveactivity-priority-budget", "2.5/h"],
            "--liveactivity-priority-budget takes a whole number of broadcasts per window, like 12/h; got 2.5/h.",
        ),
        (
            ["--output", "/tmp/unused", "--liveactivity-priority-budget", "0/h"],
            "--liveactivity-priority-budget takes a whole number of broadcasts per window, like 12/h; got 0/h.",
        ),
    ])
    func theBudgetOptionIsCheckedClearly(options: [String], message: String) throws {
        let result = try CommandRunner.run(["sink", "--listen", "127.0.0.1:0"] + options)
        #expect(result.status == 64)
        #expect(result.standardError.contains(message), "\(result.standardError)")
    }

    /// A sink that saw no channel request has no broadcast rules on its card.
    @Test func noBroadcastsNoBroadcastRules() throws {
        let folder = NSTemporaryDirectory() + "fanout-bcard-none-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder, "--duration", "1s"],
            timeout: .seconds(30)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let card = try ProviderUnderTestTests.card(try CommandRunner.summary(in: folder))
        #expect(Self.broadcastRules.allSatisfy { card[$0] == nil }, "\(card)")
    }
}
