import FanoutNotation
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout send --service fcm` as a user runs it: against `fanout sink --service fcm` with the
/// credentials file it writes, the summary's counts by FCM's codes and the tokens it gives up
/// written out; the options it refuses, and a bearer the sink refuses.
@Suite(.serialized) struct FCMSendCommandTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-fcm-send-command-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func aServiceAccountsRunIsCountedByFCMsCodes() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink([
            "--service", "fcm", "--fcm-credentials-out", folder, "--fcm-unregistered", "10%",
        ])
        defer { sink.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--fcm-credentials",
                folder + "/service-account.json", "--template", "fixtures/fcm-poll.json", "--generate", "3000",
                "--connections", "2", "--streams", "100", "--gone-tokens", folder + "/gone.txt", "--output",
                folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        let unregistered = try #require(summary.rejected[.fcm(.unregistered)])
        #expect(summary.accepted + unregistered == 3000)
        #expect(Array(summary.rejected.keys) == [.fcm(.unregistered)])
        #expect(summary.configuration.pushType == "fcm")
        #expect(summary.configuration.topic == "projects/fanout-fcm")
        let gone = try String(contentsOfFile: folder + "/gone.txt", encoding: .utf8).split(separator: "\n")
        #expect(gone.count == unregistered)
        #expect(
            lines(of: result.standardOutput, keyed: "  rejected ") == [
                "  rejected 404 UNREGISTERED: \(unregistered.grouped)"
            ]
        )
        // The sink counted what the sender did.
        let stopped = sink.stop()
        #expect(
            lines(of: stopped.output, keyed: "  delivered ")
                == ["  delivered \(summary.accepted.grouped) · unregistered \(unregistered.grouped)"],
            "\(stopped.output)"
        )
    }

    /// The sink's latency against physics: a sink that holds every send 50 ms cannot answer
    /// one sooner, and one connection of 100 streams then carries at most 100 sends a 50 ms,
    /// 2,000 a second: 2,000 sends take a second at least. (Bounds the answers cannot cross
    /// however loaded the machine: nothing here times the machine.)
    @Test func theSinksLatencyHoldsEverySendAndBoundsThroughput() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink([
            "--service", "fcm", "--fcm-credentials-out", folder, "--latency", "fixed:50ms",
        ])
        defer { sink.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--fcm-credentials",
                folder + "/service-account.json", "--template", "fixtures/fcm-poll.json", "--generate", "2000",
                "--connections", "1", "--streams", "100", "--output", folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.accepted == 2000)
        let latency = try #require(summary.latency)
        #expect(latency.p50 >= 50 && latency.p90 >= 50, "\(latency)")
        // latency.hgrm's first row is the least latency measured.
        let hgrm = try String(contentsOfFile: folder + "/run/latency.hgrm", encoding: .utf8)
        let least = hgrm.split(separator: "\n").lazy.compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).first.flatMap { Double($0) }
        }.first
        #expect(try #require(least) >= 50, "\(hgrm.prefix(400))")
        #expect(summary.elapsedSeconds >= 1.0, "\(summary.elapsedSeconds) s")
    }

    /// `--unregistered-tokens FILE`: exactly the tokens listed (labelled or not) are answered
    /// 404 UNREGISTERED, and the sender's gone tokens are that list.
    @Test func theTokensListedUnregisteredAreTheOnesGone() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = (0..<1000).map { "dXpLq7Rz0aE\($0):APA91bHun4Mx-\($0 * 7919)" }
        try (tokens.joined(separator: "\n") + "\n").write(
            toFile: folder + "/tokens.txt",
            atomically: true,
            encoding: .utf8
        )
        let listed = stride(from: 3, to: 1000, by: 27).map { tokens[$0] }
        let list =
            ["# held unregistered"] + listed.enumerated().map { $0.offset % 2 == 0 ? $0.element : "fcm:" + $0.element }
        try (list.joined(separator: "\n") + "\n").write(
            toFile: folder + "/gone-list.txt",
            atomically: true,
            encoding: .utf8
        )
        let (sink, port) = try CommandRunner.sink([
            "--service", "fcm", "--fcm-credentials-out", folder, "--unregistered-tokens", folder + "/gone-list.txt",
        ])
        defer { sink.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--fcm-credentials",
                folder + "/service-account.json", "--template", "fixtures/fcm-poll.json", "--tokens",
                folder + "/tokens.txt", "--gone-tokens", folder + "/gone.txt", "--output", folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.rejected[.fcm(.unregistered)] == listed.count)
        #expect(summary.accepted == 1000 - listed.count)
        let gone = try String(contentsOfFile: folder + "/gone.txt", encoding: .utf8).split(separator: "\n").map(
            String.init
        )
        #expect(Set(gone) == Set(listed) && gone.count == listed.count)
        // A list that holds another service's token is refused where it does.
        try "\(tokens[0])\napns:\(String(repeating: "ab", count: 32))\n".write(
            toFile: folder + "/bad-list.txt",
            atomically: true,
            encoding: .utf8
        )
        let bad = try CommandRunner.run(
            ["sink", "--service", "fcm", "--listen", "127.0.0.1:0", "--unregistered-tokens", folder + "/bad-list.txt"]
        )
        #expect(bad.status == 1)
        #expect(
            line(of: bad.standardError, keyed: "error: ")
                == "error: --unregistered-tokens: \(folder)/bad-list.txt:2:1: the line is APNs's (apns:), and these tokens are FCM's: a set of both services is a campaign's (fanout send --fcm-endpoint sends each half to its own service)",
            "\(bad.standardError)"
        )
    }

    /// `--goaway-after-requests N`: each connection retired after N sends (GOAWAY), the sender
    /// following onto new ones: every token delivered once, none lost, none twice.
    @Test func connectionsRetiredByGoAwayLoseAndRepeatNothing() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink([
            "--service", "fcm", "--fcm-credentials-out", folder, "--goaway-after-requests", "250", "--output",
            folder + "/sink",
        ])
        defer { sink.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--fcm-credentials",
                folder + "/service-account.json", "--template", "fixtures/fcm-poll.json", "--generate", "3000",
                "--connections", "2", "--output", folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.accepted == 3000 && summary.failed.isEmpty)
        let stopped = sink.stop()
        #expect(lines(of: stopped.output, keyed: "  delivered ") == ["  delivered 3,000"], "\(stopped.output)")
        // 3,000 sends at most 250 a connection: 12 connections at least, and the token request's.
        let connections = line(of: stopped.output, keyed: "fcm sink: ").flatMap { line in
            line.split(separator: " ").reversed().dropFirst().first.flatMap { Int($0) }
        }
        #expect(try #require(connections) >= 13, "\(stopped.output)")
        // The card agrees: no stream after a GOAWAY, no send twice, no churn (the sink closed them).
        let (_, counts, violations) = try CommandRunner.providerCard(in: folder + "/sink")
        #expect(counts["after-goaway"] == 0 && counts["duplicate"] == 0 && counts["churn"] == 0, "\(counts)")
        #expect(violations == 0, "\(counts)")
    }

    @Test func aBearerTheSinkNeverIssuedIsARefusal() throws {
        let (sink, port) = try CommandRunner.sink(["--service", "fcm"])
        defer { sink.stop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([
            "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--project",
            "fanout-fcm",
            "--fcm-bearer", "ya29.never-issued", "--template", "fixtures/fcm-poll.json", "--generate", "200",
            "--connections", "1", "--output", folder + "/run",
        ])
        #expect(result.status == 5, "\(result.standardError)")
        #expect(
            errorLine(of: result.standardError)
                == "error: could not reach 127.0.0.1:\(port): 401 on the first request (401: the bearer was refused): check the FCM credentials: --fcm-credentials (a service account of the project) or --fcm-bearer (an access token, an hour's)"
        )
    }

    /// Android devices behind the sink (`--device-…`): 30% offline for good and 10% with the
    /// app uninstalled. The first run's 2,000 sends are all taken (200); the fleet finds the
    /// online devices' apps gone at their delivery, so the second run's 404 UNREGISTERED are
    /// exactly the sink's "discarded: unregistered" of the first, and the offline devices',
    /// never attempted, are taken again. Two counts from two ends, against each other.
    @Test func theDevicesBehindTheSinkUnregisterWhatTheyFindUninstalled() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink([
            "--service", "fcm", "--fcm-credentials-out", folder, "--device-offline", "30%", "--device-return",
            "never", "--device-uninstalled", "10%", "--output", folder + "/sink",
        ])
        defer { sink.stop() }
        func send(_ run: String) throws -> SummaryDocument {
            let result = try CommandRunner.run(
                [
                    "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)",
                    "--fcm-credentials",
                    folder + "/service-account.json", "--template", "fixtures/fcm-poll.json", "--generate", "2000",
                    "--output", folder + "/" + run,
                ],
                timeout: .seconds(120)
            )
            #expect(result.status == 0, "\(result.standardError)")
            return try CommandRunner.summary(in: folder + "/" + run)
        }
        let first = try send("first")
        #expect(first.accepted == 2000)
        let second = try send("second")
        let stopped = sink.stop()
        let devices = try #require(line(of: stopped.output, keyed: "devices: "), "\(stopped.output)")
        // What FCM took of the two runs (the fleet's lines write counts ungrouped).
        #expect(devices.hasPrefix("devices: \((4000 - second.rejected.values.reduce(0, +)).grouped) received by FCM; "))
        let stored = try #require(line(of: stopped.output, keyed: "  stored: "), "\(stopped.output)")
        let discarded = try #require(
            stored.firstMatch(of: /unregistered ([0-9,]+) \(0 from storage\)/).map { Int($0.1.filter(\.isNumber)) }
        )
        let unregistered = try #require(second.rejected[.fcm(.unregistered)])
        #expect(discarded == unregistered)
        // About 10% of the 70% online: 140 of 2,000, ±4 standard deviations.
        #expect(abs(unregistered - 140) <= 4 * 11)
        #expect(second.accepted + unregistered == 2000)
        // The sink's folder keeps the fleet's outcomes, named in FCM's words.
        let sinkSummary = try CommandRunner.summary(in: folder + "/sink")
        let delivery = try #require(sinkSummary.delivery)
        #expect(delivery.received == 4000 - unregistered && delivery.discardedUnregistered == unregistered)
        let markdown = try String(contentsOfFile: folder + "/sink/summary.md", encoding: .utf8)
        #expect(
            lines(of: markdown, keyed: "| Received by ") == ["| Received by FCM | \(delivery.received) | 100.00% |"]
        )
        // Android has no background budget, and FCM states its own default ttl.
        let refused = try CommandRunner.run([
            "sink", "--service", "fcm", "--listen", "127.0.0.1:0", "--device-background-budget", "3/1h",
        ])
        #expect(refused.status == 64)
        #expect(
            line(of: refused.standardError, keyed: "error: ")
                == "error: --service fcm does not take --device-background-budget: it mocks APNs alone (docs/fcm.md).",
            "\(refused.standardError)"
        )
    }

    @Test func optionsOfTheOtherServiceAreRefusedByName() throws {
        let send = [
            "send", "--verbose", "--endpoint", "http://127.0.0.1:9", "--template", "fixtures/fcm-poll.json",
            "--generate", "1",
        ]
        let cases: [([String], String)] = [
            (
                send + [
                    "--service", "fcm", "--fcm-bearer", "x", "--project", "p", "--topic", "com.example.app",
                    "--priority", "5",
                ],
                "error: --service fcm does not take --topic, --priority: they are APNs's (docs/fcm.md)."
            ),
            (
                send + ["--service", "fcm"],
                "error: --service fcm needs credentials: --fcm-credentials FILE (a service account) or --fcm-bearer TOKEN."
            ),
            (
                send + ["--service", "fcm", "--fcm-bearer", "x"],
                "error: --fcm-bearer needs --project: no service account names it."
            ),
            (
                send + ["--service", "fcm", "--fcm-bearer", "x", "--fcm-credentials", "a.json"],
                "error: --fcm-credentials and --fcm-bearer are two ways to authenticate: give one."
            ),
            (
                send + ["--service", "fcm", "--fcm-bearer", "x", "--project", "a/b"],
                "error: --project takes a project id of letters, digits and hyphens; got a/b."
            ),
            (
                send + ["--topic", "com.example.app", "--fcm-bearer", "x"],
                "error: --fcm-bearer is FCM's: add --service fcm (or --fcm-endpoint for a campaign to both)."
            ),
        ]
        for (arguments, message) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(line(of: result.standardError, keyed: "error: ") == message, "\(result.standardError)")
        }
    }
}
