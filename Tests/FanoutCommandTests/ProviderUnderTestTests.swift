import FanoutFiles
import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink --output`: the sink as the instrument for a provider nobody here wrote — its
/// fan-out time, its use of streams, its conformance card — and the folder `gate`, `compare`
/// and `merge` read.
@Suite(.serialized) struct ProviderUnderTestTests {
    static let peers = CommandRunner.repositoryRoot + "/Tests/FanoutCommandTests/Peers/"

    /// Sends to the sink on `port` with `arguments` (every notification accepted), then waits
    /// for `sink` to end by itself, saying it was ended by `reason` (`--expect`, `--expect-tokens`).
    static func send(
        to port: Int,
        _ arguments: [String],
        timeout: Duration,
        until sink: PeerProcess,
        endsBy reason: String
    ) throws {
        let send = try CommandRunner.send(to: port, arguments, timeout: timeout)
        #expect(send.status == 0, "\(send.standardError)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        // The fan-out line, whole: its figures numbers, ended by `reason`.
        let fanOut = lines(of: ended.output, keyed: "fan-out: ")
        let said =
            fanOut.count == 1
            ? fanOut[0].wholeMatch(
                of:
                    #/fan-out: ([0-9,]+) accepted in ([0-9]+\.[0-9]{3}) s from the first request \(([0-9,]+)\/s\); ended by (.+)/#
            ) : nil
        #expect(said.map { String($0.4) } == reason, "\(ended.output)")
        #expect(said.flatMap { Int($0.1.replacing(",", with: "")) }.map { $0 > 0 } == true, "\(ended.output)")
    }

    static func folder() -> String { NSTemporaryDirectory() + "fanout-provider-\(UUID().uuidString)" }

    /// `fanout sink` into `folder` with no provider sending to it, ended by `ending` (its
    /// duration, idleness, a trigger's options), having ended cleanly.
    static func sinkNobodyReaches(into folder: String, _ ending: [String]) throws -> CommandRunner.Result {
        let result = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder] + ending,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.standardError)")
        return result
    }

    /// The card's count for each rule, by its name.
    static func card(_ summary: SummaryDocument) throws -> [String: Int] {
        let provider = try #require(summary.provider)
        return Dictionary(uniqueKeysWithValues: provider.card.checks.map { ($0.rule.rawValue, $0.count) })
    }

    /// The last JSON line a Python provider wrote: what it planted or what it saw.
    struct Said: Decodable {
        /// Violations planted, by the card's rule names.
        var planted: [String: Int]?
        var accepted: Int?
        var elapsedSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case planted, accepted
            case elapsedSeconds = "elapsed_seconds"
        }

        init(line: some StringProtocol) throws {
            self = try JSONDecoder().decode(Self.self, from: Data(line.utf8))
        }
    }

    /// `fanout send` as the provider: the sink ends by itself at --expect, and what it measured
    /// agrees with the sender — every notification, the fan-out time within the sender's span and
    /// short of it by at most 2% beyond the sender's own measured delays, its connections, no
    /// violation; the gate passes.
    @Test(.requires(.jsonschema)) func aSendIsMeasuredFromBothEnds() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let count = 100_000
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--expect", "\(count)", "--output", folder + "/sink"])
        defer { sink.stop() }
        try Self.send(
            to: port,
            ["--generate", "\(count)", "--connections", "4", "--output", folder + "/send"],
            timeout: .seconds(120),
            until: sink,
            endsBy: "expect"
        )

        let measured = try CommandRunner.summary(in: folder + "/sink")
        let sent = try CommandRunner.summary(in: folder + "/send")
        #expect(measured.kind == .sink)
        #expect(measured.accepted == count)
        let provider = try #require(measured.provider)
        let fanout = provider.delivery.fanoutSeconds
        // The sender's clock runs from before it connected; the sink's from the first request.
        // Both spans start at the sender's first request: its elapsed time less what went before.
        let elapsed = sent.elapsedSeconds
        let started = sent.started
        let firstSend = try #require(sent.start?.firstSend.flatMap { TimeNotation.parse($0) })
        let sending = elapsed - firstSend.timeIntervalSince(started)
        // The sink's span lies within the sender's: it begins at the first request's arrival,
        // after the sender's first send, and ends at the last request's arrival, before the
        // sender's end (a millisecond for `started` and `first_send`, written to the millisecond).
        #expect(
            fanout <= sending + 0.001,
            "fan-out \(fanout) s, sender \(sending) s from its first request (\(elapsed) s in all)"
        )
        // And falls short of it by at most 2% (100 ms on a short run) beyond the sender's own
        // measured delays: the sender's span goes on to its last answer read and its close, which
        // its loop reads late by up to its event-loop lag and read delay, both in its summary
        // (the largest of each over the run, summed: generous where a stall came mid-run, and
        // blind to the run thread's own wake-up at the end). A debug sender beside other tests
        // lagged 93 ms at most here, 2.13 s in all; CI's busier machine once stretched the gap
        // to 103 ms of a 5.03 s span, its lag not kept.
        let own = try #require(sent.harness?.sender)
        let ownDelay = (own.loopLag.max + own.readDelay.max) / 1000
        #expect(
            sending - fanout <= max(0.02 * sending, 0.1) + ownDelay,
            """
            fan-out \(fanout) s, sender \(sending) s from its first request (\(elapsed) s in all); \
            its event-loop lag at most \(own.loopLag.max) ms, its read delay at most \(own.readDelay.max) ms
            """
        )
        // Those that carried requests: the sender's four.
        let connections = provider.connections.filter { $0.requests > 0 }
        #expect(connections.count == 4)
        #expect(connections.map(\.requests).reduce(0, +) == count)
        #expect(provider.streams.limit == 1000)
        #expect(provider.streams.peak >= 1)
        let card = try Self.card(measured)
        #expect(card.values.allSatisfy { $0 == 0 }, "\(card)")

        let gate = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "violations == 0"])
        #expect(gate.status == 0, "\(gate.standardOutput)")
        try Self.expectEditedCardsInvalid(folder + "/sink")
        for file in ["summary.md", "report.html", "latency.hgrm", "latency.hlog"] {
            #expect(FileManager.default.fileExists(atPath: folder + "/sink/" + file), "\(file)")
        }
        let schema = try SummarySchemaCheck.validate([folder + "/sink/summary.json"])
        #expect(schema.status == 0, "\(schema.output)")
    }

    /// A provider made of mistakes (Python h2): one connection per notification, a 410 retried,
    /// three streams before the first answer. Its card lists those faults, each as many times as
    /// it made them, and nothing else; the gate fails. The trigger starts it and the fan-out
    /// counts from its launch.
    @Test(.requires(.h2)) func theBadProvidersCardListsExactlyItsFaults() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let unregistered = String(repeating: "ab", count: 32)
        try Data((unregistered + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/unregistered.txt"))
        let good = (1...5).map { String(repeating: String(format: "%02x", $0), count: 32) }
        // The sink picks its port; the provider, its trigger, finds it in FANOUT_SINK_PORT.
        let provider = ["python3", Self.peers + "bad_provider.py", "\"$FANOUT_SINK_PORT\"", unregistered] + good
        let result = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--no-auth", "--latency", "fixed:50ms",
                "--unregistered-tokens", folder + "/unregistered.txt", "--output", folder + "/out", "--idle-exit", "1s",
                "--duration", "60s", "--trigger", provider.joined(separator: " "), "--min-measured", "1",
            ],
            timeout: .seconds(90)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let log = try String(contentsOfFile: folder + "/out/trigger.log", encoding: .utf8)
        let last = try #require(log.split(separator: "\n").last, "\(log)")
        let planted = try #require(try Said(line: last).planted, "\(log)")
        let summary = try CommandRunner.summary(in: folder + "/out")
        let card = try Self.card(summary)
        for (rule, count) in card {
            #expect(
                count == planted[rule, default: 0],
                "\(rule): the card counts \(count), the provider planted \(planted[rule, default: 0])"
            )
        }
        let instrument = try #require(summary.provider)
        #expect(instrument.start.mark == "trigger")
        #expect(instrument.trigger?.exitStatus == 0)
        let gate = try CommandRunner.run(["gate", folder + "/out", "--threshold", "violations == 0"])
        #expect(gate.status == 1, "\(gate.standardOutput)")
        let churn = try CommandRunner.run(["gate", folder + "/out", "--threshold", "violations.fast-retry == 0"])
        #expect(churn.status == 0, "\(churn.standardOutput)")
    }

    /// aioapns (PyPI) fanning out over TLS with token auth: the sink's fan-out time is within 5%
    /// of the time aioapns measured for itself, with every notification accepted and no fault.
    @Test(.requires(.openssl, .aioapns, .jsonschema)) func aioapnsMeasuredFromBothEnds() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try OpenSSL.makeP256Key(at: folder + "/key.p8")
        let count = 20_000
        let (sink, port) = try CommandRunner.sink(
            [
                "--tls-self-signed", folder + "/tls", "--key-file", folder + "/key.p8", "--key-id", "ABC123DEFG",
                "--team-id", "DEF123GHIJ", "--expect", "\(count + 1)", "--output", folder + "/out",
            ]
        )
        defer { sink.stop() }
        let provider = try PeerProcess.run(
            "python3",
            [
                Self.peers + "aioapns_provider.py", "\(port)", folder + "/tls/cert.pem", folder + "/key.p8",
                "ABC123DEFG", "DEF123GHIJ", "\(count)",
            ],
            timeout: .seconds(120)
        )
        #expect(provider.status == 0, "\(provider.errors.suffix(2000))")
        let said = try Said(line: provider.output)
        #expect(said.accepted == count, "\(provider.output)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        let summary = try CommandRunner.summary(in: folder + "/out")
        #expect(summary.accepted == count + 1)
        let fanout = try #require(summary.provider?.delivery.fanoutSeconds)
        let own = try #require(said.elapsedSeconds, "\(provider.output)")
        #expect(abs(fanout / own - 1) <= 0.05, "sink \(fanout) s, aioapns \(own) s")
        let card = try Self.card(summary)
        #expect(card.values.allSatisfy { $0 == 0 }, "\(card)")
    }

    /// h2load as the provider: its streams held 20 ms, each connection keeps close to its 50 in
    /// flight, and the sink counts every notification. (Whether h2load's first flight goes out
    /// before it reads the sink's SETTINGS of 1 is a race, so the card's stream-limit is not
    /// asserted here: the bad provider's test plants that fault.)
    @Test(.requires(.h2load)) func h2loadAsTheProvider() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(#"{"aps":{"alert":"hi"}}"#.utf8).write(to: URL(fileURLWithPath: folder + "/body.json"))
        let (sink, port) = try CommandRunner.sink(
            ["--no-auth", "--latency", "fixed:20ms", "--expect", "4000", "--output", folder + "/out"]
        )
        defer { sink.stop() }
        let token = String(repeating: "cd", count: 32)
        let load = try PeerProcess.run(
            "h2load",
            [
                "-n", "4000", "-c", "2", "-m", "50", "-d", folder + "/body.json", "-H", "apns-topic: com.example.app",
                "http://127.0.0.1:\(port)/3/device/\(token)",
            ],
            timeout: .seconds(60)
        )
        #expect(load.status == 0, "\(load.errors)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        let summary = try CommandRunner.summary(in: folder + "/out")
        #expect(summary.accepted == 4000)
        let provider = try #require(summary.provider)
        let connections = provider.connections.filter { $0.requests > 0 }
        #expect(connections.count == 2)
        // 50 streams each, held 20 ms: the connections keep close to 50 in flight.
        for connection in connections {
            #expect(connection.peakStreams == 50, "\(connection)")
            #expect(connection.meanStreams > 25, "\(connection)")
        }
        let card = try Self.card(summary)
        #expect(card.filter { $0.key != "stream-limit" }.values.allSatisfy { $0 == 0 }, "\(card)")
    }

    /// The tour's provider (newcomer pass 6): answers held 80 ms, the sink ending at `--expect`
    /// with the last ones in flight. The send reads every answer; the sink's own close meets the
    /// provider's last read markers, and that is no answer left unread: the gate's `unread == 0`
    /// passes (it read 996 "maybe unread" on 2 of 3 tries at 200,000 before, `--expect` 1M: 996).
    @Test func aSinkEndingAtExpectLeavesNothingUnreadOfAProviderThatReadAll() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let count = 200_000
        let (sink, port) = try CommandRunner.sink([
            "--no-auth", "--latency", "fixed:80ms", "--expect", "\(count)", "--output", folder + "/sink",
        ])
        defer { sink.stop() }
        try Self.send(to: port, ["--generate", "\(count)"], timeout: .seconds(120), until: sink, endsBy: "expect")
        let measured = try CommandRunner.summary(in: folder + "/sink")
        #expect(measured.accepted == count)
        let connections = try #require(measured.provider?.connections)
        #expect(connections.compactMap(\.maybeUnread).allSatisfy { $0 == 0 }, "\(connections)")
        let gate = try CommandRunner.run(["gate", folder + "/sink", "--threshold", "unread == 0"])
        #expect(gate.status == 0, "\(gate.standardOutput)")
    }

    /// `--expect-tokens`: the sink ends once every token of a set was accepted, however many
    /// notifications that took, and the folder exports for CI tools as a run's does.
    @Test func theSinkEndsWhenEveryExpectedTokenArrived() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let generate = try CommandRunner.run(
            ["tokens", "generate", "--count", "3000", "--output", folder + "/tokens.txt"]
        )
        #expect(generate.status == 0, "\(generate.standardError)")
        let (sink, port) = try CommandRunner.sink(
            ["--no-auth", "--expect-tokens", folder + "/tokens.txt", "--output", folder + "/out", "--duration", "60s"]
        )
        defer { sink.stop() }
        try Self.send(
            to: port,
            ["--tokens", folder + "/tokens.txt", "--output", folder + "/send"],
            timeout: .seconds(60),
            until: sink,
            endsBy: "expect-tokens"
        )
        let summary = try CommandRunner.summary(in: folder + "/out")
        let expected = try #require(summary.provider?.expected)
        #expect(expected.tokens == 3000 && expected.tokensSeen == 3000)
        #expect(expected.reached == true)
        let export = try CommandRunner.run(["export", folder + "/out", "--format", "bencher"])
        #expect(export.status == 0, "\(export.standardError)")
        let measures = try JSONDecoder().decode(
            [String: [String: [String: Double]]].self,
            from: Data(export.standardOutput.utf8)
        )
        #expect(
            measures.count == 1 && (measures.values.first?["throughput"]?["value"] ?? 0) > 0,
            "\(export.standardOutput)"
        )
    }

    /// SIGINT ends the run as --expect does: the folder is written with what arrived.
    @Test(.requires(.curl)) func anInterruptWritesTheFolder() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(["--no-auth", "--output", folder, "--min-measured", "3"])
        defer { sink.stop() }
        let token = String(repeating: "ab", count: 32)
        for _ in 0..<3 {
            let curl = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "20", "-d", #"{"aps":{"alert":"hi"}}"#, "-H",
                    "apns-topic: com.example.app", "http://127.0.0.1:\(port)/3/device/\(token)",
                ]
            )
            #expect(curl.status == 0)
        }
        sink.interrupt()
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.accepted == 3)
        #expect(summary.valid == true)
        let provider = try #require(summary.provider)
        #expect(provider.endedBy == "signal")
        // curl connects once a request, closing each connection after one: churn, twice.
        #expect(try Self.card(summary)["churn"] == 2)
    }

    /// `--duration` ends a run that nothing reached: a folder with nothing accepted, no start
    /// mark, ended by duration — and invalid: no request arrived, so it measured nothing (a
    /// gate on `violations == 0` passed such a folder before).
    @Test func aDurationEndsARunNothingReached() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try Self.sinkNobodyReaches(into: folder, ["--duration", "1s"])
        let summary = try CommandRunner.summary(in: folder)
        #expect(summary.accepted == 0)
        #expect(summary.valid == false)
        #expect(summary.invalidity == [.noRequests])
        let provider = try #require(summary.provider)
        #expect(provider.endedBy == "duration")
        #expect(provider.start.at == nil)
        #expect(try CommandRunner.summaryHoldsNull(in: folder, at: ["provider", "start", "at"]))
    }

    /// A trigger that fails before any request is said at once, while the sink waits on (a
    /// `curl` to a provider's API nobody served exited 7, and the sink said nothing until ^C,
    /// newcomer pass 4); its folder then says the trigger failed.
    @Test func aTriggerThatFailsIsSaidAtOnce() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sinkNobodyReaches(into: folder, ["--duration", "2s", "--trigger", "exit 7"])
        // On standard error as the sink's other notes, while it waits (its summary has its own
        // trigger line at the end).
        let said = result.standardError.split(separator: "\n").filter { $0.hasPrefix("fanout sink: trigger: ") }
        #expect(
            said == [
                "fanout sink: trigger: exit 7 exited with status 7 before any request (its output: \(folder)/trigger.log); the sink waits on for its end (--expect, --duration, --idle-exit) or ^C"
            ],
            "\(result.standardError)"
        )
    }

    /// A trigger whose shell started something that outlives it (a provider in the background,
    /// `sleep` here) is stopped whole when the sink stops: its process group. Before, the shell
    /// alone got SIGTERM, and the sink waited for ever on the end of a shell its child kept
    /// from being reaped (Foundation learns of an end when every holder of the child's pipe has
    /// closed it).
    @Test func aTriggerIsStoppedWithWhatItStarted() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder + "/out", "--duration", "1s",
                "--trigger", "sleep 1000 & echo $! > \(folder)/sleep.pid; wait",
            ],
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/out")
        #expect(summary.provider?.trigger?.exitStatus == nil, "stopped by the sink: no status of its own")
        let sleeper = try #require(processID(writtenTo: folder + "/sleep.pid"))
        poll(timeout: .seconds(10)) { processEnded(sleeper) }
        #expect(processEnded(sleeper), "the trigger's sleep \(sleeper) outlived the sink")
    }

    /// Review of issue 61: a card whose check counted 5 beside its total of 0 passed
    /// `violations == 0`. Each edit that breaks the card's identities makes the folder invalid,
    /// the cause named.
    static func expectEditedCardsInvalid(_ sink: String) throws {
        let original = try Data(contentsOf: URL(fileURLWithPath: sink + "/summary.json"))
        let edits: [(String, (inout [String: Any]) -> Void, InvalidReason)] = [
            ("a check's count", { $0["count"] = 5 }, .cardDoesNotAddUp(violations: 0, counted: 5)),
            (
                "a check's flag", { $0["passed"] = false },
                .cardFlagWrong(rule: "permanent-retried", count: 0, passed: false)
            ),
        ]
        for (what, edit, reason) in edits {
            let folder = NSTemporaryDirectory() + "fanout-card-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            var json = try #require(try JSONSerialization.jsonObject(with: original) as? [String: Any])
            var provider = try #require(json["provider"] as? [String: Any])
            var card = try #require(provider["card"] as? [String: Any])
            var checks = try #require(card["checks"] as? [[String: Any]])
            try #require(checks.first?["rule"] as? String == "permanent-retried")
            edit(&checks[0])
            card["checks"] = checks
            provider["card"] = card
            json["provider"] = provider
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: folder + "/summary.json"))
            let outcome = try Gate(run: folder, baseline: nil, thresholds: ["violations == 0"], file: nil).evaluate()
            #expect(outcome.status == .invalid, "\(what)")
            #expect(outcome.invalidReasons.map(\.reason).contains(reason), "\(what): \(outcome.invalidReasons)")
        }
    }

    /// Bad input is said, with where and what, and leaves no folder that passes for a finished one.
    @Test func badInputIsRefusedAndLeavesNoFolder() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (arguments, words) in [
            (["--expect", "0"], "--expect"), (["--expect-tokens", "tokens.txt"], "add --output"),
            (["--trigger", "true"], "add --output"), (["--output", folder, "--duration", "0s"], "--duration"),
        ] {
            let result = try CommandRunner.run(["sink", "--listen", "127.0.0.1:0"] + arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.standardError.contains(words), "\(arguments): \(result.standardError)")
        }
        let unwritable = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", "/proc/fanout-cannot", "--duration", "1s"]
        )
        #expect(unwritable.status == 1)
        #expect(
            errorLine(of: unwritable.standardError)
                == "error: cannot write --output /proc/fanout-cannot: no such file",
            "\(unwritable.standardError)"
        )

        // A folder holding an earlier run's summary.json is refused, as a run refuses it, and
        // the summary is left as it was (the sink once replaced it).
        try FileManager.default.createDirectory(atPath: folder + "/earlier", withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/earlier/summary.json"))
        let earlier = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder + "/earlier", "--duration", "1s"]
        )
        #expect(earlier.status == 1)
        #expect(
            earlier.standardError
                == "error: --output \(folder)/earlier: holds an earlier run's results (summary.json): give a new folder, or remove them first (a gate must never read them as this run's)\n",
            "\(earlier.standardError)"
        )
        #expect(try String(contentsOfFile: folder + "/earlier/summary.json", encoding: .utf8) == "{}")

        // A trigger the shell cannot start: exit 1, its words, and no summary.json left behind.
        let trigger = try CommandRunner.run(
            [
                "sink", "--listen", "127.0.0.1:0", "--no-auth", "--output", folder + "/out", "--duration", "20s",
                "--trigger", "fanout-no-such-command --now",
            ]
        )
        #expect(trigger.status == 1)
        // The shell's own words, whole: command not found.
        #expect(
            errorLine(of: trigger.standardError)
                == "error: --trigger fanout-no-such-command --now could not start (exit 127): "
                + "/bin/sh: 1: fanout-no-such-command: not found",
            "\(trigger.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder + "/out/summary.json"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/out/trigger.log"))
    }

    /// Two sinks behind one provider (two senders, one to each): `fanout merge` makes one fan-out
    /// of them, with every connection and one card.
    @Test func sinksBehindOneProviderMerge() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var sinks: [(PeerProcess, Int)] = []
        defer { for (sink, _) in sinks { sink.stop() } }
        for name in ["a", "b"] {
            sinks.append(try CommandRunner.sink(["--no-auth", "--expect", "5000", "--output", folder + "/" + name]))
        }
        for (_, port) in sinks {
            let send = try CommandRunner.send(
                to: port,
                ["--generate", "5000", "--connections", "2", "--output", folder + "/send-\(port)"],
                timeout: .seconds(60)
            )
            #expect(send.status == 0, "\(send.standardError)")
        }
        for (sink, _) in sinks { #expect(try sink.wait(timeout: .seconds(30)).status == 0) }
        let merge = try CommandRunner.run(
            ["merge", folder + "/a", folder + "/b", "--output", folder + "/merged", "--max-skew", "60s"]
        )
        #expect(merge.status == 0, "\(merge.standardOutput)\(merge.standardError)")
        let merged = try CommandRunner.summary(in: folder + "/merged")
        #expect(merged.kind == .sink)
        #expect(merged.accepted == 10_000)
        let connections = try #require(merged.provider?.connections)
        #expect(connections.filter { $0.requests > 0 }.count == 4)
        let gate = try CommandRunner.run(["gate", folder + "/merged", "--threshold", "violations == 0"])
        #expect(gate.status == 0, "\(gate.standardOutput)")
        let mixed = try CommandRunner.run(
            ["merge", folder + "/a", folder + "/send-\(sinks[0].1)", "--output", folder + "/mixed"]
        )
        let refusals = try CommandRunner.summary(in: folder + "/mixed").invalidity
        #expect(refusals.first == .sinkAmongRuns(folders: [folder + "/a"]), "\(refusals)")
        #expect(
            lines(of: mixed.standardOutput, keyed: "REFUSED") == refusals.map { "REFUSED: \($0)" },
            "\(mixed.standardOutput)"
        )
    }
}

/// docs/summary.schema.json checked by the jsonschema package.
enum SummarySchemaCheck {
    static func validate(_ files: [String]) throws -> PeerProcess.Result {
        try PeerProcess.run(
            "python3",
            [
                CommandRunner.repositoryRoot + "/Tests/FanoutReportTests/Peers/validate_summary.py",
                CommandRunner.repositoryRoot + "/docs/summary.schema.json",
            ] + files
        )
    }
}
