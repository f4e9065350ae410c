import FanoutAPNs
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout send` against servers: the mock APNs over TLS with token auth (tokens answered 410
/// written out), and nghttpd, an HTTP/2 server nobody here wrote.
@Suite(.serialized) struct SendCommandTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-send-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `fanout send` of the poll template with topic com.example.app and `options` to a
    /// cleartext nghttpd (given `nghttpdOptions`) serving `folder`, stopped once it is done.
    static func sendToNghttpd(
        serving folder: String,
        nghttpd nghttpdOptions: [String] = [],
        _ options: [String]
    ) throws -> CommandRunner.Result {
        let (server, port) = try PeerProcess.cleartextNghttpd(serving: folder, nghttpdOptions)
        defer { server.stop() }
        let endpoint = ["--endpoint", "http://127.0.0.1:\(port)"]
        return try CommandRunner.run(
            ["send", "--verbose"] + endpoint + ["--template", "fixtures/poll.json", "--topic", "com.example.app"]
                + options,
            timeout: .seconds(120)
        )
    }

    @Test(.requires(.openssl)) func toTheSinkOverTLSWithTokenAuthAndGoneTokensWrittenOut() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = folder + "/AuthKey_ABC123DEFG.p8"
        try OpenSSL.makeP256Key(at: key)
        let generated = try CommandRunner.run([
            "tokens", "generate", "--count", "3000", "--seed", "5", "--output", folder + "/tokens.txt",
        ])
        try #require(generated.status == 0, "\(generated.standardError)")
        let tokens = try String(contentsOfFile: folder + "/tokens.txt", encoding: .utf8).split(separator: "\n")
        let gone = tokens.enumerated().filter { $0.offset % 500 == 7 }.map { String($0.element) }
        try (gone.joined(separator: "\n") + "\n").write(toFile: folder + "/gone.txt", atomically: true, encoding: .utf8)

        let sink = try PeerProcess(
            CommandRunner.executable.path,
            [
                "sink", "--listen", "127.0.0.1:0", "--tls-self-signed", folder + "/tls", "--key-file", key,
                "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ", "--unregistered-tokens", folder + "/gone.txt",
            ]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--endpoint", "https://localhost:\(port)", "--ca-file", folder + "/tls/cert.pem",
                "--tokens",
                folder + "/tokens.txt", "--template", "fixtures/poll.json", "--topic", "com.example.app",
                "--key-file", key, "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ", "--connections", "2",
                "--streams", "100", "--gone-tokens", folder + "/gone-out.txt", "--output", folder + "/run",
            ],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.sent == 3000)
        #expect(summary.accepted == 2994 && summary.failed.isEmpty, "\(result.standardOutput)")
        #expect(summary.rejected == [.apns(.unregistered): 6])
        #expect(summary.reconciled == nil)
        #expect(try CommandRunner.summaryHoldsNull(in: folder + "/run", at: ["reconciled"]))
        let written = try String(contentsOfFile: folder + "/gone-out.txt", encoding: .utf8).split(separator: "\n")
        #expect(Set(written.map(String.init)) == Set(gone))
        let stopped = sink.stop()
        #expect(labelledCounts(stopped.output)["accepted"] == 2994, "\(stopped.output)")
    }

    @Test(.requires(.nghttpd)) func toNghttpdAPeerNobodyHereWrote() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sendToNghttpd(
            serving: folder,
            nghttpd: ["--echo-upload"],
            ["--generate", "5000", "--connections", "2", "--streams", "200", "--output", folder + "/run"]
        )
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.accepted == 5000)
        #expect(summary.requests == 5000)
    }

    @Test(.requires(.nghttpd)) func headersComeFromAScenarioFileAndOptionsWin() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try """
        # the morning call
        topic = com.example.app.voip
        push-type = voip
        priority = 5
        expiration = 0
        collapse-id = call-42
        apns-id = random

        """.write(toFile: folder + "/headers.scenario", atomically: true, encoding: .utf8)
        // nghttpd -v prints every header it receives.
        let (server, port) = try PeerProcess.cleartextNghttpd(serving: folder, ["-v"])
        defer { server.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "3", "--template",
                "fixtures/poll.json",
                "--scenario", folder + "/headers.scenario", "--priority", "10", "--connections", "1", "--output",
                folder + "/run", "--min-measured", "3",
            ],
            timeout: .seconds(60)
        )
        #expect(result.status == 3, "nghttpd answers 404: \(result.standardError)")
        let log = server.stop().output
        // The headers each request arrived with, from nghttpd's "[id=1] [  0.002] recv (stream_id=1) NAME: VALUE"
        // lines: each of the 3 requests with each header once, its value whole (the option's priority, not the file's).
        let received = log.split(separator: "\n").map {
            String($0.replacing(#/^\[id=[0-9]+\] \[ *[0-9.]+\] recv \(stream_id=[0-9]+\) /#, with: ""))
        }.joined(separator: "\n")
        for header in [
            "apns-topic: com.example.app.voip", "apns-push-type: voip", "apns-priority: 10", "apns-expiration: 0",
            "apns-collapse-id: call-42",
        ] {
            let name = String(header.prefix { $0 != ":" })
            #expect(lines(of: received, keyed: name + ": ") == Array(repeating: header, count: 3), "\(log)")
        }
        let ids = lines(of: received, keyed: "apns-id: ")
        #expect(
            ids.count == 3
                && ids.allSatisfy {
                    $0.wholeMatch(of: /apns-id: [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/)
                        != nil
                },
            "\(log)"
        )

        try "topic = com.example.app\n\npriority = 7\n".write(
            toFile: folder + "/bad.scenario",
            atomically: true,
            encoding: .utf8
        )
        let bad = try CommandRunner.run([
            "send", "--verbose", "--endpoint", "http://127.0.0.1:1", "--generate", "3", "--template",
            "fixtures/poll.json",
            "--scenario", folder + "/bad.scenario",
        ])
        #expect(bad.status == 64)
        #expect(
            errorLine(of: bad.standardError) == "error: \(folder)/bad.scenario:3: priority is 10, 5 or 1, not 7.",
            "\(bad.standardError)"
        )
        let unknown = try CommandRunner.run([
            "send", "--verbose", "--endpoint", "http://127.0.0.1:1", "--generate", "3", "--template",
            "fixtures/poll.json",
            "--scenario", folder + "/none.scenario",
        ])
        // A missing file, in the one form every option's takes (MissingInputFileTests).
        #expect(unknown.status == 1)
        #expect(
            errorLine(of: unknown.standardError)
                == "error: cannot read --scenario \(folder)/none.scenario: no such file",
            "\(unknown.standardError)"
        )
    }

    @Test func generatedAPNsIDsReachTheSinkAndStayTheSameOnRetries() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // One answer in five is a 500: those notifications are sent again with the same id.
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            [
                "sink", "--listen", "127.0.0.1:0", "--error", "InternalServerError:20%", "--capture",
                folder + "/capture.jsonl",
            ]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let result = try CommandRunner.send(
            to: port,
            ["--generate", "2000", "--apns-id", "random", "--attempts", "10", "--output", folder + "/run"],
            timeout: .seconds(120)
        )
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        sink.stop()
        let lines = try String(contentsOfFile: folder + "/capture.jsonl", encoding: .utf8).split(separator: "\n")
        var ids: [String: Set<String>] = [:]
        /// What the test reads of a line of the sink's capture.
        struct Captured: Decodable {
            var token: String
            var apnsID: String

            enum CodingKeys: String, CodingKey {
                case token
                case apnsID = "apns_id"
            }
        }
        for line in lines {
            let captured = try JSONDecoder().decode(Captured.self, from: Data(line.utf8))
            let token = captured.token
            let id = captured.apnsID
            #expect(
                id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil,
                "\(id)"
            )
            ids[token, default: []].insert(id)
        }
        #expect(lines.count > 2000, "retries are captured too: \(lines.count)")
        #expect(ids.count == 2000)
        #expect(ids.values.allSatisfy { $0.count == 1 }, "a notification's id changed between tries")
        #expect(Set(ids.values.flatMap { $0 }).count == 2000)
    }

    @Test(.requires(.nghttpd)) func repeatsWriteAFolderEachAndTheGateReadsTheirMedians() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sendToNghttpd(
            serving: folder,
            nghttpd: ["--echo-upload"],
            ["--generate", "500", "--repeat", "3", "--output", folder + "/runs"]
        )
        #expect(result.status == 0, "\(result.standardError)")
        let manifest = try #require(try RepeatManifest.read(in: folder + "/runs"))
        #expect(manifest.asked == 3 && manifest.finished == 3 && manifest.interrupted == nil, "\(manifest)")
        #expect(
            lines(of: result.standardOutput, keyed: "3 repeats in ")
                == ["3 repeats in \(folder)/runs: median (min … max, noise ±%)"],
            "\(result.standardOutput)"
        )
        #expect(result.standardOutput.contains(/throughput\s+[\d,]+\/s\s+\([\d,]+ … [\d,]+, ±[\d.]+%\)/))
        for index in 1...3 {
            #expect(try CommandRunner.summary(in: "\(folder)/runs/repeat-\(index)").accepted == 500)
        }
        let gate = try CommandRunner.run(["gate", folder + "/runs", "--threshold", "accepted == 500"])
        #expect(gate.status == 0, "\(gate.standardOutput)\(gate.standardError)")
        #expect(
            lines(of: gate.standardOutput, keyed: "medians of ") == ["medians of 3 repeats in \(folder)/runs"],
            "\(gate.standardOutput)"
        )
    }

    @Test(.requires(.nghttpd)) func theOpenModelToNghttpd() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try Self.sendToNghttpd(
            serving: folder,
            [
                "--generate", "100000", "--rate", "1000/s", "--duration", "1500ms", "--max-lag", "1s", "--output",
                folder + "/run",
            ]
        )
        // nghttpd answers 404 without an APNs reason: each is a failure, sent exactly on schedule.
        #expect(result.status == 3, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(
            openModelLag(in: result.standardOutput, schedule: "1000/s for 1.5 seconds", limit: "1000.0")
                .map { abs($0 - (summary.generatorLag?.max ?? -1)) <= 0.05 + 1e-9 } == true,
            "\(result.standardOutput)"
        )
        #expect(summary.sent == 1500)
        #expect(summary.requests == 1500)
        #expect(summary.failed == [.unexpectedResponse: 1500])
        #expect(summary.model == .open)
        #expect(summary.valid == true)
    }

    /// A token file of 500 lines for a schedule of 1,500 arrivals (1,000/s for 1.5 s): the 500
    /// are sent, and the 1,000 arrivals after the last token are counted unscheduled with their
    /// reason — in summary.json and in the printed summary — not sent late, not in the latency.
    @Test func aTokenFileShorterThanTheScheduleSaysHowManyArrivalsHadNoToken() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let generate = try CommandRunner.run(["tokens", "generate", "--count", "500", "--output", folder + "/t.txt"])
        #expect(generate.status == 0, "\(generate.standardError)")
        let (sink, port) = try CommandRunner.sink([])
        defer { sink.stop() }
        let result = try CommandRunner.send(
            to: port,
            [
                "--tokens", folder + "/t.txt", "--rate", "1000", "--duration", "1500ms", "--connections", "2",
                "--output", folder + "/run",
            ],
            timeout: .seconds(60)
        )
        // The tokens' end is the subject, not the pace: 0, or 4 for a generator a loaded machine held back.
        try expectValidOrLagged(status: result.status, folder: folder + "/run", result.standardError)
        #expect(
            result.standardOutput.contains(
                "unscheduled: 1,000 of 1,500 arrivals had no token (the tokens ran out 0.50 s"
            ),
            "\(result.standardOutput)"
        )
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.sent == 500)
        #expect(summary.unscheduled == 1000)
        #expect(summary.unscheduledReasons?.scheduleOver == 0)
        #expect(summary.unscheduledReasons?.tokensRanOut == 1000)
        // Only the 500 sent are in the latency: the seconds' counts add up to them.
        #expect(summary.intervals.map(\.latencyCount).reduce(0, +) == 500)
    }

    @Test(.requires(.curl)) func ctrlCStopsTheRunAndStillWritesWhatWasDone() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A slow sink: 200 ms an answer, 10 streams, so 100,000 notifications would take hours.
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--latency", "fixed:200ms"]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let admin = try sink.announcedPort(after: "admin on ")
        let send = try PeerProcess(
            CommandRunner.executable.path,
            [
                "send", "--verbose", "--endpoint", "http://127.0.0.1:\(port)", "--generate", "100000", "--template",
                CommandRunner.repositoryRoot + "/fixtures/poll.json", "--topic", "com.example.app", "--connections",
                "1", "--streams", "10", "--output", folder + "/run",
            ]
        )
        defer { send.stop() }
        // Interrupted once the sink has accepted some (its /stats), far from the end.
        let someAccepted = poll(timeout: .seconds(30), every: .milliseconds(100)) {
            (CommandRunner.sinkAccepted(admin: admin) ?? 0) >= 10
        }
        try #require(someAccepted, "the sink accepted nothing in 30 s")
        send.interrupt()
        let result = try send.wait(timeout: .seconds(20))
        #expect(result.status == 130, "\(result.errors)")
        #expect(lines(of: result.output, keyed: "stopped ") == ["stopped before the end"], "\(result.output)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.cancelled == true)
        #expect(summary.accepted > 0)
        // The ten in flight were answered (200 ms, within the grace); what was read ahead was
        // never sent, and is neither sent nor failed.
        #expect(summary.failed == [:], "\(summary.failed)")
        #expect(try #require(summary.unsent) > 0)
        #expect(summary.valid == false)
    }

    /// Case 11 of issue #48: a bad line after 6,000 good tokens ended the send with
    /// `Error: …:6001:1`, exit 1 and no summary — the sink had accepted them all, and the run's
    /// figures were gone. The folder is written, held invalid with the place, and what was
    /// sent stays counted.
    @Test func aBadTokenPartWayEndsTheRunWithItsFolderMarkedInvalid() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let generated = try CommandRunner.run([
            "tokens", "generate", "--count", "8000", "--seed", "3", "--output", folder + "/all.txt",
        ])
        try #require(generated.status == 0, "\(generated.standardError)")
        var lines = try String(contentsOfFile: folder + "/all.txt", encoding: .utf8).split(separator: "\n")
        lines.insert("not-a-token", at: 6000)
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: folder + "/tokens.txt",
            atomically: true,
            encoding: .utf8
        )
        let (sink, port) = try CommandRunner.sink(["--no-auth"])
        defer { sink.stop() }
        let result = try CommandRunner.send(
            to: port,
            ["--tokens", folder + "/tokens.txt", "--output", folder + "/run"]
        )
        #expect(result.status == 4, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        #expect(summary.valid == false)
        let reasons = summary.invalidity
        #expect(
            reasons.contains {
                guard case .tokenSetStopped(let at) = $0 else { return false }
                return at.hasPrefix("\(folder)/tokens.txt:6001:1: ")
            },
            "\(reasons)"
        )
        // Every token before the bad line went out and was answered.
        #expect(summary.sent == 6000)
        #expect(summary.accepted == 6000)
        let stopped = sink.stop()
        #expect(labelledCounts(stopped.output)["accepted"] == 6000, "\(stopped.output)")
    }

    @Test func badOptionsAreUsageErrors() throws {
        let base = [
            "send", "--verbose", "--generate", "10", "--template", "fixtures/poll.json", "--topic", "com.example.app",
        ]
        for extra in [
            ["--endpoint", "ftp://x"], ["--endpoint", "http://127.0.0.1:1", "--insecure"],
            ["--endpoint", "https://h", "--key-id", "A"], ["--endpoint", "https://h", "--priority", "7"],
            ["--endpoint", "https://h", "--token-refresh", "5m"], ["--endpoint", "https://h", "--connections", "0"],
            ["--endpoint", "https://h", "--rate", "0"], ["--endpoint", "https://h", "--stage", "10s"],
            ["--endpoint", "https://h", "--rate", "100", "--duration", "1s", "--stage", "1s:50"],
            ["--endpoint", "https://h", "--warm-up", "soon"], ["--endpoint", "https://h", "--max-lag", "0s"],
            ["--endpoint", "https://h", "--duration", "-1s"], ["--endpoint", "https://h", "--apns-id", "sequential"],
            ["--endpoint", "https://h", "--repeat", "0"], ["--endpoint", "https://h", "--max-backlog", "0s"],
        ] {
            let result = try CommandRunner.run(base + extra)
            #expect(result.status == 64, "\(extra): \(result.standardError)")
        }
        // A pipe is read once: --repeat would find it empty from the second run on.
        let fifo = NSTemporaryDirectory() + "fanout-fifo-\(UUID().uuidString)"
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let piped = try CommandRunner.run([
            "send", "--verbose", "--endpoint", "https://h", "--tokens", fifo, "--repeat", "3", "--template",
            "fixtures/poll.json",
            "--topic", "com.example.app",
        ])
        #expect(piped.status == 64, "\(piped.standardError)")
        #expect(
            piped.standardError.split(separator: "\n").first
                == "error: --repeat reads the tokens again each time: --tokens \(fifo) is a pipe or a device, read once; give a regular file.",
            "\(piped.standardError)"
        )
        // APNs's header rules are the library's; the command names the option that broke one.
        for (extra, said) in [
            (["--priority", "7"], "--priority: apns-priority is 10, 5 or 1, not 7."),
            (
                ["--collapse-id", String(repeating: "c", count: 65)],
                "--collapse-id: apns-collapse-id holds at most 64 bytes, not 65."
            ),
            (
                ["--push-type", "voip"],
                "--topic: apns-topic of a voip push is the bundle id then .voip, not com.example.app."
            ),
        ] {
            let result = try CommandRunner.run(base + ["--endpoint", "https://h"] + extra)
            #expect(result.status == 64, "\(extra): \(result.standardError)")
            #expect(result.standardError.contains(said), "\(extra): \(result.standardError)")
        }
        let output = NSTemporaryDirectory() + "fanout-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let unreachable = try withRefusingPort { port in
            try CommandRunner.run(
                base + ["--endpoint", "http://127.0.0.1:\(port)", "--connect-timeout", "1s", "--output", output],
                timeout: .seconds(90)
            )
        }
        #expect(unreachable.status == 5, "\(unreachable.standardError)")
        let unreachableSummary = try CommandRunner.summary(in: output)
        #expect(unreachableSummary.failed == [.unreachable(.connectionRefused): 10], "\(unreachable.standardOutput)")
        for extra in [["--connect-timeout", "0s"], ["--endpoint", "https://api.push.apple.com"]] {
            let result = try CommandRunner.run(base + ["--endpoint", "http://127.0.0.1:1"] + extra)
            #expect(result.status == 64, "\(extra): \(result.standardError)")
        }
    }
}
