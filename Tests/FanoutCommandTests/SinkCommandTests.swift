import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink` as a user runs it: the line scripts wait for, requests, and the summary on SIGTERM.
@Suite(.serialized) struct SinkCommandTests {
    /// A port another server holds is said in the system's words, not swift-nio's
    /// "bind(descriptor:ptr:bytes:): Address already in use) (errno: 98)" (issue 64).
    @Test func aPortInUseIsSaidInTheSystemsWords() throws {
        let (first, port) = try CommandRunner.sink(["--no-auth"])
        defer { first.stop() }
        let second = try CommandRunner.run(
            ["sink", "--listen", "127.0.0.1:\(port)", "--no-auth"],
            timeout: .seconds(30)
        )
        #expect(second.status == 1, "\(second.standardError)")
        #expect(
            second.standardError.split(separator: "\n").first.map(String.init)
                == "error: cannot listen on 127.0.0.1:\(port): address already in use (errno 98)",
            "\(second.standardError)"
        )
    }

    @Test(.requires(.curl)) func servesPrintsItsAddressAndSummarisesOnSigterm() throws {
        let sink = try PeerProcess(CommandRunner.executable.path, ["sink", "--listen", "127.0.0.1:0"])
        defer { sink.stop() }
        let port = try sink.announcedPort()
        let token = String(repeating: "ab", count: 32)
        for path in ["/3/device/\(token)", "/3/device/xyz"] {
            _ = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "20", "-d", #"{"aps":{"alert":"hi"}}"#,
                    "-H", "apns-topic: com.example.app", "http://127.0.0.1:\(port)\(path)",
                ]
            )
        }
        let result = sink.stop()
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.hasPrefix("listening on 127.0.0.1:\(port)\n"), "\(result.output)")
        let counts = labelledCounts(result.output)
        #expect(counts["accepted"] == 1 && counts["400 BadDeviceToken"] == 1, "\(result.output)")
        #expect(
            lines(of: result.errors, keyed: "fanout sink: auth ")
                == [
                    "fanout sink: auth is off (no --key-file or --client-ca given): every request is taken as authenticated"
                ],
            "\(result.errors)"
        )
    }

    @Test func badOptionsAreUsageErrors() throws {
        for arguments in [
            ["sink", "--listen", "nowhere"], ["sink", "--tls-cert", "a.pem"], ["sink", "--key-id", "ABC"],
            ["sink", "--token-lengths", "7-5"],
        ] {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(!result.standardError.isEmpty)
        }
        let missing = try CommandRunner.run(
            ["sink", "--key-file", "/nonexistent.p8", "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"]
        )
        #expect(missing.status == 1)
        #expect(
            errorLine(of: missing.standardError) == "error: cannot read --key-file /nonexistent.p8: no such file",
            "\(missing.standardError)"
        )
        // A capture file that cannot be made says where and why, not a Foundation error code.
        let capture = try CommandRunner.run(["sink", "--listen", "127.0.0.1:0", "--capture", "/nonexistent/x.jsonl"])
        #expect(capture.status == 1)
        #expect(
            capture.standardError.contains(
                "--capture: cannot create /nonexistent/x.jsonl: the folder /nonexistent does not exist"
            ),
            "\(capture.standardError)"
        )
    }
}
