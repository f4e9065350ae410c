import FanoutTestSupport
import Foundation
import Testing

/// Issue 14's table replayed against a `fanout sink` process: each hostile or broken client
/// (Peers/hostile_client.py, raw frames) ends with the right GOAWAY, the sink's peak RSS stays
/// within 64 MB of its idle figure, the process lives, and an h2load client on another
/// connection has every request answered 200 throughout (its latency is a benchmark's
/// business, not a functional test's). (TLS 1.0/1.1 and CBC suites are refused in
/// SinkSecurityCommandTests; JWT and option extremes are here, against the process too.)
@Suite(.serialized) struct HostileClientTests {
    static let token = String(repeating: "ab", count: 32)
    static let memoryAllowance = 64 << 20

    /// A sink process and its idle RSS, taken after one request has been served.
    struct Sink {
        let process: PeerProcess
        let port: Int
        let idleResident: Int

        init(_ arguments: [String]) throws {
            process = try PeerProcess(
                CommandRunner.executable.path,
                ["sink", "--listen", "127.0.0.1:0"] + arguments
            )
            port = try process.announcedPort()
            _ = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "5", "-d", "{}", "-H", "apns-topic: com.example.app",
                    "http://127.0.0.1:\(port)/3/device/\(HostileClientTests.token)",
                ],
                timeout: .seconds(10)
            )
            idleResident = try #require(process.memory("VmRSS"))
        }

        /// Checks the process is alive and its peak RSS within the allowance of its idle figure.
        func expectBounded(after attack: String) {
            #expect(process.isRunning, "the sink died during \(attack)")
            guard let peak = process.memory("VmHWM") else { return }
            #expect(
                peak - idleResident <= HostileClientTests.memoryAllowance,
                "\(attack): peak RSS \(peak >> 20) MB, idle \(idleResident >> 20) MB"
            )
        }
    }

    struct Outcome: Decodable {
        struct GoAway: Decodable {
            var code: Int
            var debug: String
        }
        var sent: Int
        var goaway: GoAway?
    }

    static func attack(_ name: String, port: Int, seconds: Int = 3) throws -> Outcome {
        let output = try PythonPeer.run("hostile_client.py", ["\(port)", name, "\(seconds)"])
        return try JSONDecoder().decode(Outcome.self, from: Data(output.utf8))
    }

    static let enhanceYourCalm = 0xB

    @Test(.requires(.curl, .h2load, .hpack)) func everyAttackEndsWithItsGoAwayWhileANeighbourIsServed() throws {
        let sink = try Sink(["--idle-timeout", "1s", "--frame-timeout", "1s"])
        defer { sink.process.stop() }
        let log = NSTemporaryDirectory() + "fanout-neighbour-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        // 100 requests a second on one connection, for as long as the attacks take.
        let neighbour = try PeerProcess(
            "h2load",
            [
                "-c", "1", "-m", "1", "--rps", "100", "-D", "30", "-d", repositoryRoot + "/fixtures/poll.json",
                "-H", "apns-topic: com.example.app", "--log-file", log,
                "http://127.0.0.1:\(sink.port)/3/device/\(Self.token)",
            ]
        )
        defer { neighbour.stop() }
        let expected: [(attack: String, code: Int, reason: String)] = [
            ("ping-flood", Self.enhanceYourCalm, "acknowledgements queued unread"),
            ("settings-flood", Self.enhanceYourCalm, "acknowledgements queued unread"),
            ("rapid-reset", Self.enhanceYourCalm, "(rapid reset)"),
            ("continuation-flood", Self.enhanceYourCalm, "CONTINUATION frames in one header block"),
            ("window-zero-reset", Self.enhanceYourCalm, "(rapid reset)"),
            ("idle", 0, #"{"reason":"IdleTimeout"}"#),
            ("half-frame", Self.enhanceYourCalm, "12 bytes of a frame waited 1.0 seconds for the rest"),
        ]
        for (attack, code, reason) in expected {
            let outcome = try Self.attack(attack, port: sink.port)
            #expect(outcome.goaway?.code == code, "\(attack): \(String(describing: outcome.goaway))")
            #expect(outcome.goaway?.debug.contains(reason) == true, "\(attack): \(String(describing: outcome.goaway))")
            sink.expectBounded(after: attack)
        }
        let result = try neighbour.wait(timeout: .seconds(60))
        let report = H2loadReport(result.output)
        #expect(report?.failed == 0 && report?.errored == 0 && report?.timeout == 0, "\(result.output)")
        // h2load's log, a line per response: start (µs since the epoch), status, µs until it.
        let statuses = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
            .compactMap { line in line.split(separator: "\t").dropFirst().first }
        try #require(statuses.count >= 1000, "the neighbour made \(statuses.count) requests")
        #expect(statuses.allSatisfy { $0 == "200" }, "\(Dictionary(grouping: statuses) { $0 }.mapValues(\.count))")
        // Every request it started was answered: as many succeeded as the log holds.
        #expect(report?.succeeded == statuses.count && report?.done == statuses.count, "\(result.output)")
    }

    /// Resets of streams whose answers the sink holds (`--latency fixed:60s`): the answers go
    /// with the streams and the resets meet the rapid-reset limit.
    @Test(.requires(.curl, .hpack)) func resetsOfHeldAnswersLeaveNothingBehind() throws {
        let sink = try Sink(["--latency", "fixed:60s"])
        defer { sink.process.stop() }
        for _ in 0..<3 {
            let outcome = try Self.attack("held-reset", port: sink.port)
            #expect(outcome.goaway?.code == Self.enhanceYourCalm, "\(String(describing: outcome.goaway))")
            sink.expectBounded(after: "held-reset")
        }
    }

    /// A validly signed provider token whose `iat` is Int64.min (once a trap that took the sink
    /// down) or the year 2100 is answered 403; the sink lives and serves the next, honest, token.
    @Test(.requires(.curl, .openssl, .jwt, .cryptography)) func extremeTokenTimesAreRefusedAndTheSinkLives() throws {
        let folder = NSTemporaryDirectory() + "fanout-hostile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let key = folder + "/key.p8"
        try OpenSSL.makeP256Key(at: key)
        let sink = try Sink(["--key-file", key, "--key-id", "ABC123DEFG", "--team-id", "DEF123GHIJ"])
        defer { sink.process.stop() }
        func push(issuedAt: String) throws -> String {
            let jwt = try PythonPeer.run(
                "provider_token.py",
                [key, "ABC123DEFG", "DEF123GHIJ", issuedAt],
                besides: repositoryRoot + "/Tests/FanoutSinkTests/SinkTests.swift"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            let result = try PeerProcess.run(
                "curl",
                [
                    "-s", "--http2-prior-knowledge", "--max-time", "5", "-w", " %{http_code}", "-d", "{}",
                    "-H", "apns-topic: com.example.app", "-H", "authorization: bearer \(jwt)",
                    "http://127.0.0.1:\(sink.port)/3/device/\(Self.token)",
                ],
                timeout: .seconds(10)
            )
            return result.output
        }
        // Issued at the start of time: long expired. Issued in 2100: beyond the clock's skew.
        for (issuedAt, reason) in [
            ("-9223372036854775808", "ExpiredProviderToken"), ("4102444800", "InvalidProviderToken"),
        ] {
            let answer = try push(issuedAt: issuedAt)
            #expect(answer == #"{"reason":"\#(reason)"} 403"#, "iat \(issuedAt): \(answer)")
        }
        #expect(try push(issuedAt: "\(Int(Date().timeIntervalSince1970))").hasSuffix(" 200"))
        sink.expectBounded(after: "extreme JWT times")
    }

    /// Values a sink cannot represent are refused at start with the option and what is wrong,
    /// never a trap (signal 4 once).
    @Test(arguments: [
        (["--latency", "lognormal:5ms,100"], "σ"),
        (["--latency", "fixed:1e300s"], "year"),
        (["--goaway-after-time", "1e30h"], "year"),
        (["--latency", "fixed:nan"], "latency"),
    ])
    func unrepresentableValuesAreRefused(arguments: [String], mention: String) throws {
        let result = try CommandRunner.run(["sink", "--listen", "127.0.0.1:0"] + arguments, timeout: .seconds(20))
        #expect(result.status == 64 || result.status == 1, "\(arguments): status \(result.status)")
        #expect(result.standardError.contains(mention), "\(arguments): \(result.standardError)")
    }
}
