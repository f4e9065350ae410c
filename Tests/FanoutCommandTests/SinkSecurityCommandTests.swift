import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink` over TLS as clients nobody here wrote see it: a self-signed certificate curl
/// and OpenSSL verify, certificate auth with client certificates made by OpenSSL, and the
/// admin endpoint, capture and scenario file given on the command line.
@Suite(.serialized) struct SinkSecurityCommandTests {
    static let token = String(repeating: "ab", count: 32)

    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-sink-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A P-256 key and a certificate for `subject`, signed by the CA in `ca` (its .pem and .key)
    /// or by itself.
    static func certificate(_ name: String, subject: String, in folder: String, ca: String? = nil) throws {
        let key = "\(folder)/\(name).key"
        try OpenSSL.makeP256Key(at: key)
        if let ca {
            try OpenSSL.run(["req", "-new", "-key", key, "-subj", subject, "-out", "\(folder)/\(name).csr"])
            try OpenSSL.run([
                "x509", "-req", "-in", "\(folder)/\(name).csr", "-CA", "\(ca).pem", "-CAkey", "\(ca).key",
                "-set_serial", "7", "-days", "2", "-out", "\(folder)/\(name).pem",
            ])
        } else {
            try OpenSSL.run([
                "req", "-x509", "-key", key, "-subj", subject, "-days", "2", "-out", "\(folder)/\(name).pem",
            ])
        }
    }

    /// One request with curl: `status body`, or `curl exit N` when no response came.
    static func push(
        port: Int,
        host: String = "localhost",
        trust: String,
        client: String? = nil,
        topic: String? = nil
    ) throws -> String {
        var arguments = [
            "-s", "--http2", "--max-time", "10", "--cacert", trust, "-d", "@\(repositoryRoot)/fixtures/poll.json",
            "-w", " %{http_code}",
        ]
        if let client { arguments += ["--cert", client + ".pem", "--key", client + ".key"] }
        if let topic { arguments += ["-H", "apns-topic: \(topic)"] }
        let result = try PeerProcess.run("curl", arguments + ["https://\(host):\(port)/3/device/\(token)"])
        return result.status == 0 ? result.output.trimmingCharacters(in: .whitespaces) : "curl exit \(result.status)"
    }

    /// Waits (bounded) for a file the sink writes at start-up.
    static func waitForFile(_ path: String) throws {
        let written = poll(timeout: .seconds(10), every: .milliseconds(50)) {
            FileManager.default.fileExists(atPath: path)
        }
        try #require(written, "\(path) was not written")
    }

    /// `fanout sink --tls-self-signed FOLDER/tls` on a port of its own choosing, listening.
    static func selfSignedSink(in folder: String) throws -> (sink: PeerProcess, port: Int) {
        try CommandRunner.sink(["--tls-self-signed", folder + "/tls"])
    }

    @Test(.requires(.curl, .openssl)) func aSelfSignedCertificateIsWrittenOutAndVerifiedByCurlAndOpenSSL() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try Self.selfSignedSink(in: folder)
        defer { sink.stop() }
        let trust = folder + "/tls/cert.pem"
        #expect(try Self.push(port: port, trust: trust, topic: "com.example.app") == "200")
        // The certificate names the loopback address too.
        #expect(try Self.push(port: port, host: "127.0.0.1", trust: trust, topic: "com.example.app") == "200")
        let verify = try PeerProcess.run("openssl", ["verify", "-CAfile", trust, trust])
        #expect(verify.output == "\(trust): OK\n", "\(verify.output) \(verify.errors)")
        let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/tls/key.pem")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        // Trusting something else fails the handshake.
        try Self.certificate("other", subject: "/CN=localhost", in: folder)
        #expect(try Self.push(port: port, trust: folder + "/other.pem") == "curl exit 60")
        let result = sink.stop()
        #expect(
            lines(of: result.errors, keyed: "fanout sink: TLS ")
                == ["fanout sink: TLS with a self-signed certificate; clients trust it with \(trust)"],
            "\(result.errors)"
        )
    }

    /// RFC 9113 §9.2, checked with OpenSSL's client: TLS 1.0 and 1.1 are refused, and so are
    /// TLS 1.2 suites without ephemeral keys or without AEAD; ECDHE with GCM and TLS 1.3 are served.
    @Test(.requires(.openssl)) func onlyTLSThatHTTP2AllowsIsServed() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try Self.selfSignedSink(in: folder)
        defer { sink.stop() }
        func handshake(_ options: [String]) throws -> (connected: Bool, text: String) {
            let result = try PeerProcess.run(
                "openssl",
                ["s_client", "-connect", "127.0.0.1:\(port)", "-alpn", "h2", "-brief"] + options,
                input: Data(),
                timeout: .seconds(20)
            )
            let text = result.output + result.errors
            return (result.status == 0 && lines(of: text, keyed: "CONNECTION ") == ["CONNECTION ESTABLISHED"], text)
        }
        // TLS's alerts: 70 protocol_version, 40 handshake_failure.
        for (refused, alert) in [
            (["-tls1", "-cipher", "DEFAULT@SECLEVEL=0"], "tlsv1 alert protocol version 70"),
            (["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"], "tlsv1 alert protocol version 70"),
            (["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"], "sslv3 alert handshake failure 40"),
            (["-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-SHA384"], "sslv3 alert handshake failure 40"),
        ] {
            let outcome = try handshake(refused)
            #expect(!outcome.connected, "\(refused): \(outcome.text)")
            // The server said no: an alert from it, not a client that could not offer. OpenSSL's
            // one line, whole, its error code, source file and line aside.
            let said = outcome.text.split(whereSeparator: \.isNewline).compactMap {
                $0.wholeMatch(
                    of:
                        #/[0-9A-F]+:error:[0-9A-F]+:SSL routines:ssl3_read_bytes:([a-z0-9 ]+):\S+:[0-9]+:SSL alert number ([0-9]+)/#
                )
            }.map { "\($0.1) \($0.2)" }
            #expect(said == [alert], "\(refused): \(outcome.text)")
        }
        for served in [["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"], ["-tls1_3"]] {
            let outcome = try handshake(served)
            #expect(outcome.connected, "\(served): \(outcome.text)")
        }
    }

    @Test(.requires(.curl, .openssl)) func clientCertificatesAuthenticateForTheirBundle() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.certificate("ca", subject: "/CN=Fanout test push CA", in: folder)
        let ca = folder + "/ca"
        try Self.certificate(
            "uid",
            subject: "/UID=com.example.app/CN=Apple Push Services: com.example.app/O=Example",
            in: folder,
            ca: ca
        )
        try Self.certificate("cn", subject: "/CN=Apple Development IOS Push Services: com.cn.app", in: folder, ca: ca)
        try Self.certificate("nameless", subject: "/CN=somebody", in: folder, ca: ca)
        try Self.certificate("rogue", subject: "/UID=com.example.app", in: folder)

        let sink = try PeerProcess(
            CommandRunner.executable.path,
            ["sink", "--listen", "127.0.0.1:0", "--tls-self-signed", folder + "/tls", "--client-ca", ca + ".pem"]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let trust = folder + "/tls/cert.pem"
        func push(_ client: String?, topic: String? = nil) throws -> String {
            try Self.push(port: port, trust: trust, client: client.map { folder + "/" + $0 }, topic: topic)
        }
        // The certificate's bundle is the default topic, and the only one allowed.
        #expect(try push("uid") == "200")
        #expect(try push("uid", topic: "com.example.app") == "200")
        #expect(try push("uid", topic: "com.other.app") == #"{"reason":"TopicDisallowed"} 400"#)
        #expect(try push("cn") == "200")
        #expect(try push("cn", topic: "com.example.app") == #"{"reason":"TopicDisallowed"} 400"#)
        #expect(try push("nameless", topic: "com.example.app") == #"{"reason":"BadCertificate"} 403"#)
        // No certificate and no token auth: nothing authenticates the request.
        #expect(try push(nil, topic: "com.example.app") == #"{"reason":"MissingProviderToken"} 403"#)
        // A certificate from another CA fails the handshake.
        #expect(try push("rogue", topic: "com.example.app").hasPrefix("curl exit"))
        let result = sink.stop()
        #expect(labelledCounts(result.output)["accepted"] == 3, "\(result.output)")
        #expect(lines(of: result.errors, keyed: "fanout sink: auth is off").isEmpty, "\(result.errors)")
    }

    @Test(.requires(.curl)) func adminCaptureAndAScenarioFileFromTheCommandLine() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "token-rate = 1/1h\nlatency = fixed:1ms\n".write(
            toFile: folder + "/plan.scenario",
            atomically: true,
            encoding: .utf8
        )
        let sink = try PeerProcess(
            CommandRunner.executable.path,
            [
                "sink", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--scenario",
                folder + "/plan.scenario", "--token-rate", "2/1h", "--capture", folder + "/capture.jsonl",
                "--capture-first", "1",
            ]
        )
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let admin = try sink.announcedPort(after: "admin on ")
        var statuses: [String] = []
        for _ in 0..<3 {
            let result = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
                    "-d", "@\(repositoryRoot)/fixtures/poll.json", "-H", "apns-topic: com.example.app",
                    "http://127.0.0.1:\(port)/3/device/\(Self.token)",
                ]
            )
            statuses.append(result.output)
        }
        // The option's 2 per hour wins over the file's 1.
        #expect(statuses == ["200", "200", "429"])
        let stats = try PeerProcess.run("curl", ["-s", "--max-time", "10", "http://127.0.0.1:\(admin)/stats"])
        #expect(stats.output.contains(#""by_status":{"200":2,"429":1}"#), "\(stats.output)")
        let result = sink.stop()
        #expect(result.output.hasPrefix("listening on 127.0.0.1:\(port)\nadmin on 127.0.0.1:\(admin)\n"))
        let captured = try String(contentsOfFile: folder + "/capture.jsonl", encoding: .utf8)
        #expect(captured.split(separator: "\n").count == 1)
        #expect(captured.hasPrefix(#"{"time_ms":"#) && captured.contains(#""status":200,"payload":{"aps":"#))
    }

    @Test func badScenarioFilesAndTLSOptionsAreUsageErrors() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "seed = 1\nstall = 1s\n".write(toFile: folder + "/bad.scenario", atomically: true, encoding: .utf8)
        let bad = try CommandRunner.run(["sink", "--scenario", folder + "/bad.scenario"])
        #expect(bad.status == 64)
        #expect(
            errorLine(of: bad.standardError)
                == "error: \(folder)/bad.scenario:2: a stall is EVERY/LENGTH, like 10s/1s; got 1s.",
            "\(bad.standardError)"
        )
        for arguments in [
            ["sink", "--client-ca", "ca.pem"],
            ["sink", "--tls-self-signed", folder, "--tls-cert", "a", "--tls-key", "b"],
            ["sink", "--capture-first", "3"], ["sink", "--admin", "nowhere"], ["sink", "--token-rate", "fast"],
            ["sink", "--capture", "x", "--capture-first", "1", "--capture-sample", "1%"],
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.standardError)")
        }
    }
}
