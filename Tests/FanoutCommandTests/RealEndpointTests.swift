import FanoutAPNs
import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutReport
import FanoutResults
import FanoutRun
import FanoutSink
import FanoutTestSupport
import Foundation
import Testing

/// Real endpoints (issue #34): every way a connection can fail to reach an answer, against
/// servers nobody here wrote (nghttpd, Python's http.server, OpenSSL's s_server), named on
/// standard error and in summary.json, exit 5, fast; Apple's hosts refused for synthetic tokens
/// before any socket; `fanout probe` against a sink of known latency and stream limits.
@Suite(.serialized) struct RealEndpointTests {
    static let send = [
        "send", "--verbose", "--generate", "10", "--template", "fixtures/poll.json", "--topic", "com.example.app",
    ]

    /// Below `--connect-timeout`'s default 10 s: the run ended on the cause, not by waiting it
    /// out. How far below is the machine's (a debug build's start and its folder's writing took
    /// 3.7 s on a loaded one); the 1.5 s target is measured by `scripts/bench/endpoints.sh` on a
    /// release build.
    static let fast: Duration = .seconds(10)

    /// A folder for one case's files, removed by the caller.
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-endpoint-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// nghttpd over TLS with `key` and `certificate`, serving `folder`, once it listens; the
    /// caller stops it.
    static func nghttpd(serving folder: String, key: String, certificate: String) throws -> (PeerProcess, Int) {
        let server = try PeerProcess("nghttpd", ["-d", folder, "0", key, certificate])
        do {
            return (server, try listeningPort(of: server.processIdentifier))
        } catch {
            server.stop()
            throw error
        }
    }

    /// Three device tokens in `folder/tokens.txt`; its path.
    static func writeTokens(in folder: String) throws -> String {
        let path = folder + "/tokens.txt"
        let tokens = (1...3).map { String(repeating: String($0), count: 64) + "\n" }.joined()
        try Data(tokens.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// `fanout send` to `endpoint`: exit 5 within `within`, one stderr line naming `address`,
    /// `cause`'s phrase, the detail found (`detail`, when given) and `cause`'s advice, whole as
    /// `RunSummary.unreachableLine` writes it, and summary.json's failed reasons holding `cause`.
    static func expectUnreachable(
        _ endpoint: String,
        _ extra: [String] = [],
        address: String,
        phrase: String,
        cause: UnreachableCause,
        detail expectedDetail: String? = nil,
        within: Duration = fast,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let output = try folder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let started = ContinuousClock.now
        let result = try CommandRunner.run(
            send + ["--endpoint", endpoint, "--output", output] + extra,
            timeout: .seconds(60)
        )
        let elapsed = ContinuousClock.now - started
        #expect(result.status == 5, "\(result.standardError)", sourceLocation: sourceLocation)
        #expect(elapsed < within, "took \(elapsed)", sourceLocation: sourceLocation)
        let errorLines = lines(of: result.standardError, keyed: "error: ")
        #expect(errorLines.count == 1, "\(result.standardError)", sourceLocation: sourceLocation)
        let line = errorLines.first ?? ""
        // The detail is the system's or the peer's wording (an errno, a resolver's message): the
        // rest of the line is Fanout's, whole.
        let head = "error: could not reach \(address): \(phrase) ("
        let detail = middle(of: line, between: head, and: ")" + ": " + EndpointFailure(cause, "").advice)
        #expect(detail?.isEmpty == false, "\(line)", sourceLocation: sourceLocation)
        if let expectedDetail { #expect(detail == expectedDetail, "\(line)", sourceLocation: sourceLocation) }
        let failure = EndpointFailure(cause, detail ?? "")
        #expect(failure.phrase == phrase, sourceLocation: sourceLocation)
        let host = String(address[..<address.lastIndex(of: ":")!])
        let port = Int(address[address.index(after: address.lastIndex(of: ":")!)...])!
        #expect(
            line == RunSummary.unreachableLine(failure, host: host, port: port),
            "\(line)",
            sourceLocation: sourceLocation
        )
        let summary = try CommandRunner.summary(in: output)
        #expect(
            summary.failed == [.unreachable(cause): 10],
            "\(summary.failed)",
            sourceLocation: sourceLocation
        )
        #expect(summary.valid == false, sourceLocation: sourceLocation)
        // Nothing was answered: the summaries say so instead of a rate or percentiles.
        let counts = result.standardOutput.split(separator: "\n").first.map(String.init) ?? ""
        let shape = #/(\d+) notifications to (\S+) in ([0-9.]+) s over (\d+) connections? × (\d+) streams: no answers/#
        let said = try #require(
            counts.wholeMatch(of: shape),
            "\(result.standardOutput)",
            sourceLocation: sourceLocation
        )
        #expect(said.1 == "10", "\(counts)", sourceLocation: sourceLocation)
        #expect(said.2 == (try SendJob.Endpoint(parsing: endpoint)).description, sourceLocation: sourceLocation)
        #expect(Double(said.3) != nil && Int(said.4) != nil && Int(said.5) != nil, sourceLocation: sourceLocation)
        #expect(
            lines(of: result.standardOutput, keyed: "latency") == ["latency: no answers"],
            "\(result.standardOutput)",
            sourceLocation: sourceLocation
        )
        // No figure per notification: the CPU line says the seconds alone.
        let cpu = lines(of: result.standardOutput, keyed: "cpu")
        let seconds =
            cpu.count == 1
            ? middle(of: cpu[0], between: "cpu: sender ", and: " s, none per notification (no answers)") : nil
        #expect(seconds.flatMap { Double($0) } != nil, "\(result.standardOutput)", sourceLocation: sourceLocation)
        let markdown = MarkdownDocument(try String(contentsOfFile: output + "/summary.md", encoding: .utf8))
        #expect(
            markdown.lines.count { $0 == "Latency: no answers." } == 1 && markdown.table("latency") == nil,
            "\(markdown)",
            sourceLocation: sourceLocation
        )
        let html = HTMLDocument(try String(contentsOfFile: output + "/report.html", encoding: .utf8))
        #expect(html.texts("h1") == ["Fanout run: no answers"], sourceLocation: sourceLocation)
        #expect(html.texts("h2") == ["Outcomes", "Configuration", "Environment"], sourceLocation: sourceLocation)
        #expect(html.chart("latency percentile spectrum") == nil, sourceLocation: sourceLocation)
        // A gate on it cannot pass: the run is invalid.
        let gate = try CommandRunner.run(["gate", output, "--threshold", "p99 < 1000ms"])
        #expect(gate.status == 2, "\(gate.standardOutput)\(gate.standardError)", sourceLocation: sourceLocation)
    }

    @Test func aClosedPortIsRetriedUntilTheConnectTimeoutThenNamed() throws {
        let started = ContinuousClock.now
        try withRefusingPort { port in
            try Self.expectUnreachable(
                "http://127.0.0.1:\(port)",
                ["--connect-timeout", "1s"],
                address: "127.0.0.1:\(port)",
                phrase: "connection refused",
                cause: .connectionRefused
            )
        }
        // Tried for the whole second, not given up on at the first refusal.
        #expect(ContinuousClock.now - started >= .seconds(1))
    }

    /// A search stops at its first step when the endpoint cannot be reached: no step measures it.
    @Test func aSearchOfAnUnreachableEndpointStopsAtOnce() throws {
        let output = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        try withRefusingPort { port in
            let result = try CommandRunner.run(
                [
                    "search", "--endpoint", "http://127.0.0.1:\(port)", "--template", "fixtures/poll.json", "--topic",
                    "com.example.app", "--slo", "p99 < 50ms", "--connect-timeout", "1s", "--output", output,
                ],
                timeout: .seconds(60)
            )
            #expect(result.status == 5, "\(result.standardError)")
            #expect(
                errorLine(of: result.standardError)
                    == RunSummary.unreachableLine(
                        EndpointFailure(.connectionRefused, "ECONNREFUSED"),
                        host: "127.0.0.1",
                        port: port
                    ),
                "\(result.standardError)"
            )
        }
        #expect(!FileManager.default.fileExists(atPath: output + "/step-02"))
    }

    @Test func anUnresolvableNameIsNamed() throws {
        try Self.expectUnreachable(
            "https://fanout-test.invalid",
            address: "fanout-test.invalid:443",
            phrase: "name not resolved",
            cause: .nameNotResolved
        )
    }

    @Test(.requires(.nghttpd)) func aSelfSignedCertificateWithoutCAFileIsNotTrusted() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["localhost"])
        let (server, port) = try Self.nghttpd(serving: folder, key: files.key, certificate: files.certificate)
        defer { server.stop() }
        try Self.expectUnreachable(
            "https://localhost:\(port)",
            address: "localhost:\(port)",
            phrase: "certificate not trusted",
            cause: .certificateNotTrusted
        )
        // With its CA the same server is reached: nghttpd answers (404, no APNs reason) and the
        // run ends as any answered run does.
        let output = folder + "/trusted"
        let trusted = try CommandRunner.run(
            Self.send + [
                "--endpoint", "https://localhost:\(port)", "--ca-file", files.certificate, "--output", output,
                "--min-measured", "10",
            ]
        )
        #expect(trusted.status == 3, "\(trusted.standardError)")
        #expect(errorLine(of: trusted.standardError) == nil, "\(trusted.standardError)")
        #expect(try CommandRunner.summary(in: output).failed == [.unexpectedResponse: 10])
    }

    /// nghttpd over TLS with the key and certificate `write` puts in a fresh folder: a send that
    /// trusts that certificate (`--ca-file`) must still not reach it, and say why.
    static func expectCertificateRefused(
        phrase: String,
        cause: UnreachableCause,
        detail: String? = nil,
        _ write: (_ folder: String) throws -> (key: String, certificate: String)
    ) throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try write(folder)
        let (server, port) = try nghttpd(serving: folder, key: files.key, certificate: files.certificate)
        defer { server.stop() }
        try expectUnreachable(
            "https://localhost:\(port)",
            ["--ca-file", files.certificate],
            address: "localhost:\(port)",
            phrase: phrase,
            cause: cause,
            detail: detail
        )
    }

    @Test(.requires(.nghttpd)) func anExpiredCertificateIsSaidToBeExpired() throws {
        try Self.expectCertificateRefused(
            phrase: "certificate expired",
            cause: .certificateExpired,
            detail: "expired 2020-10-13"
        ) { folder in
            let issued = Date(timeIntervalSince1970: 1_600_000_000)
            let files = try SinkCertificates.writeSelfSigned(
                into: folder,
                hosts: ["localhost"],
                validity: issued..<issued.addingTimeInterval(30 * 24 * 3600)
            )
            return (files.key, files.certificate)
        }
    }

    @Test(.requires(.nghttpd, .openssl)) func aCertificateForAnotherNameIsAMismatch() throws {
        try Self.expectCertificateRefused(
            phrase: "certificate name mismatch",
            cause: .certificateNameMismatch
        ) { folder in
            try OpenSSL.run([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                folder + "/key.pem", "-out", folder + "/cert.pem", "-days", "30", "-subj", "/CN=other.example",
                "-addext", "subjectAltName=DNS:other.example",
            ])
            return (folder + "/key.pem", folder + "/cert.pem")
        }
    }

    @Test(.requires(.python3)) func anHTTP1ServerIsNotHTTP2() throws {
        let server = try PeerProcess("python3", ["-m", "http.server", "0", "--bind", "127.0.0.1"])
        defer { server.stop() }
        let port = try listeningPort(of: server.processIdentifier)
        try Self.expectUnreachable(
            "http://127.0.0.1:\(port)",
            address: "127.0.0.1:\(port)",
            phrase: "not HTTP/2",
            cause: .notHTTP2
        )
    }

    @Test(.requires(.openssl), arguments: [["-alpn", "http/1.1"], []])
    func aTLSServerWithoutH2IsNamed(alpn: [String]) throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["localhost"])
        let server = try PeerProcess(
            "openssl",
            ["s_server", "-accept", "127.0.0.1:0", "-cert", files.certificate, "-key", files.key, "-www", "-quiet"]
                + alpn
        )
        defer { server.stop() }
        let port = try listeningPort(of: server.processIdentifier)
        try Self.expectUnreachable(
            "https://localhost:\(port)",
            ["--ca-file", files.certificate],
            address: "localhost:\(port)",
            phrase: "ALPN did not choose h2",
            cause: .alpnNotH2
        )
    }

    /// A sink wanting provider tokens answers every connection's first request 403
    /// MissingProviderToken: the run ends at once instead of rejecting the whole set.
    @Test(.requires(.openssl)) func a403OnEveryConnectionsFirstRequestEndsTheRun() throws {
        let output = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        try OpenSSL.makeP256Key(at: output + "/AuthKey.p8")
        let (sink, port) = try CommandRunner.sink([
            "--key-file", output + "/AuthKey.p8", "--key-id", "ABCDE12345", "--team-id", "TEAM123456",
        ])
        defer { sink.stop() }
        let result = try CommandRunner.run(
            [
                "send", "--verbose", "--generate", "1000000", "--template", "fixtures/poll.json", "--topic",
                "com.example.app",
                "--endpoint", "http://127.0.0.1:\(port)", "--connections", "2", "--streams", "10", "--output", output,
            ],
            timeout: .seconds(60)
        )
        #expect(result.status == 5, "\(result.standardError)")
        let forbidden = try #require(EndpointFailure.forbidden(status: 403, reason: .apns(.missingProviderToken)))
        #expect(
            errorLine(of: result.standardError)
                == RunSummary.unreachableLine(forbidden, host: "127.0.0.1", port: port),
            "\(result.standardError)"
        )
        let summary = try CommandRunner.summary(in: output)
        let rejected = summary.rejected[.apns(.missingProviderToken)] ?? 0
        let failed = summary.failed[.unreachable(.forbidden)] ?? 0
        // What was sent before the second connection's answer was rejected; nothing more went out.
        #expect(rejected >= 2 && rejected < 1000, "rejected \(rejected)")
        #expect(failed > 0)
        #expect(summary.sent < 1_000_000)
    }

    /// Synthetic tokens to Apple's hosts are refused before any socket: `api.push.apple.com`
    /// is made to resolve to a local listener (a private /etc/hosts in a user and mount
    /// namespace), which counts its connections — none for the refused send, one for a send
    /// the rules allow, which proves the name led there.
    @Test(.requires(.python3)) func syntheticTokensToAppleAreRefusedWithoutAConnection() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data("127.0.0.1 api.push.apple.com api.sandbox.push.apple.com\n".utf8).write(
            to: URL(fileURLWithPath: folder + "/hosts")
        )
        let tokens = try Self.writeTokens(in: folder)
        let counted = folder + "/accepted"
        let listener = try PeerProcess("python3", [PythonPeer.path("count_connections.py"), "0", counted])
        defer { listener.stop() }
        // Read from /proc, not by connecting: the listener has counted nothing yet.
        let port = try listeningPort(of: listener.processIdentifier)
        func connections() -> Int {
            ((try? String(contentsOfFile: counted, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        let before = connections()
        #expect(before == 0)
        func send(_ arguments: [String]) throws -> PeerProcess.Result {
            let command = ([CommandRunner.executable.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            return try PeerProcess.run(
                "unshare",
                [
                    "-rm", "sh", "-c",
                    "cd '\(CommandRunner.repositoryRoot)' && mount --bind '\(folder)/hosts' /etc/hosts && exec \(command)",
                ]
            )
        }
        let refused = try send(
            Self.send + ["--endpoint", "https://api.push.apple.com:\(port)", "--output", folder + "/refused"]
        )
        #expect(refused.status == 64, "\(refused.errors)")
        let apple = SendJob.Endpoint(tls: true, host: "api.push.apple.com", port: port)
        #expect(
            errorLine(of: refused.errors) == "error: "
                + (apple.refusal(generatedTokens: true, production: false) ?? ""),
            "\(refused.errors)"
        )
        let production = try send(
            [
                "send", "--verbose", "--tokens", tokens, "--template", "fixtures/poll.json", "--topic",
                "com.example.app", "--endpoint", "https://api.push.apple.com:\(port)",
            ]
        )
        #expect(production.status == 64, "\(production.errors)")
        #expect(
            errorLine(of: production.errors) == "error: "
                + (apple.refusal(generatedTokens: false, production: false) ?? ""),
            "\(production.errors)"
        )
        #expect(connections() == before, "a refused send opened a connection")
        // The control: real tokens, --production: the name leads to the listener (which does not
        // speak TLS, so the run ends unreachable), and the rate cap is said.
        let allowed = try send(
            [
                "send", "--verbose", "--tokens", tokens, "--template", "fixtures/poll.json", "--topic",
                "com.example.app", "--endpoint", "https://api.push.apple.com:\(port)", "--production",
                "--connect-timeout", "1s", "--output", folder + "/allowed",
            ]
        )
        #expect(allowed.status == 5, "\(allowed.errors)")
        #expect(
            try CommandRunner.summary(in: folder + "/allowed").schedule?.capped
                == "capped at 1000/s: Apple's APNs without --rate or --stage (give one to choose the pace)",
            "\(allowed.output)"
        )
        #expect(connections() > before, "the name did not lead to the listener")
        // cluster render applies the same rules to the options it carries.
        let render = try CommandRunner.run(
            ["cluster", "render", "--shards", "2", "--image", "x", "--"] + Self.send.dropFirst()
                + ["--endpoint", "https://api.sandbox.push.apple.com"]
        )
        #expect(render.status == 64, "\(render.standardError)")
        let sandbox = SendJob.Endpoint(tls: true, host: "api.sandbox.push.apple.com", port: 443)
        #expect(
            errorLine(of: render.standardError)
                == "error: the send options after --: "
                + (sandbox.refusal(generatedTokens: true, production: false) ?? ""),
            "\(render.standardError)"
        )
    }

    /// The probe against a sink holding each answer 80 ms, allowing 1 stream until the first
    /// accepted request and 500 after: processing 77–83 ms, streams 1 then 500; the plan takes
    /// them and names the probe.
    @Test func theProbeMeasuresWhatAPlanAssumes() throws {
        let tokens = try Self.writeTokens(in: try Self.folder())
        defer { try? FileManager.default.removeItem(atPath: (tokens as NSString).deletingLastPathComponent) }
        let (sink, port) = try CommandRunner.sink([
            "--no-auth", "--latency", "fixed:80ms", "--initial-streams", "1", "--max-streams", "500",
        ])
        defer { sink.stop() }
        let output = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: output) }
        let probe = try CommandRunner.run(
            [
                "probe", "http://127.0.0.1:\(port)", "--tokens", tokens, "--topic",
                "com.example.app", "--count", "20", "--output", output,
            ],
            timeout: .seconds(60)
        )
        #expect(probe.status == 0, "\(probe.standardError)")
        let document = try ProbeDocument.load(output + "/probe.json")
        let p50 = try #require(document.processing?.p50)
        #expect((77...83).contains(p50), "processing p50 \(p50) ms")
        #expect(document.streams.first == 1)
        #expect(document.streams.afterFirstAccepted == 500)
        #expect(document.streams.peakInFlight == 20)
        #expect(document.answers == ["200": 40])
        let ping = try #require(document.pingRoundTrip?.p50)
        #expect(ping < 5, "PING p50 \(ping) ms on loopback")
        #expect(
            lines(of: probe.standardOutput, keyed: "  streams a connection gets: ")
                == ["  streams a connection gets: 1 at first, 500 after the first accepted request"],
            "\(probe.standardOutput)"
        )
        let plan = try CommandRunner.run([
            "plan", "--devices", "1M", "--deadline", "60s", "--probe", output + "/probe.json", "--output",
            output + "/plan",
        ])
        #expect(plan.status == 0, "\(plan.standardError)")
        let planned = try CommandRunner.plan(in: output + "/plan")
        #expect(planned.streamsPerConnection == 500)
        let figures = try PlanJob.probeFigures(output + "/probe.json")
        #expect(document.endpoint == "http://127.0.0.1:\(port)")
        #expect(
            planned.assumptions.first
                == "500 concurrent streams a connection, a round trip of \(CapacityPlan.spoken(figures.roundTrip)) and "
                + "\(CapacityPlan.spoken(figures.processing)) of processing per request: measured by \(figures.source)",
            "\(planned.assumptions)"
        )
        // --probe gives those figures: giving them too is a mistake, and a probe without
        // requests cannot plan.
        let both = try CommandRunner.run([
            "plan", "--devices", "1M", "--deadline", "60s", "--probe", output + "/probe.json", "--rtt", "80ms",
        ])
        #expect(both.status == 64)
        // Bad input: a token file with a bad line says where; --count out of its range.
        let bad = output + "/bad.txt"
        try Data((String(repeating: "a", count: 64) + "\nnot-a-token\n").utf8).write(to: URL(fileURLWithPath: bad))
        let badTokens = try CommandRunner.run(
            ["probe", "http://127.0.0.1:\(port)", "--tokens", bad, "--topic", "com.example.app"]
        )
        #expect(badTokens.status == 1)
        #expect(
            errorLine(of: badTokens.standardError)
                == "error: --tokens \(bad):2: character 1 of the device token is 'n', not a hex digit",
            "\(badTokens.standardError)"
        )
        for count in ["0", "1001"] {
            let result = try CommandRunner.run(["probe", "http://127.0.0.1:\(port)", "--count", count])
            #expect(result.status == 64, "--count \(count): \(result.standardError)")
        }
        let bare = try CommandRunner.run(["probe", "http://127.0.0.1:\(port)", "--output", output + "/bare"])
        #expect(bare.status == 0, "\(bare.standardError)")
        let unplanned = try CommandRunner.run([
            "plan", "--devices", "1M", "--deadline", "60s", "--probe", output + "/bare/probe.json",
        ])
        #expect(unplanned.status == 64)
        let bareProbe = output + "/bare/probe.json"
        #expect(
            errorLine(of: unplanned.standardError)
                == "error: "
                + JobError.holdsNo(
                    .optionValue("--probe", bareProbe),
                    "request round trips: probe with --tokens FILE of real device tokens"
                ).description + ".",
            "\(unplanned.standardError)"
        )
    }

    /// Over TLS the probe says the version and ALPN, and a probe that cannot connect exits 5
    /// with the cause.
    @Test(.requires(.nghttpd)) func theProbeOverTLSAndAnUnreachableProbe() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["localhost"])
        let (server, port) = try Self.nghttpd(serving: folder, key: files.key, certificate: files.certificate)
        defer { server.stop() }
        let probe = try CommandRunner.run([
            "probe", "https://localhost:\(port)", "--ca-file", files.certificate, "--output", folder + "/tls",
        ])
        #expect(probe.status == 0, "\(probe.standardError)")
        #expect(
            lines(of: probe.standardOutput, keyed: "  TLS: ") == ["  TLS: TLSv1.3, ALPN h2"],
            "\(probe.standardOutput)"
        )
        let document = try ProbeDocument.load(folder + "/tls/probe.json")
        let ping = try #require(document.pingRoundTrip)
        let milliseconds = { (value: Double) in String(format: value < 10 ? "%.2f ms" : "%.1f ms", value) }
        #expect(
            lines(of: probe.standardOutput, keyed: "  PING round trip: ")
                == ["  PING round trip: p50 \(milliseconds(ping.p50)), p99 \(milliseconds(ping.p99)) (\(ping.count))"],
            "\(probe.standardOutput)"
        )
        let untrusted = try CommandRunner.run(["probe", "https://localhost:\(port)", "--output", folder + "/untrusted"])
        #expect(untrusted.status == 5)
        let untrustedLine = errorLine(of: untrusted.standardError) ?? ""
        let why = middle(
            of: untrustedLine,
            between: "error: could not reach localhost:\(port): certificate not trusted (",
            and: "): " + EndpointFailure(.certificateNotTrusted, "").advice
        )
        #expect(
            why.map {
                untrustedLine
                    == RunSummary.unreachableLine(
                        EndpointFailure(.certificateNotTrusted, $0),
                        host: "localhost",
                        port: port
                    )
            } == true,
            "\(untrusted.standardError)"
        )
    }
}
