import FanoutFCMSink
import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink --service fcm` as a user runs it: where it listens, the credentials file an SDK
/// loads, what its log says of each refusal, its summary on SIGTERM, and the options it refuses.
@Suite(.serialized) struct FCMSinkCommandTests {
    static func start(_ arguments: [String]) throws -> (PeerProcess, Int) {
        try CommandRunner.sink(["--service", "fcm"] + arguments)
    }

    /// curl's answer to one request: the status line's code and the body.
    static func curl(_ arguments: [String]) throws -> (status: String, body: String) {
        let result = try PeerProcess.run("curl", ["-sS", "--max-time", "20", "-w", "\n%{http_code}"] + arguments)
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    @Test(.requires(.curl)) func servesBothProtocolsLogsEachRefusalAndSummarisesOnSigterm() throws {
        let (sink, port) = try Self.start(["--no-auth", "--project", "proj-x"])
        defer { sink.stop() }
        let url = "http://127.0.0.1:\(port)/v1/projects/proj-x/messages:send"
        let bearer = ["-H", "authorization: Bearer anything"]
        let sent = try Self.curl(["--http2-prior-knowledge", "-d", #"{"message":{"token":"abc"}}"#, url] + bearer)
        #expect(sent.status == "200")
        let refusals: [(body: String, url: String, bearer: [String], status: String, log: String)] = [
            (
                #"{"message":{"token":"a","topic":"b"}}"#, url, bearer, "400",
                "invalid_argument: 400 INVALID_ARGUMENT: Exactly one of token, fid, topic or condition must be set; the message sets token, topic."
            ),
            (
                #"{"message":{"token":"a"}}"#, "http://127.0.0.1:\(port)/v1/projects/other/messages:send", bearer,
                "403",
                "wrong_project: a send to project other; the sink serves proj-x"
            ),
            (#"{"message":{"token":"a"}}"#, url, [], "401", "unauthenticated: no Authorization: Bearer header"),
        ]
        for refusal in refusals {
            let answer = try Self.curl(["--http1.1", "-d", refusal.body, refusal.url] + refusal.bearer)
            #expect(answer.status == refusal.status, "\(refusal.body): \(answer.body)")
        }
        let result = sink.stop()
        #expect(result.status == 0, "\(result.errors)")
        #expect(
            lines(of: result.output, keyed: "fcm sink: ")
                == ["fcm sink: 4 requests (h2 1, http/1.1 3) over 4 connections"],
            "\(result.output)"
        )
        #expect(
            lines(of: result.output, keyed: "  delivered ")
                == ["  delivered 1 · invalid_argument 1 · unauthenticated 1 · wrong_project 1"],
            "\(result.output)"
        )
        // The log names the peer, the outcome, and why: one line a refusal.
        let logged = lines(of: result.errors, keyed: "fanout sink: 127.0.0.1:").map {
            $0.split(separator: ": ", maxSplits: 2).dropFirst(2).joined()
        }
        #expect(logged == refusals.map(\.log), "\(result.errors)")
        #expect(
            lines(of: result.errors, keyed: "fanout sink: auth ")
                == ["fanout sink: auth is lenient (--no-auth): any bearer is taken; a request without one is still 401"]
        )
    }

    /// `--rtt 100ms`: the sink says the wire it puts in front, and curl's one request (h2c
    /// prior knowledge: its preface, SETTINGS and request leave together) is answered no sooner
    /// than the round trip.
    @Test(.requires(.curl)) func aWireInFrontIsSaidAndHoldsTheAnswer() throws {
        let (sink, port) = try Self.start(["--no-auth", "--project", "proj-x", "--rtt", "100ms"])
        defer { sink.stop() }
        let url = "http://127.0.0.1:\(port)/v1/projects/proj-x/messages:send"
        let sent = try PeerProcess.run(
            "curl",
            [
                "-sS", "--max-time", "20", "--http2-prior-knowledge", "-o", "/dev/null", "-w",
                "%{http_code} %{time_total}",
                "-d", #"{"message":{"token":"abc"}}"#, "-H", "authorization: Bearer anything", url,
            ]
        )
        let fields = sent.output.split(separator: " ")
        #expect(fields.first == "200", "\(sent.output) \(sent.errors)")
        let seconds = try #require(fields.last.flatMap { Double($0) }, "\(sent.output)")
        #expect(seconds >= 0.1, "answered after \(seconds) s")
        let result = sink.stop()
        #expect(
            lines(of: result.errors, keyed: "fanout sink: a wire of ")
                == [
                    "fanout sink: a wire of 100ms round trip in front (half of it each way): what the flow-control windows let the provider send is on it (at most 64 MiB held a connection, then reading waits)"
                ],
            "\(result.errors)"
        )
    }

    /// The proof issue #62 asks for: firebase-admin as shipped — FCM's URL untouched, its
    /// 100-connection adapter mounted for https://fcm.googleapis.com — reaches the sink because
    /// the hosts file says fcm.googleapis.com is 127.0.0.1 (new user, network and mount
    /// namespaces: `unshare -rnm`), trusts it by the CA variables, and gets its token from the
    /// token endpoint the written credentials name. Its successes are counted, and the tokens
    /// the sink holds unregistered raise UnregisteredError.
    @Test(.requires(.namespaces, .python3, .firebaseAdmin))
    func firebaseAdminAsShippedReachesTheSinkAtFCMsHost() throws {
        let folder = NSTemporaryDirectory() + "fanout-fcm-command-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sender = PythonPeer.path("fcm_send.py").replacingOccurrences(
            of: "/FanoutCommandTests/Peers/",
            with: "/FanoutFCMSinkTests/Peers/"
        )
        let tokens = (0..<8).map { "t\($0)" }
        let plan = try JSONSerialization.data(withJSONObject: [
            "calls": [["call": "send_each", "tokens": tokens], ["call": "send_each_async", "tokens": tokens]]
        ])
        let result = try PeerProcess.run(
            "unshare",
            ["-rnm", "python3", PythonPeer.path("fcm_unmodified.py"), CommandRunner.executable.path, folder, sender],
            input: plan,
            timeout: .seconds(180)
        )
        #expect(result.status == 0, "\(result.errors)")
        // A private key: its owner's to read.
        let written = try FileManager.default.attributesOfItem(atPath: folder + "/service-account.json")
        #expect(written[.posixPermissions] as? Int == 0o600)
        let run = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let sdkOutput = run["sdk_output"] as? String ?? ""
        #expect(run["sdk_status"] as? Int == 0, "\(run["sdk_errors"] ?? "")")
        var outcomes = [String: [String]]()
        for line in sdkOutput.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let results = try #require(object["results"] as? [[String]])
            outcomes[object["call"] as? String ?? ""] = results.map { $0[0] }
        }
        let sinkOutput = run["sink_output"] as? String ?? ""
        let sinkErrors = run["sink_errors"] as? String ?? ""
        let fates = tokens.map { FCMTokenFate.of($0, unregistered: 0.3, otherSender: 0) }
        // The eight tokens cover both cases the SDK is to tell apart.
        #expect(Set(fates) == [.registered, .unregistered])
        let expected = fates.map { $0 == .unregistered ? "UnregisteredError" : "ok" }
        #expect(outcomes["send_each"] == expected, "\(sdkOutput)")
        #expect(outcomes["send_each_async"] == expected, "\(sdkOutput)")
        let delivered = expected.filter { $0 == "ok" }.count
        #expect(
            lines(of: sinkOutput, keyed: "  delivered ")
                == ["  delivered \(2 * delivered) · unregistered \(2 * (tokens.count - delivered))"],
            "\(sinkOutput)"
        )
        // Both protocols served the sends (requests: HTTP/1.1; httpx: h2), and every token
        // the SDK used came from the sink's endpoint, on a grant it verified.
        let tokensLine = try #require(line(of: sinkOutput, keyed: "  tokens issued "), "\(sinkOutput)")
        let issued = try #require(
            middle(of: tokensLine, between: "  tokens issued ", and: ", refused 0").flatMap { Int($0) }
        )
        #expect(issued >= 1, "\(tokensLine)")
        let summary = try #require(line(of: sinkOutput, keyed: "fcm sink: "), "\(sinkOutput)")
        let requests =
            "fcm sink: \(2 * tokens.count + issued) requests (h2 \(tokens.count), http/1.1 \(tokens.count + issued)) over "
        #expect(middle(of: summary, between: requests, and: " connections") != nil, "\(summary)")
        // The log says which token each refusal was for, up to ten lines of a kind.
        let refusals = lines(of: sinkErrors, keyed: "fanout sink: 127.0.0.1:").filter {
            $0.split(separator: ": ", maxSplits: 2).last?.hasPrefix("unregistered: token ") == true
        }
        #expect(refusals.count == min(10, 2 * (tokens.count - delivered)), "\(sinkErrors)")
        #expect(
            lines(of: sinkErrors, keyed: "fanout sink: wrote ")
                == [
                    "fanout sink: wrote \(folder)/service-account.json: an SDK loads it as its credentials and gets its token from https://127.0.0.1:443/token"
                ]
        )
    }

    @Test func optionsOfTheOtherServiceAreRefusedByName() throws {
        let cases: [([String], String)] = [
            (
                ["sink", "--service", "fcm", "--topic", "com.example", "--capture", "seen.jsonl"],
                "error: --service fcm does not take --capture, --topic: they mock APNs alone (docs/fcm.md)."
            ),
            (
                ["sink", "--project", "p", "--fcm-quota", "10/1m"],
                "error: --project, --fcm-quota are FCM's: add --service fcm."
            ),
            (
                ["sink", "--service", "fcm", "--no-auth", "--fcm-credentials-out", "/tmp/x"],
                "error: --no-auth takes any bearer: it has no service account to trust (--fcm-credentials) or write (--fcm-credentials-out)."
            ),
            (
                ["sink", "--service", "fcm", "--fcm-quota", "0/1m"],
                "error: --fcm-quota takes whole messages a window, like 600000/1m, or off; got 0/1m."
            ),
            (
                ["sink", "--service", "fcm", "--fcm-device-limits", "300,200"],
                "error: --fcm-device-limits takes messages a minute and an hour, like 240,5000 (hour ≥ minute ≥ 1), or off; got 300,200."
            ),
            (
                ["sink", "--service", "fcm", "--project", "a/b"],
                "error: --project takes a project id of letters, digits and hyphens; got a/b."
            ),
            (
                ["sink", "--service", "fcm", "--fcm-unregistered", "60%", "--fcm-other-sender", "50%"],
                "error: --fcm-unregistered and --fcm-other-sender add up to more than 100%."
            ),
            // The wire, the latency and its seed, the tokens held unregistered and the GOAWAY
            // after N are the parts of a scenario FCM's sink takes; the rest is APNs'.
            (
                ["sink", "--service", "fcm", "--rtt", "80ms", "--latency", "fixed:5ms", "--error", "Unregistered:1%"],
                "error: --service fcm does not take --error: it mocks APNs alone (docs/fcm.md)."
            ),
            (
                ["sink", "--service", "fcm", "--goaway-after-requests", "5:TooManyRequests"],
                "error: --goaway-after-requests 5:TooManyRequests: FCM's GOAWAY carries no APNs reason: give N alone."
            ),
            // Shutdown, the APNs sink's reason when none is written, is a reason all the same.
            (
                ["sink", "--service", "fcm", "--goaway-after-requests", "5:Shutdown"],
                "error: --goaway-after-requests 5:Shutdown: FCM's GOAWAY carries no APNs reason: give N alone."
            ),
            (
                ["sink", "--service", "fcm", "--plan-rtt", "80ms"],
                "error: --plan-rtt measures the provider: add --output DIR."
            ),
            (
                ["sink", "--service", "fcm", "--output", "/tmp/x", "--min-measured", "0"],
                "error: --min-measured must be at least 1; got 0."
            ),
            // How it ends, as the APNs sink's: checked alike.
            (
                ["sink", "--service", "fcm", "--trigger", "true"],
                "error: --trigger measures the provider: add --output DIR."
            ),
            (
                ["sink", "--service", "fcm", "--first-request-within", "5s"],
                "error: --first-request-within bounds --idle-exit's wait for a first request: add --idle-exit."
            ),
            (
                ["sink", "--service", "fcm", "--admin", "nowhere"],
                "error: --admin takes HOST:PORT, for example 127.0.0.1:2197; got nowhere."
            ),
            (
                ["sink", "--service", "fcm", "--rtt", "1s", "--bandwidth", "10Gbit"],
                "error: rtt and bandwidth put 596 MiB on the wire each way, over the cap of 64 MiB a connection: lower the bandwidth or the round trip."
            ),
        ]
        for (arguments, message) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(line(of: result.standardError, keyed: "error: ") == message, "\(result.standardError)")
        }
        let missing = try CommandRunner.run(
            ["sink", "--service", "fcm", "--listen", "127.0.0.1:0", "--fcm-credentials", "/nonexistent.json"]
        )
        #expect(missing.status == 1)
        #expect(
            errorLine(of: missing.standardError)?.hasPrefix(
                "error: --fcm-credentials /nonexistent.json: cannot read it as JSON: "
            ) == true,
            "\(missing.standardError)"
        )
    }

    /// `--output DIR`: the sink as the planted bad provider's instrument. Its folder is a sink's
    /// folder with FCM's card, which `fanout gate` judges rule by rule.
    @Test(.requires(.python3, .firebaseAdmin)) func anOutputFolderHoldsTheCardThatGateJudges() throws {
        let folder = NSTemporaryDirectory() + "fanout-fcm-card-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try Self.start([
            "--project", "fanout-test", "--fcm-quota", "11/1m", "--fcm-unregistered", "30%", "--fcm-credentials-out",
            folder, "--output", folder + "/out", "--min-measured", "10",
        ])
        defer { sink.stop() }
        let tokens = (0..<40).map { "planted-device-\($0)" }
        func fate(_ token: String) -> FCMTokenFate { FCMTokenFate.of(token, unregistered: 0.3, otherSender: 0) }
        let plan: [String: Any] = [
            "registered": Array(tokens.filter { fate($0) == .registered }.prefix(8)),
            "unregistered": try #require(tokens.first { fate($0) == .unregistered }),
        ]
        let provider = try PeerProcess.run(
            "python3",
            [
                // The in-process card's planted provider (FanoutFCMSinkTests), here against the command.
                PythonPeer.path(
                    "fcm_bad_provider.py",
                    besides: repositoryRoot + "/Tests/FanoutFCMSinkTests/FCMProviderCardTests.swift"
                ),
                folder + "/service-account.json", "127.0.0.1", String(port),
            ],
            input: try JSONSerialization.data(withJSONObject: plan),
            timeout: .seconds(120)
        )
        #expect(provider.status == 0, "\(provider.errors)")
        let stopped = sink.stop()
        #expect(stopped.status == 0, "\(stopped.errors)")
        let (summary, counts, violations) = try CommandRunner.providerCard(in: folder + "/out")
        #expect(summary["sent"] as? Int == 17)
        #expect(summary["accepted"] as? Int == 6)
        #expect(
            summary["rejected"] as? [String: Int] == ["INVALID_ARGUMENT": 2, "UNREGISTERED": 3, "QUOTA_EXCEEDED": 3]
        )
        #expect(
            counts == [
                "permanent-retried": 3, "fast-retry": 1, "stream-limit": 0, "after-goaway": 0, "churn": 2,
                "quota-ignored": 1, "client-errors": 8, "duplicate": 1, "access-token": 2, "bearer": 3,
            ]
        )
        #expect(violations == 21)
        let gate = try CommandRunner.run([
            "gate", folder + "/out", "--threshold", "violations.bearer <= 3", "--threshold",
            "violations.duplicate == 0",
        ])
        #expect(gate.status == 1, "\(gate.standardOutput) \(gate.standardError)")
        #expect(
            lines(of: gate.standardOutput, keyed: "violations.")
                == [
                    "violations.bearer <= 3      measured 3   limit 3   pass",
                    "violations.duplicate == 0   measured 1   limit 0   FAIL",
                ],
            "\(gate.standardOutput)"
        )
    }
}
