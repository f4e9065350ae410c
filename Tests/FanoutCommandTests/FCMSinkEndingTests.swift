import FanoutReport
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink --service fcm` ending by itself, as the APNs sink does in a CI job: at the
/// sends it expected, at every token of a list, when idle, when nothing came; its admin port
/// announced and served. Each sink is bounded by `--duration 60s`, and every wait by a timeout.
@Suite(.serialized, .requires(.curl)) struct FCMSinkEndingTests {
    static func folder() -> String { NSTemporaryDirectory() + "fanout-fcm-ending-\(UUID().uuidString)" }

    /// A curl that sends `token` (`validate_only` when asked) to a `--no-auth` sink on `port`.
    static func send(_ token: String, to port: String, validateOnly: Bool = false) -> [String] {
        let body = #"{"validate_only":\#(validateOnly),"message":{"token":"\#(token)"}}"#
        return [
            "-fsS", "--max-time", "20", "--http2-prior-knowledge", "-H", "authorization: Bearer x", "-d", body,
            "http://127.0.0.1:\(port)/v1/projects/fanout-fcm/messages:send",
        ]
    }

    /// The fan-out line's reason: `fan-out: N accepted in S s …; ended by REASON`.
    static func endedBy(_ output: String) -> String? {
        lines(of: output, keyed: "fan-out: ").first?.split(separator: "ended by ").last.map(String.init)
    }

    /// `--expect 3`: a validate_only send's 200 is no notification, so the sink still serves
    /// the fourth send and ends by itself at the third one bound for a device.
    @Test func itEndsAtTheExpectedSendsButNotAtAValidation() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--expect", "3", "--duration", "60s", "--output", folder]
        )
        defer { sink.stop() }
        for (token, validateOnly) in [("tok-a", true), ("tok-b", false), ("tok-c", false), ("tok-d", false)] {
            let sent = try PeerProcess.run("curl", Self.send(token, to: String(port), validateOnly: validateOnly))
            #expect(sent.status == 0, "\(token): \(sent.errors)")
        }
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        #expect(Self.endedBy(ended.output) == "expect", "\(ended.output)")
        // All four answered before it ended: the validation did not count towards three.
        #expect(lines(of: ended.output, keyed: "  delivered ") == ["  delivered 3 · validated 1"], "\(ended.output)")
        let provider = try #require(try CommandRunner.summary(in: folder).provider)
        #expect(provider.endedBy == "expect")
        #expect(provider.expected.notifications == 3 && provider.expected.reached == true)
    }

    /// `--expect-tokens` with `--trigger`: FCM tokens are not hex and their case counts, so
    /// `toka1` is not the listed `TokA1` (SinkEndingsTests reads the list so); the trigger's
    /// third send completes the list, all three are answered, and the folder says the trigger
    /// was the start mark and ended well.
    @Test func itEndsWhenEveryListedTokenWasAcceptedCaseAndAll() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "TokA1\ntokB2\n".write(toFile: folder + "/tokens.txt", atomically: true, encoding: .utf8)
        // The provider: three curls to the port the sink announces in its environment.
        let script =
            ["set -e"]
            + ["toka1", "tokB2", "TokA1"].map { token in
                (["curl"] + Self.send(token, to: "PORT")).map { "'\($0)'" }.joined(separator: " ")
                    .replacing("127.0.0.1:PORT", with: "127.0.0.1:'\"$FANOUT_SINK_PORT\"'")
            }
        try script.joined(separator: "\n").write(toFile: folder + "/send.sh", atomically: true, encoding: .utf8)
        let (sink, _) = try CommandRunner.sink(
            [
                "--service", "fcm", "--no-auth", "--expect-tokens", folder + "/tokens.txt", "--duration", "60s",
                "--output", folder + "/out", "--trigger", "sh " + folder + "/send.sh",
            ]
        )
        defer { sink.stop() }
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        #expect(Self.endedBy(ended.output) == "expect-tokens", "\(ended.output)")
        #expect(lines(of: ended.output, keyed: "  delivered ") == ["  delivered 3"], "\(ended.output)")
        let provider = try #require(try CommandRunner.summary(in: folder + "/out").provider)
        #expect(provider.expected.tokens == 2 && provider.expected.tokensSeen == 2)
        #expect(provider.start.mark == "trigger")
        let log = (try? String(contentsOfFile: folder + "/out/trigger.log", encoding: .utf8)) ?? ""
        #expect(provider.trigger?.exitStatus == 0, "\(log)")
    }

    /// `--idle-exit`: a sink with no request ends at `--first-request-within`; one that had a
    /// request ends its idle time after it. Its admin port, announced, answers meanwhile.
    @Test func itEndsWhenIdleOrWhenNothingCame() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (quiet, _) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--idle-exit", "1s", "--first-request-within", "1s"]
                + ["--duration", "60s", "--output", folder + "/quiet"]
        )
        defer { quiet.stop() }
        let none = try quiet.wait(timeout: .seconds(30))
        #expect(none.status == 0, "\(none.errors)")
        #expect(try CommandRunner.summary(in: folder + "/quiet").provider?.endedBy == "no-request")

        let (sink, port) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--idle-exit", "1s", "--admin", "127.0.0.1:0"]
                + ["--duration", "60s", "--output", folder + "/idle"]
        )
        defer { sink.stop() }
        // Read before the send: after it, the sink may end a second later.
        let admin = try sink.announcedPort(after: "admin on ")
        let stats = try PeerProcess.run("curl", ["-fsS", "--max-time", "10", "http://127.0.0.1:\(admin)/stats"])
        let figures = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
        #expect(figures?["requests"] as? Int == 0, "\(stats.output) \(stats.errors)")
        let sent = try PeerProcess.run("curl", Self.send("tok-a", to: String(port)))
        #expect(sent.status == 0, "\(sent.errors)")
        let ended = try sink.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        #expect(Self.endedBy(ended.output) == "idle-exit", "\(ended.output)")
    }

    /// `--serve`: the FCM sink's live page counts the sends accepted and those refused by FCM's
    /// errorCode while it serves, then, once it ends by itself, serves the folder's report.
    @Test func itsLivePageCountsBySecondThenServesTheReport() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "gone-1\n".write(toFile: folder + "/gone.txt", atomically: true, encoding: .utf8)
        let (sink, port) = try CommandRunner.sink(
            [
                "--service", "fcm", "--no-auth", "--unregistered-tokens", folder + "/gone.txt", "--serve",
                "127.0.0.1:0",
                "--serve-linger", "60s", "--idle-exit", "5s", "--duration", "60s", "--output", folder + "/out",
            ]
        )
        defer { sink.stop() }
        let served = try ServeCommandTests.servedPort(sink)
        // Four curls well inside the idle time; the gone token's 404 fails curl -f.
        for token in ["tok-a", "tok-b", "tok-c", "gone-1"] {
            let sent = try PeerProcess.run("curl", Self.send(token, to: String(port)))
            #expect((sent.status == 0) == (token != "gone-1"), "\(token): \(sent.errors)")
        }
        // The page closes a second at a time: polled until it has them all (bounded).
        var live: LiveDocument?
        poll(timeout: .seconds(30), every: .milliseconds(100)) {
            live = ServeCommandTests.live(served)
            return live?.accepted == 3 && live?.rejected["UNREGISTERED"] == 1
        }
        #expect(live?.command == "sink")
        #expect(live?.accepted == 3 && live?.rejected == ["UNREGISTERED": 1], "\(String(describing: live))")
        #expect(live?.seconds.map(\.completed).reduce(0, +) == 4, "each send in one second's count")
        let done = poll(timeout: .seconds(60), every: .milliseconds(200)) {
            ServeCommandTests.live(served)?.done == true
        }
        #expect(done, "the live document never said done")
        let written = try Data(contentsOf: URL(fileURLWithPath: folder + "/out/report.html"))
        let page = try PeerProcess.run(
            "curl",
            ["-sf", "--max-time", "10", "-o", folder + "/page.html", "http://127.0.0.1:\(served)/"]
        )
        #expect(page.status == 0, "\(page.errors)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder + "/page.html")) == written,
            "/ differs from report.html"
        )
        let ended = try sink.wait(timeout: .seconds(60))
        #expect(ended.status == 0, "\(ended.errors)")
    }
}
