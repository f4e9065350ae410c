import FanoutNotation
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

/// `fanout run --fleet` as a user runs it: the campaign's lines, its folder, its exit status,
/// and what it refuses.
@Suite struct FleetRunCommandTests {
    @Test func aCampaignAcrossBothServicesSaysEachHalfAndTheWhole() throws {
        let folder = NSTemporaryDirectory() + "fanout-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([
            "run", "--verbose", "--fleet", "apns=55%,fcm=45%", "--count", "20000", "--connections", "2", "--output",
            folder,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/campaign.json"))
        let document = try JSONDecoder().decode(CampaignDocument.self, from: data)
        #expect(document.campaign.accepted == 20_000 && document.campaign.reconciled == true)
        let apns = document.services[0]
        let fcm = document.services[1]
        #expect(
            line(of: result.standardOutput, keyed: "campaign: ")?.hasPrefix(
                "campaign: 20,000 devices, the last of either service answered after "
            ) == true,
            "\(result.standardOutput)"
        )
        #expect(
            line(of: result.standardOutput, keyed: "  apns ")?.hasPrefix(
                "  apns \(apns.devices.grouped) devices"
            ) == true
        )
        #expect(
            line(of: result.standardOutput, keyed: "  fcm  ")?.hasSuffix("; reconciled with its sink") == true,
            "\(result.standardOutput)"
        )
        #expect(apns.devices + fcm.devices == 20_000)
        #expect(
            line(of: result.standardOutput, keyed: "results: \(folder)/ (campaign")
                == "results: \(folder)/ (campaign.json, apns/, fcm/)"
        )
        // Its folder is a campaign's: neither another campaign nor a run writes over it.
        for arguments in [["run", "--verbose", "--fleet", "apns=55%,fcm=45%"], ["run"]] {
            let again = try CommandRunner.run(arguments + ["--count", "100", "--output", folder])
            #expect(again.status == 1, "\(arguments)")
            #expect(
                line(of: again.standardError, keyed: "error: ")
                    == "error: --output \(folder): holds an earlier run's results (apns, campaign.json, fcm): give a new folder, or remove them first (a gate must never read them as this run's)",
                "\(again.standardError)"
            )
        }
    }

    /// `--sink-latency` holds both sinks' answers: neither half's answers come sooner.
    @Test func theSinkLatencyIsBothSinks() throws {
        let folder = NSTemporaryDirectory() + "fanout-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([
            "run", "--verbose", "--fleet", "apns=50%,fcm=50%", "--count", "400", "--connections", "1", "--sink-latency",
            "fixed:250ms", "--output", folder,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/campaign.json"))
        let document = try JSONDecoder().decode(CampaignDocument.self, from: data)
        for half in document.services {
            let latency = try #require(half.latencyMilliseconds, "\(half.service)")
            #expect(latency.p50 >= 250, "\(half.service): \(latency)")
        }
    }

    /// `--sink-device-…` are both sinks' devices: with 40% offline for the run, each half's
    /// summary says what its sink kept (about 40% of its devices, ±4 standard deviations) and
    /// delivered the rest at once, the FCM half's lines in FCM's words.
    @Test func theSinkDevicesAreBothSinks() throws {
        let folder = NSTemporaryDirectory() + "fanout-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([
            "run", "--verbose", "--fleet", "apns=50%,fcm=50%", "--count", "2000", "--sink-device-offline", "40%",
            "--sink-device-return", "never", "--output", folder,
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/campaign.json"))
        let document = try JSONDecoder().decode(CampaignDocument.self, from: data)
        #expect(document.services.count == 2)
        for half in document.services {
            let summary = try CommandRunner.summary(in: folder + "/" + half.folder)
            let delivery = try #require(summary.delivery, "\(half.service)")
            let devices = Double(half.devices)
            #expect(delivery.received == half.accepted, "\(half.service)")
            #expect(delivery.storedOffline + delivery.delivered == delivery.received, "\(half.service)")
            #expect(abs(Double(delivery.storedOffline) - 0.4 * devices) <= 4 * (devices * 0.24).squareRoot())
            // Both embedded sinks answer at once: each half is a self-measurement (the FCM
            // half was labelled the endpoint's, newcomer pass, issue 64).
            #expect(summary.harness?.selfMeasurement == true, "\(half.service)")
            // summary.md's table names the half's service.
            let markdown = try String(contentsOfFile: folder + "/" + half.folder + "/summary.md", encoding: .utf8)
            let name = half.service == .fcm ? "FCM" : "APNs"
            #expect(
                lines(of: markdown, keyed: "| Received by ") == [
                    "| Received by \(name) | \(delivery.received) | 100.00% |"
                ],
                "\(half.service)"
            )
        }
        // Each half's fleet line names the service that received: one APNs, one FCM.
        let services = lines(of: result.standardOutput, keyed: "devices: ").compactMap {
            $0.firstMatch(of: /^devices: [0-9,]+ received by ([A-Za-z]+);/).map { String($0.1) }
        }
        #expect(services.sorted() == ["APNs", "FCM"], "\(result.standardOutput)")
    }

    /// The open model: the schedule is the campaign's, each half sending its own devices at its
    /// part of the rate. 2,000/s for 2 s is 4,000 devices; each half's schedule runs the whole
    /// 2 s (its last arrival due at 2 s less one of its gaps, whatever its share), every device
    /// sent when due: the campaign cannot end before its last arrival's 20 ms answer, where the
    /// same devices sent as fast as the streams allow take a fifth of that.
    @Test func theOpenModelSplitsTheCampaignsRateByTheShares() throws {
        let folder = NSTemporaryDirectory() + "fanout-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run([
            "run", "--verbose", "--fleet", "apns=55%,fcm=45%", "--rate", "2000", "--duration", "2s", "--connections",
            "2",
            "--sink-latency", "fixed:20ms", "--output", folder,
        ])
        // The split is the subject, not the pace: 0, or 4 for a sender a loaded machine held back.
        try expectValidOrLagged(
            status: result.status,
            campaign: folder,
            halves: ["apns", "fcm"],
            result.standardError + result.standardOutput
        )
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/campaign.json"))
        let document = try JSONDecoder().decode(CampaignDocument.self, from: data)
        #expect(document.campaign.devices == 4000 && document.campaign.accepted == 4000)
        #expect(document.campaign.reconciled == true)
        #expect(document.campaign.seconds >= 2.0, "\(document.campaign)")
        for half in document.services {
            let summary = try CommandRunner.summary(in: folder + "/" + half.folder)
            let model = try #require(summary.openModel, "\(half.service): no open model")
            // n devices at 2,000/s × n/4,000 = n/2 a second: the last due at 2 − 2/n s.
            let last = 2 - 2 / Double(half.devices)
            #expect(abs((model.scheduleSeconds ?? 0) - last) < 0.001, "\(half.service): \(model)")
            #expect(model.arrivals == Int(half.devices) && model.arrivalsSent == Int(half.devices))
            #expect((half.latencyMilliseconds?.p50 ?? 0) >= 20, "\(half.service): \(half)")
        }
        #expect(document.services.map(\.devices).min() ?? 0 > 1500, "\(document.services.map(\.devices))")
    }

    @Test func whatACampaignCannotDoIsRefused() throws {
        let cases: [([String], String)] = [
            (
                ["run", "--verbose", "--fleet", "apns=55%,fcm=45%", "--repeat", "2", "--shard", "1/2"],
                "error: --fleet runs one campaign across both services: it does not take --repeat, --shard."
            ),
            (
                ["run", "--verbose", "--fleet", "apns=60%,fcm=45%"],
                "error: --fleet: the shares add up to 105%, not 100%, in 'apns=60%,fcm=45%'."
            ),
        ]
        for (arguments, message) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(line(of: result.standardError, keyed: "error: ") == message, "\(result.standardError)")
        }
    }
}
