import FanoutTestSupport
import Foundation
import Testing

/// `fanout sink --service fcm --scenario FILE`: the APNs sink's file format with the FCM sink's
/// names, the command line's options over the file's, and an APNs setting refused at its line.
@Suite(.serialized, .requires(.curl)) struct FCMSinkScenarioTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-fcm-scenario-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// One send to project `project`: its status and curl's total time.
    static func send(to port: Int, project: String) throws -> (status: String, seconds: Double) {
        let result = try PeerProcess.run(
            "curl",
            [
                "-sS", "--max-time", "20", "--http2-prior-knowledge", "-o", "/dev/null", "-w",
                "%{http_code} %{time_total}",
                "-H", "authorization: Bearer x", "-d", #"{"message":{"token":"tok-a"}}"#,
                "http://127.0.0.1:\(port)/v1/projects/\(project)/messages:send",
            ]
        )
        #expect(result.status == 0, "\(result.errors)")
        let parts = result.output.split(separator: " ")
        return (String(parts.first ?? ""), Double(parts.last ?? "") ?? 0)
    }

    /// The file's project, token fates, latency and devices hold, and the folder records the
    /// file (its path and sha256sum's digest); an option given on the command line wins over
    /// the file's.
    @Test func theFileSaysWhatTheCommandLineCanAndTheCommandLineWins() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/fcm.scenario"
        try """
        # every token gone, answers held 150 ms, half the devices offline
        project = proj-s
        fcm-unregistered = 100%
        latency = fixed:150ms
        device-offline = 50%
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let (sink, port) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--scenario", file, "--output", folder + "/run"]
        )
        defer { sink.stop() }
        let gone = try Self.send(to: port, project: "proj-s")
        #expect(gone.status == "404", "the file's 100% unregistered")
        #expect(gone.seconds >= 0.15, "held no less than the file's latency: \(gone.seconds) s")
        let ended = sink.stop()
        #expect(lines(of: ended.output, keyed: "  delivered ") == ["  delivered 0 · unregistered 1"], "\(ended.output)")
        // Its own line, and with --output the folder's summary's after it.
        #expect(lines(of: ended.output, keyed: "devices: ").count == 2, "the file's devices: \(ended.output)")
        let recorded = try #require(try CommandRunner.summary(in: folder + "/run").configuration.scenario)
        #expect(recorded.path == file)
        let sha = try PeerProcess.run("/usr/bin/sha256sum", [file])
        #expect(sha.output.hasPrefix(recorded.sha256), "\(sha.output)")

        let (over, overPort) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--scenario", file, "--fcm-unregistered", "0%"]
        )
        defer { over.stop() }
        #expect(try Self.send(to: overPort, project: "proj-s").status == "200", "the command line's 0%")
    }

    /// An option given on the command line wins even at its default value: the file's quota
    /// of one message a minute is overruled by `--fcm-quota 600000/1m` typed out, so a second
    /// send is not 429.
    @Test func anOptionGivenAtItsDefaultStillWins() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/quota.scenario"
        try "fcm-quota = 1/1m\n".write(toFile: file, atomically: true, encoding: .utf8)
        let (tight, tightPort) = try CommandRunner.sink(["--service", "fcm", "--no-auth", "--scenario", file])
        defer { tight.stop() }
        let tightAnswers = try (0..<2).map { _ in try Self.send(to: tightPort, project: "fanout-fcm").status }
        #expect(tightAnswers == ["200", "429"], "the file's quota")
        let (given, givenPort) = try CommandRunner.sink(
            ["--service", "fcm", "--no-auth", "--scenario", file, "--fcm-quota", "600000/1m"]
        )
        defer { given.stop() }
        let givenAnswers = try (0..<2).map { _ in try Self.send(to: givenPort, project: "fanout-fcm").status }
        #expect(givenAnswers == ["200", "200"], "the command line's quota, FCM's default typed out")
    }

    /// An APNs setting, a value FCM's grammar refuses, an APNs GOAWAY reason: each named at
    /// its line, exit 64, nothing started.
    @Test func aSettingOfAPNsOrABadValueIsRefusedAtItsLine() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cases: [(String, String)] = [
            (
                "latency = fixed:5ms\nerror = Unregistered:3%\n",
                "2: error is the APNs sink's alone; an FCM scenario takes latency, seed, goaway-after-requests, max-connections, rtt, bandwidth, sink-bandwidth, device-offline, device-low-power, device-disabled, device-uninstalled, device-return, device-delay, device-store-cap, device-burst-interval, device-stale-after, device-open, device-open-after, device-actions, device-requests-per-open, device-media-budget, device-categories, return-to, unregistered-tokens, project, fcm-quota, fcm-device-limits, fcm-unregistered, fcm-other-sender, fcm-internal, fcm-unavailable."
            ),
            (
                "# quota\nfcm-quota = 0/1m\n",
                "2: fcm-quota = 0/1m: --fcm-quota takes whole messages a window, like 600000/1m, or off; got 0/1m."
            ),
            (
                "goaway-after-requests = 5:TooManyRequests\n",
                "1: goaway-after-requests 5:TooManyRequests: FCM's GOAWAY carries no APNs reason: give N alone."
            ),
            (
                "goaway-after-requests = 5:Shutdown\n",
                "1: goaway-after-requests 5:Shutdown: FCM's GOAWAY carries no APNs reason: give N alone."
            ),
            ("fcm-internal = lots\n", "1: fcm-internal = lots is not a share like 5% or 0.05."),
            ("fcm-unregistered = 150%\n", "1: fcm-unregistered = 150% is not a share from 0 to 100%."),
        ]
        for (index, (text, said)) in cases.enumerated() {
            let file = folder + "/\(index).scenario"
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try CommandRunner.run(["sink", "--service", "fcm", "--no-auth", "--scenario", file])
            #expect(result.status == 64, "\(text)")
            #expect(
                line(of: result.standardError, keyed: "error: ") == "error: \(file):\(said)",
                "\(result.standardError)"
            )
        }
        // A token file the scenario names and nobody can read: said at the file's line.
        let file = folder + "/missing.scenario"
        try "\nunregistered-tokens = nowhere.txt\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try CommandRunner.run(["sink", "--service", "fcm", "--no-auth", "--scenario", file])
        #expect(result.status != 0)
        #expect(
            line(of: result.standardError, keyed: "error: ")?.hasPrefix(
                "error: \(file):2: unregistered-tokens: "
            ) == true,
            "\(result.standardError)"
        )
    }
}
