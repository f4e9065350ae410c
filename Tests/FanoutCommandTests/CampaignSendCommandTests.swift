import FanoutNotation
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout send --endpoint APNS --fcm-endpoint FCM`: one campaign's labelled token file to a
/// `fanout sink` and a `fanout sink --service fcm`, each half counted by its own sink, the
/// campaign's document and lines, and what it refuses.
@Suite(.serialized) struct CampaignSendCommandTests {
    static func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "fanout-campaign-send-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A campaign's devices: `apns` APNs tokens (every third unlabelled), `fcm` FCM ones,
    /// interleaved as a provider's export is, with a comment and a blank line.
    static func devices(apns: Int, fcm: Int) -> String {
        var lines = ["# devices exported 2026-12-04", ""]
        var (a, f) = (0, 0)
        while a < apns || f < fcm {
            if a < apns && (f >= fcm || (a + f) % 9 < 5) {
                let token = String(format: "%064x", 0xA000_0000 + a)
                lines.append(a % 3 == 0 ? token : "apns:" + token)
                a += 1
            } else {
                lines.append("fcm:dXpLq7Rz0aE\(f):APA91bHun4MxP5egoKMwt2KZFBaFUH-\(f)")
                f += 1
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `apns` and `fcm` devices in one file (`devices`), sent as a campaign into `folder/run` to
    /// a `fanout sink` and a `fanout sink --service fcm` (with `fcmSink`'s options), both left
    /// running for their counts: the caller stops them.
    static func campaign(
        in folder: String,
        apns: Int,
        fcm: Int,
        apnsSink apnsOptions: [String] = [],
        fcmSink fcmOptions: [String] = [],
        send options: [String] = []
    ) throws -> (result: CommandRunner.Result, apnsSink: PeerProcess, fcmSink: PeerProcess) {
        let (apnsSink, apnsPort) = try CommandRunner.sink(apnsOptions)
        do {
            let (fcmSink, fcmPort) = try CommandRunner.sink(
                ["--service", "fcm", "--fcm-credentials-out", folder] + fcmOptions
            )
            do {
                let tokens = folder + "/devices.txt"
                try Self.devices(apns: apns, fcm: fcm).write(toFile: tokens, atomically: true, encoding: .utf8)
                let result = try CommandRunner.run(
                    [
                        "send", "--endpoint", "http://127.0.0.1:\(apnsPort)", "--fcm-endpoint",
                        "http://127.0.0.1:\(fcmPort)", "--tokens", tokens, "--template",
                        "fixtures/campaign-poll.json", "--topic", "com.example.app", "--fcm-credentials",
                        folder + "/service-account.json", "--output", folder + "/run",
                    ] + options,
                    timeout: .seconds(120)
                )
                return (result, apnsSink, fcmSink)
            } catch {
                fcmSink.stop()
                throw error
            }
        } catch {
            apnsSink.stop()
            throw error
        }
    }

    /// 1,100 APNs and 900 FCM devices in one file: each sink received its own half and no more,
    /// every device accepted (FCM's unregistered ones refused as FCM refuses them), and
    /// campaign.json says so per service and for the whole.
    @Test func eachHalfReachesItsOwnSink() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (result, apnsSink, fcmSink) = try Self.campaign(
            in: folder,
            apns: 1100,
            fcm: 900,
            fcmSink: ["--fcm-unregistered", "10%"],
            send: ["--connections", "2"]
        )
        defer { apnsSink.stop() }
        defer { fcmSink.stop() }
        #expect(result.status == 0, "\(result.standardError)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/run/" + CampaignDocument.fileName))
        let document = try JSONDecoder().decode(CampaignDocument.self, from: data)
        #expect(document.services.map(\.service) == [.apns, .fcm])
        #expect(document.services.map(\.devices) == [1100, 900])
        #expect(document.fleet == ["apns": 0.55, "fcm": 0.45])
        let (apns, fcm) = (document.services[0], document.services[1])
        #expect(apns.accepted == 1100 && apns.rejected.isEmpty && apns.failed == 0)
        let unregistered = fcm.rejected.values.reduce(0, +)
        #expect(fcm.accepted + unregistered == 900 && fcm.failed == 0)
        #expect(unregistered > 0, "10% of 900 asked for")
        // Sent to endpoints it cannot see, the campaign says nothing of their counts...
        #expect(apns.reconciled == nil && fcm.reconciled == nil && document.campaign.reconciled == nil)
        #expect(document.campaign.devices == 2000 && document.campaign.accepted == 1100 + fcm.accepted)
        #expect(document.campaign.seconds == max(apns.seconds, fcm.seconds))
        // ...so the sinks' own counts are the proof: each had its half, and only its half.
        let apnsCounts = apnsSink.stop()
        #expect(lines(of: apnsCounts.output, keyed: "accepted: ") == ["accepted: 1,100"], "\(apnsCounts.output)")
        let fcmCounts = fcmSink.stop()
        #expect(
            lines(of: fcmCounts.output, keyed: "  delivered ")
                == ["  delivered \(fcm.accepted.grouped) · unregistered \(unregistered.grouped)"],
            "\(fcmCounts.output)"
        )
        // Each half's own folder, as any run's.
        let apnsSummary = try CommandRunner.summary(in: folder + "/run/apns")
        let fcmSummary = try CommandRunner.summary(in: folder + "/run/fcm")
        #expect(apnsSummary.accepted == 1100 && apnsSummary.configuration.topic == "com.example.app")
        // Each half read every line and passed over the other's.
        #expect(apnsSummary.tokens?.otherService == 900 && fcmSummary.tokens?.otherService == 1100)
        #expect(apnsSummary.tokens?.lines == 2002 && apnsSummary.tokens?.read == 1100)
        #expect(fcmSummary.configuration.pushType == "fcm")
        #expect(
            line(of: result.standardOutput, keyed: "campaign: ")?.hasPrefix(
                "campaign: 2,000 devices, the last of either service answered after "
            ) == true,
            "\(result.standardOutput)"
        )
        #expect(
            line(of: result.standardOutput, keyed: "  apns ")?.hasPrefix(
                "  apns 1,100 devices (55%): 1,100 accepted, 0 rejected, 0 failed in "
            ) == true,
            "\(result.standardOutput)"
        )
        #expect(
            line(of: result.standardOutput, keyed: "  fcm  ")?.hasSuffix("; its endpoint's counts unseen") == true,
            "\(result.standardOutput)"
        )
    }

    /// `--gone-tokens FILE` of a campaign: one file, the APNs half's 410s and the FCM half's
    /// UNREGISTERED, each line labelled as the campaign's set is (an unlabelled APNs line of
    /// the set comes back `apns:`), exactly the tokens each sink was told are gone.
    @Test func goneTokensOfBothHalvesAreOneLabelledFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The devices' own tokens (`devices`): APNs 0xA000_0000 + i, FCM by index.
        let apnsGone = [0, 3, 7, 12, 20].map { String(format: "%064x", 0xA000_0000 + $0) }
        let fcmGone = [1, 4, 18, 119].map { "dXpLq7Rz0aE\($0):APA91bHun4MxP5egoKMwt2KZFBaFUH-\($0)" }
        try (apnsGone.joined(separator: "\n") + "\n").write(
            toFile: folder + "/apns-gone.txt",
            atomically: true,
            encoding: .utf8
        )
        try (fcmGone.joined(separator: "\n") + "\n").write(
            toFile: folder + "/fcm-gone.txt",
            atomically: true,
            encoding: .utf8
        )
        let gone = folder + "/gone.txt"
        let (result, apnsSink, fcmSink) = try Self.campaign(
            in: folder,
            apns: 120,
            fcm: 120,
            apnsSink: ["--unregistered-tokens", folder + "/apns-gone.txt"],
            fcmSink: ["--unregistered-tokens", folder + "/fcm-gone.txt"],
            send: ["--connections", "2", "--gone-tokens", gone]
        )
        defer { apnsSink.stop() }
        defer { fcmSink.stop() }
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let written = try String(contentsOfFile: gone, encoding: .utf8)
        #expect(written.hasSuffix("\n"), "\(written)")
        let lines = written.split(separator: "\n").map(String.init)
        #expect(lines.sorted() == (apnsGone.map { "apns:" + $0 } + fcmGone.map { "fcm:" + $0 }).sorted())
        let document = try JSONDecoder().decode(
            CampaignDocument.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder + "/run/" + CampaignDocument.fileName))
        )
        #expect(document.services.map { $0.rejected.values.reduce(0, +) } == [5, 4])
    }

    /// A campaign's file with no line of one service: that half sends nothing, says why, and
    /// leaves the campaign invalid (exit 4), for a campaign measured only half.
    @Test func aHalfWithNoLinesSaysSo() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (result, apnsSink, fcmSink) = try Self.campaign(in: folder, apns: 50, fcm: 0)
        defer { apnsSink.stop() }
        defer { fcmSink.stop() }
        #expect(
            line(of: result.standardOutput, keyed: "  fcm  ")
                == "  fcm  0 devices (0%): 0 accepted, 0 rejected, 0 failed in \(Self.seconds(of: result.standardOutput)) s, no latency; its endpoint's counts unseen; the token set held none of its lines",
            "\(result.standardOutput)\n\(result.standardError)"
        )
        #expect(
            line(of: result.standardOutput, keyed: "  apns ")?.hasPrefix("  apns 50 devices (100%): 50 accepted")
                == true
        )
        // A half that measured nothing leaves the campaign invalid (its folder says "no answers").
        #expect(result.status == 4, "\(result.standardError)")
    }

    /// The FCM half's seconds as its campaign line prints them.
    static func seconds(of output: String) -> String {
        guard let line = line(of: output, keyed: "  fcm  "), let range = line.range(of: " failed in ") else {
            return "?"
        }
        return String(line[range.upperBound...].prefix { $0 != " " })
    }

    /// A labelled file sent as one service's set stops at the other service's first line,
    /// which the folder names (and --skip-invalid turns it down instead).
    @Test func aCampaignsFileSentToOneServiceStopsAtTheOtherServicesLine() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink([])
        defer { sink.stop() }
        let tokens = folder + "/devices.txt"
        try Self.devices(apns: 10, fcm: 10).write(toFile: tokens, atomically: true, encoding: .utf8)
        let result = try CommandRunner.run([
            "send", "--endpoint", "http://127.0.0.1:\(port)", "--tokens", tokens, "--template",
            "fixtures/poll.json", "--topic", "com.example.app", "--output", folder + "/run",
        ])
        #expect(result.status == 4, "\(result.standardError)")
        let summary = try CommandRunner.summary(in: folder + "/run")
        // Lines 3 to 7 are APNs's (the comment and the blank line first); line 8 is FCM's.
        #expect(summary.accepted == 5)
        let stopped = summary.invalidity.compactMap { reason -> String? in
            guard case .tokenSetStopped(let at) = reason else { return nil }
            return at
        }
        #expect(
            stopped == [
                "\(tokens):8:1: the line is FCM's (fcm:), and these tokens are APNs's: a set of both services is a campaign's (fanout send --fcm-endpoint sends each half to its own service)"
            ],
            "\(summary.invalidity)"
        )
    }

    @Test func whatACampaignCannotTakeIsRefusedByName() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tokens = folder + "/devices.txt"
        try Self.devices(apns: 2, fcm: 2).write(toFile: tokens, atomically: true, encoding: .utf8)
        let campaign = [
            "send", "--endpoint", "http://127.0.0.1:9", "--fcm-endpoint", "http://127.0.0.1:9", "--template",
            "fixtures/campaign-poll.json", "--topic", "com.example.app", "--fcm-bearer", "x", "--project", "p",
        ]
        let cases: [([String], String)] = [
            (
                campaign + ["--generate", "10"],
                "error: --fcm-endpoint sends a campaign's token set, read once a half: give --tokens FILE, a regular text file of apns: and fcm: lines (not --generate, standard input or a pipe; fanout run --fleet generates both)."
            ),
            (
                campaign + [
                    "--tokens", tokens, "--skip-invalid", "--rejects", folder + "/rejects.txt", "--repeat", "2",
                ],
                "error: --fcm-endpoint's campaign does not take --rejects, --repeat: each half would have its own (send each service on its own with them)."
            ),
            (
                campaign + ["--tokens", tokens, "--service", "fcm"],
                "error: --fcm-endpoint is the FCM half of a campaign whose APNs half goes to --endpoint: leave out --service fcm (with it, --endpoint is FCM's)."
            ),
            (
                Array(campaign.prefix(9)) + ["--tokens", tokens],
                "error: --fcm-endpoint needs credentials: --fcm-credentials FILE (a service account) or --fcm-bearer TOKEN."
            ),
            (
                [
                    "send", "--endpoint", "http://127.0.0.1:9", "--fcm-endpoint", "ftp://x", "--tokens", tokens,
                    "--template", "fixtures/campaign-poll.json",
                ],
                "error: --fcm-endpoint: the endpoint is http://HOST:PORT or https://HOST[:PORT], not ftp://x."
            ),
        ]
        for (arguments, message) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(line(of: result.standardError, keyed: "error: ") == message, "\(result.standardError)")
        }
        // A template of one service is not a campaign's: the file and place say why.
        let template = try CommandRunner.run(
            Array(campaign.prefix(5)) + [
                "--template", "fixtures/poll.json", "--topic", "com.example.app", "--fcm-bearer", "x", "--project",
                "p", "--tokens", tokens, "--output", folder + "/run",
            ]
        )
        #expect(template.status == 1, "\(template.standardError)")
        #expect(
            line(of: template.standardError, keyed: "error: ")
                == "error: fixtures/poll.json:1:2: \"aps\" is not a push service of a campaign template: its members are \"apns\" and \"fcm\"",
            "\(template.standardError)"
        )
    }
}
