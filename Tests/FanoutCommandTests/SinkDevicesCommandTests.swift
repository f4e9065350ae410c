import FanoutAPNs
import FanoutPush
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink` with its device fleet, driven by `fanout send` (issue #51): the provider card
/// learns from the fleet, and the sender keeps a sample of the ids it was answered with.
@Suite(.serialized) struct SinkDevicesCommandTests {
    static func folder() -> String { NSTemporaryDirectory() + "fanout-devices-\(UUID().uuidString)" }

    /// A send of `count` to a sink with 30% of its devices offline (back over 0–120 s), with
    /// the send's `headers`; the sink's summary.json.
    static func fanOut(_ count: Int, headers: [String], into folder: String) throws -> SummaryDocument {
        let (sink, port) = try CommandRunner.sink(
            [
                "--no-auth", "--expect", "\(count)", "--output", folder + "/sink", "--device-offline", "30%",
                "--device-return", "uniform:0s-120s",
            ]
        )
        defer { sink.stop() }
        let send = try CommandRunner.send(
            to: port,
            ["--generate", "\(count)", "--connections", "2", "--output", folder + "/send"] + headers,
            timeout: .seconds(120)
        )
        #expect(send.status == 0, "\(send.standardError)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        return try CommandRunner.summary(in: folder + "/sink")
    }

    /// `apns-expiration: 0` to a fleet 30% offline: the card counts every notification an offline
    /// device lost (all of Discarded – Expired here), with examples naming their apns-id, and a
    /// gate on it fails; the same fan-out with an expiration date has a clean card and passes.
    @Test(.requires(.jsonschema)) func theCardCountsExpirationZeroToOfflineDevices() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let count = 2_000
        let lost = try Self.fanOut(count, headers: ["--expiration", "0"], into: folder + "/zero")
        let delivery = try #require(lost.delivery)
        let card = try #require(lost.provider).card
        let rules = card.checks.map(\.rule)
        for rule in [ProviderRule.expirationZeroOffline, .staleDelivery, .backgroundOverBudget] {
            #expect(rules.contains(rule), "\(rules)")
        }
        let check = try #require(card.checks.first { $0.rule == .expirationZeroOffline })
        #expect(check.count == delivery.discardedExpired && !check.passed)
        #expect(abs(Double(check.count) / Double(count) - 0.3) < 0.06, "\(check.count) of \(count)")
        #expect(check.examples.count == 5)
        #expect(check.examples.allSatisfy { $0.apnsID?.count == 36 && $0.token.isEmpty })
        #expect(!card.passed && card.violations == check.count)
        // The folder's page opens on the card's verdict, not a green VALID beside it (newcomer
        // pass, issue 64).
        let page = HTMLDocument(try String(contentsOfFile: folder + "/zero/sink/report.html", encoding: .utf8))
        #expect(
            page.elements("p", class: "verdict-failed").map(\.text) == [
                "FAILED the provider failed the conformance card: \(card.violations.formatted()) violations (its table below)"
            ]
        )
        let failing = try CommandRunner.run(
            ["gate", folder + "/zero/sink", "--threshold", "violations.expiration-zero-offline == 0"]
        )
        #expect(failing.status == 1, "\(failing.standardOutput)\(failing.standardError)")

        let inAnHour = Int(Date().timeIntervalSince1970) + 3600
        let kept = try Self.fanOut(count, headers: ["--expiration", "\(inAnHour)"], into: folder + "/dated")
        let keptCard = try #require(kept.provider).card
        #expect(keptCard.passed, "\(keptCard.checks.filter { !$0.passed })")
        #expect(keptCard.count(.expirationZeroOffline) == 0)
        let passing = try CommandRunner.run(
            ["gate", folder + "/dated/sink", "--threshold", "violations.expiration-zero-offline == 0"]
        )
        #expect(passing.status == 0, "\(passing.standardOutput)\(passing.standardError)")
        let schema = try SummarySchemaCheck.validate([folder + "/zero/sink/summary.json"])
        #expect(schema.status == 0, "\(schema.output)")
    }

    /// A page of `/deliveries/ID`, as the sink writes it.
    struct History: Decodable {
        struct Event: Decodable { var state: String }
        var events: [Event]
    }

    /// `fanout send --apns-id timed` against a sink with the fleet on (every device offline):
    /// answer-ids.json holds one answer in 16 per connection, each with its apns-unique-id and
    /// its apns-id, and the sink shows each sampled notification's history under that apns-id.
    @Test(.requires(.curl)) func sendKeepsASampleOfTheIDsItWasAnsweredWith() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--no-auth", "--device-offline", "100%"]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let admin = try sink.announcedPort(after: "admin on ")
        let count = 2_000
        let send = try CommandRunner.send(
            to: port,
            ["--generate", "\(count)", "--connections", "1", "--apns-id", "timed", "--output", folder + "/send"],
            timeout: .seconds(120)
        )
        #expect(send.status == 0, "\(send.standardError)")
        // The line naming the folder's files names this one too (newcomer pass 3: it did not).
        let named = send.standardOutput.split(separator: "\n").filter { $0.hasPrefix("results: ") }
        #expect(named.count == 1 && named.first?.hasSuffix(", answer-ids.json)") == true, "\(named)")
        // `fanout report` says the folder's files as the send did (newcomer pass 4: not this one).
        let report = try CommandRunner.run(["report", folder + "/send"])
        #expect(report.standardOutput.split(separator: "\n").filter { $0.hasPrefix("results: ") } == named)
        let sample = try AnswerIDDocument.read(in: folder + "/send")
        // One connection looks at the 1st, 17th, … answer: 125 of 2,000, all kept (capacity 1,000).
        #expect(sample.lookedAtEvery == 16 && sample.capacity == 1000)
        #expect(sample.answersSeen == count / 16)
        #expect(sample.ids.count == count / 16)
        #expect(Set(sample.ids.map(\.uniqueID)).count == sample.ids.count)
        for entry in sample.ids.prefix(5) {
            let apnsID = try #require(entry.apnsID)
            #expect(entry.uniqueID.count == 36 && apnsID.count == 36)
            let page = try PeerProcess.run(
                "curl",
                ["-sf", "--max-time", "5", "http://127.0.0.1:\(admin)/deliveries/\(apnsID)"]
            )
            #expect(page.status == 0, "\(apnsID): \(page.output)")
            let history = try JSONDecoder().decode(History.self, from: Data(page.output.utf8))
            #expect(history.events.map(\.state) == ["Received by APNs", "Stored – Device Offline"])
        }
    }
}
