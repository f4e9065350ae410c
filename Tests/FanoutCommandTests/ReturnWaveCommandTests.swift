import FanoutNotation
import FanoutReport
import FanoutResults
import FanoutSink
import FanoutTestSupport
import Foundation
import Testing

/// The return wave from the command line (issue #63): bad input refused with what and where,
/// a backend that cannot be reached named and counted without slowing the fan-out, and a run's
/// folder holding the wave.
@Suite struct ReturnWaveCommandTests {
    @Test func badInputIsRefusedSayingWhat() throws {
        let cases: [([String], String)] = [
            (
                [
                    "sink", "--device-open", "20%", "--device-actions", "OK=70%,NOK=40%", "--return-to",
                    "http://127.0.0.1:9",
                ],
                "device-actions' shares add up to 110% (OK 70%, NOK 40%), over 100%"
            ),
            (["sink", "--device-open", "20%"], "--device-open and --device-actions need --return-to URL"),
            (
                ["sink", "--device-open-after", "sometime", "--return-to", "http://127.0.0.1:9"],
                "a latency is KIND:VALUES"
            ),
            (["sink", "--return-to", "127.0.0.1:9"], "--return-to takes an http:// or https:// URL"),
            (
                ["sink", "--return-to", "http://127.0.0.1:9", "--return-pool", "0"],
                "--return-pool must be from 1 to 10000"
            ),
            (
                ["sink", "--return-request", "opens=POST /x"],
                "--return-request is KIND=…, the kind one of media, open, action, launch"
            ),
            (
                ["run", "--verbose", "--sink-device-actions", "OK=101%", "--sink-return-to", "http://127.0.0.1:9"],
                "a share is from 0% to 100%"
            ),
            (
                ["sink", "--service", "fcm", "--device-open", "5%"],
                "--device-open and --device-actions need --return-to URL"
            ),
        ]
        for (arguments, message) in cases {
            let result = try CommandRunner.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result.standardError)")
            #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
        // In a scenario file, with its line.
        let file = NSTemporaryDirectory() + "fanout-wave-\(UUID().uuidString).conf"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "return-to = http://127.0.0.1:9\ndevice-actions = OK=70%,NOK=40%\n".write(
            toFile: file,
            atomically: true,
            encoding: .utf8
        )
        let result = try CommandRunner.run(["sink", "--scenario", file])
        // The error's place: the file, then the line of the bad setting.
        let line = result.standardError.components(separatedBy: file + ":").dropFirst().first?.prefix { $0.isNumber }
        #expect(result.status != 0 && line == "2", "\(result.standardError)")
    }

    /// A category file's mistakes are said before the sink listens: an action `--device-actions`
    /// names that no category holds, and a request whose field does not close, at its line.
    @Test func aCategoryFilesMistakesAreSaidBeforeListening() throws {
        let folder = NSTemporaryDirectory() + "fanout-wave-categories-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "poll ok foreground\npoll nok background GET /x/{token\n".write(
            toFile: folder + "/app.categories",
            atomically: true,
            encoding: .utf8
        )
        let engaging = ["sink", "--listen", "127.0.0.1:0", "--device-categories", folder + "/app.categories"]
        for (extra, first) in [
            (
                ["--device-actions", "maybe=10%"],
                "error: --device-actions: maybe is in no category of \(folder)/app.categories (its actions: ok, nok)."
            ),
            (
                ["--device-actions", "nok=10%"],
                "error: \(folder)/app.categories:2: /x/{token: a { opens no field (they are {token}, {apns-id}, {action}, {campaign}, {event}, {n})"
            ),
        ] {
            let result = try CommandRunner.run(
                engaging + extra + ["--device-open", "10%", "--return-to", "http://127.0.0.1:9"],
                timeout: .seconds(10)
            )
            let lines = result.standardError.split(separator: "\n").map(String.init)
            #expect(result.status != 0 && lines.first?.lowercased() == first.lowercased(), "\(lines)")
            #expect(!result.standardOutput.split(separator: "\n").contains { $0.hasPrefix("listening on ") })
        }
    }

    /// `--return-wait` bounds the wait at the end: opens an hour away are not waited for, and
    /// are counted not sent; the media downloads made at delivery were answered.
    @Test func theWaitForTheWaveHasABound() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-wait-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let started = ContinuousClock.now
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "200", "--sink-device-open", "100%", "--sink-device-open-after",
                "fixed:1h",
                "--sink-return-to", backend.url, "--return-wait", "1s", "--output", folder,
            ],
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(ContinuousClock.now - started < .seconds(30))
        let wave = try #require(try CommandRunner.summary(in: folder).returnWave)
        #expect(wave.notSent == 200 && wave.devices.opens == 200, "\(wave.lines)")
        #expect(wave.offered == 200 && wave.byKind["media"]?.answered == 200 && backend.count == 200)
    }

    /// FCM's devices engage too (issue #63: "per platform where FCM exists"): `fanout sink
    /// --service fcm` with the poll as FCM sends it (fixtures/fcm-poll.json, an image added) and
    /// a category file for its `click_action`. Android fetches the image when it shows the
    /// notification (a media download a delivery, the image's path); `ok` opens the app (its
    /// GET, then a launch fetch), `nok` runs in the background (its one request), the rest take
    /// the default action; the sink's `return_wave` agrees with the backend.
    @Test func fcmDevicesSendTheirWave() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-fcm-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fixture = try String(
            contentsOfFile: CommandRunner.repositoryRoot + "/fixtures/fcm-poll.json",
            encoding: .utf8
        )
        try fixture.replacingOccurrences(
            of: #""body":"Do you like the new design?"}"#,
            with: #""body":"Do you like the new design?","image":"https://cdn.example.com/img/banner.jpg"}"#
        ).write(toFile: folder + "/poll.json", atomically: true, encoding: .utf8)
        try "poll ok foreground GET /polls/ok\npoll nok background\n".write(
            toFile: folder + "/app.categories",
            atomically: true,
            encoding: .utf8
        )
        // Registration tokens as FCM's look (an instance id, a colon, APA91b…): 162 characters,
        // which the wave sends whole.
        let tokens = (0..<1_000).map { index in
            "dXpL\(String(format: "%07d", index)):APA91b" + String(repeating: "Fz-9_qW\(index % 10)", count: 18)
        }
        #expect(tokens.allSatisfy { $0.utf8.count == 162 })
        try tokens.joined(separator: "\n").write(toFile: folder + "/tokens.txt", atomically: true, encoding: .utf8)
        let (sink, port) = try CommandRunner.sink(
            [
                "--service", "fcm", "--fcm-credentials-out", folder, "--device-open", "100%", "--device-open-after",
                "fixed:0s", "--device-actions", "ok=50%,nok=30%", "--device-categories", folder + "/app.categories",
                "--device-requests-per-open", "2", "--return-to", backend.url, "--idle-exit", "4s", "--output",
                folder + "/sink", "--admin", "127.0.0.1:0",
            ]
        )
        defer { _ = sink.stop() }
        let admin = try sink.announcedPort(after: "admin on ")
        let sent = try CommandRunner.run(
            [
                "send", "--verbose", "--service", "fcm", "--endpoint", "http://127.0.0.1:\(port)", "--fcm-credentials",
                folder + "/service-account.json", "--template", folder + "/poll.json", "--tokens",
                folder + "/tokens.txt",
                "--output", folder + "/send",
            ],
            timeout: .seconds(60)
        )
        #expect(sent.status == 0, "\(sent.standardError)")
        // Its `--admin` shows the wave as the APNs sink's does: every image download, once a
        // second has closed after the last.
        var scraped: Double?
        poll(timeout: .seconds(20)) {
            let scrape = try? PeerProcess.run("curl", ["-fsS", "--max-time", "5", "http://127.0.0.1:\(admin)/metrics"])
            scraped = scrape.flatMap { PrometheusExposition($0.output) }?
                .value("fanout_return_answered_total", ["kind": "media"])
            return scraped == 1_000
        }
        #expect(scraped == 1_000)
        let ended = try sink.wait(timeout: .seconds(60))
        #expect(ended.status == 0, "\(ended.output)")
        let arrivals = backend.all
        let media = arrivals.filter { $0.event == "media" }
        #expect(media.count == 1_000 && media.allSatisfy { $0.path == "/img/banner.jpg" && $0.method == "GET" })
        #expect(Set(media.map(\.token)) == Set(tokens))
        let ok = arrivals.count { $0.path == "/polls/ok" && $0.method == "GET" && $0.action == "ok" }
        let nok = arrivals.count { $0.path == "/actions/nok" && $0.action == "nok" }
        let defaults = arrivals.count { $0.path == "/opens" }
        #expect(ok + nok + defaults == 1_000 && ok > 400 && nok > 200, "\(ok) \(nok) \(defaults)")
        #expect(arrivals.count { $0.event == "launch" } == ok + defaults)
        let wave = try #require(try CommandRunner.summary(in: folder + "/sink").returnWave)
        #expect(wave.offered == arrivals.count && wave.answered == arrivals.count && wave.errors == 0)
        #expect(wave.devices.mediaDownloads == 1_000 && wave.devices.backgroundActions == nok)
        #expect(wave.devices.tokensCut == nil)
    }

    /// `fanout run --fleet`: one wave for the campaign's devices, both halves', as one backend
    /// sees it, in the APNs half's folder (the FCM half's own when it is the whole fleet). The
    /// FCM poll carries no image: its devices open and download nothing.
    @Test(arguments: ["apns=50%,fcm=50%", "apns=0%,fcm=100%"])
    func aCampaignsWaveIsBothHalves(fleet: String) throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--fleet", fleet, "--count", "2000", "--sink-device-open", "100%",
                "--sink-device-open-after",
                "uniform:0s-1s", "--sink-return-to", backend.url, "--output", folder,
            ],
            timeout: .seconds(90)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let campaign = try JSONDecoder().decode(
            CampaignDocument.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + CampaignDocument.fileName))
        )
        let apns = campaign.services.first { $0.service == .apns }?.devices ?? 0
        let fcm = try #require(campaign.services.first { $0.service == .fcm }).devices
        #expect(apns + fcm == 2000)
        let owner = apns > 0 ? "apns" : "fcm"
        let wave = try #require(try CommandRunner.summary(in: folder + "/" + owner).returnWave)
        if apns > 0 { #expect(try CommandRunner.summary(in: folder + "/fcm").returnWave == nil) }
        // Every device of either half opened; only the APNs poll's (mutable-content) downloaded.
        #expect(wave.devices.opens == 2000 && wave.devices.mediaDownloads == Int(apns))
        #expect(wave.offered == backend.count && wave.answered == backend.count && wave.errors == 0)
        let opens = backend.all.filter { $0.event == "open" }
        #expect(opens.count == 2000 && backend.all.count { $0.event == "media" } == Int(apns))
        // Each device once (both halves' generated tokens are 64 hex digits, drawn apart).
        #expect(Set(opens.map(\.token)).count == 2000 && wave.devices.tokensCut == nil)
    }

    /// A campaign's wave waits for what is still due, and a stop signal ends that wait at once
    /// (the halves' engines, done sending, are not what it stops): the folders are written,
    /// the opens not yet due counted not sent.
    @Test func aStopSignalEndsTheCampaignsWaitForItsWave() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try InterruptionTests.start([
            "run", "--verbose", "--fleet", "apns=50%,fcm=50%", "--count", "2000", "--sink-device-open", "100%",
            "--sink-device-open-after", "fixed:10m", "--sink-return-to", backend.url, "--output", folder,
        ])
        defer { run.interrupt() }
        // The APNs half's media downloads (about 1,000) go at delivery; the opens are 10 minutes off.
        try InterruptionTests.waitUntil("the APNs half's media downloads", timeout: .seconds(60)) {
            backend.count >= 900
        }
        // The wave's wait begins once both halves are done sending (the APNs half waits for the
        // FCM half's, which runs on a thread of its own and, on a machine busy with other tests,
        // can still be sending when the media are in: a signal then stops it, and the run is
        // interrupted, 130). The signal goes to the wait, not to an engine.
        try InterruptionTests.waitUntil("the wave's wait", timeout: .seconds(60)) {
            !lines(of: run.errorsSoFar, keyed: "fanout sink: waiting for the return wave: ").isEmpty
        }
        run.interrupt()
        let ended = try run.wait(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.errors)")
        let wave = try #require(try CommandRunner.summary(in: folder + "/apns").returnWave)
        #expect(wave.notSent == 2_000 && wave.devices.opens == 2_000 && backend.all.count { $0.event == "open" } == 0)
        #expect(FileManager.default.fileExists(atPath: folder + "/" + CampaignDocument.fileName))
    }

    /// `run --fleet --sample`: the campaign's rehearsal is the sample's devices at the campaign's
    /// rates, each half its share, the devices' delays compressed as the schedule is; every
    /// folder and the console say so first.
    @Test func aCampaignsRehearsalIsItsSampleAtItsRates() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-fleet-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // 100,000 devices at 10,000/s (10 s), opening 50 s after delivery; 2%: 2,000 in 0.2 s, 1 s.
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--fleet", "apns=50%,fcm=50%", "--count", "100000", "--rate", "10000", "--sample",
                "2%",
                "--sink-device-open", "100%", "--sink-device-open-after", "fixed:50s", "--sink-return-to", backend.url,
                "--output", folder,
            ],
            timeout: .seconds(90)
        )
        // The rehearsal's shape is the subject, not the pace: 0, or 4 for a sender held back.
        try expectValidOrLagged(
            status: result.status,
            campaign: folder,
            halves: ["apns", "fcm"],
            result.standardError + result.standardOutput
        )
        // The campaign's lines begin by saying what it is (each half's summary does too).
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let whole = try #require(lines.firstIndex { $0.hasPrefix("campaign: 2,000 devices") }, "\(lines)")
        #expect(
            whole > 0 && lines[whole - 1].hasPrefix("SCALED REHEARSAL: 2,000 of the campaign's 100,000 devices (2%)")
        )
        #expect(lines.filter { $0.hasPrefix("SCALED REHEARSAL: ") }.count == 3)
        let campaign = try JSONDecoder().decode(
            CampaignDocument.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder + "/" + CampaignDocument.fileName))
        )
        let sample = try #require(campaign.sample)
        #expect(sample.share == 0.02 && sample.campaignDevices == 100_000 && sample.devices == 2_000)
        #expect(campaign.campaign.devices == 2_000 && campaign.campaign.accepted == 2_000)
        for half in campaign.services {
            let summary = try CommandRunner.summary(in: folder + "/" + half.folder)
            #expect(summary.sample?.devices == half.devices && summary.sample?.share == 0.02, "\(half.service)")
            // Each half at its share of the campaign's 10,000/s: 0.2 s, not 10.
            #expect(half.seconds < 2, "\(half.service): \(half.seconds) s")
        }
        let wave = try #require(try CommandRunner.summary(in: folder + "/apns").returnWave)
        #expect(wave.devices.opens == 2_000 && backend.all.count { $0.event == "open" } == 2_000)
        // The opens came 1 s after their deliveries (50 s compressed 50 times), not at once and
        // not 50 s later. The first media fetch (made as the first notification is delivered)
        // stands for the first delivery, but it also waits for the connection to the backend:
        // beside a valgrind run on both cores the first open read 0.89 s after it, where this
        // bound was 0.9 s. Half a second apart still tells 1 s from 0.
        let media = try #require(backend.all.filter { $0.event == "media" }.map(\.time).min())
        let opens = try #require(backend.all.filter { $0.event == "open" }.map(\.time).min())
        #expect(opens > media + 500_000_000 && opens < media + 10_000_000_000, "\(opens - media) ns")
    }

    /// Devices away when the fan-out comes get their notification from storage when they come
    /// back (a second in, while the open model's two seconds go on), and their wave follows
    /// from then: every device's events reach the backend.
    @Test func devicesBackFromOfflineSendTheirWave() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "1000", "--rate", "500", "--sink-device-offline", "50%",
                "--sink-device-return",
                "fixed:1s", "--sink-device-open", "100%", "--sink-device-open-after", "fixed:0s", "--sink-return-to",
                backend.url, "--output", folder,
            ],
            timeout: .seconds(60)
        )
        // The wave from storage is the subject, not the pace: 0, or 4 for a lagging generator.
        try expectValidOrLagged(status: result.status, folder: folder, result.standardError + result.standardOutput)
        let summary = try CommandRunner.summary(in: folder)
        let delivery = try #require(summary.delivery)
        let wave = try #require(summary.returnWave)
        // About half of the first second's 500 were stored (σ 11); all came back in the run.
        #expect(delivery.deliveredFromStorage > 150 && delivery.delivered + delivery.deliveredFromStorage == 1000)
        #expect(wave.devices.fromStorage == delivery.deliveredFromStorage)
        #expect(wave.devices.opens == 1000 && wave.devices.mediaDownloads == 1000)
        #expect(backend.count == 2000 && wave.answered == 2000 && wave.notSent == 0)
    }

    /// A backend refusing connections: the run completes, says that the wave cannot reach it,
    /// and counts every request it would have had (the engine's own test times the saying).
    @Test func anUnreachableBackendIsSaidAndCounted() throws {
        let folder = NSTemporaryDirectory() + "fanout-wave-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try withRefusingPort { port in
            let result = try CommandRunner.run(
                [
                    "run", "--verbose", "--count", "3000", "--sink-device-open", "50%", "--sink-device-open-after",
                    "fixed:0s",
                    "--sink-return-to", "http://127.0.0.1:\(port)", "--output", folder,
                ],
                timeout: .seconds(60)
            )
            #expect(result.status == 0, "\(result.standardError)")
            let summary = try CommandRunner.summary(in: folder)
            #expect(summary.accepted == 3000)
            let wave = try #require(summary.returnWave)
            // Every delivered poll downloads its media (mutable-content); half the devices open it.
            let opens = try #require(wave.byKind["open"]).offered
            #expect(wave.byKind["media"]?.offered == 3000 && opens > 1300 && opens < 1700)
            #expect(wave.offered == 3000 + opens && wave.answered == 0 && wave.errors == wave.offered)
            #expect(wave.failures.values.reduce(0, +) == wave.offered)
            // Gated: every request an error.
            let gate = try CommandRunner.run(["gate", folder, "--threshold", "return.errors < 1%"])
            #expect(gate.status == 1, "\(gate.standardOutput) \(gate.standardError)")
        }
    }

    /// `fanout run` with a backend: the wave in summary.json, summary.md and the console, and
    /// the backend's count is the wave's.
    @Test func aRunsFolderHoldsTheWave() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "2000", "--sink-device-open", "25%", "--sink-device-open-after",
                "uniform:0s-1s",
                "--sink-device-actions", "OK=50%", "--sink-device-requests-per-open", "3", "--sink-return-to",
                backend.url, "--return-campaign", "spring", "--output", folder,
            ],
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let wave = try #require(try CommandRunner.summary(in: folder).returnWave)
        #expect(wave.offered == backend.count && wave.answered == backend.count && wave.errors == 0)
        let opens = backend.all.count { $0.event == "open" || $0.event == "action" }
        #expect(backend.all.count { $0.event == "launch" } == 2 * opens)
        #expect(backend.all.count { $0.event == "media" } == 2000)
        #expect(backend.all.filter { $0.event == "media" }.allSatisfy { $0.path == "/media/spring" })
        #expect(backend.all.filter { $0.action == "OK" }.allSatisfy { $0.path == "/ok" })
        // summary.md's table: a row a kind, each with the backend's count.
        let markdown = MarkdownDocument(try String(contentsOfFile: folder + "/summary.md", encoding: .utf8))
        let table = try #require(markdown.table("request"), "\(markdown)")
        for kind in ["media", "open", "action", "launch"] {
            let offered = backend.all.count { $0.event == kind }
            #expect(table.row(kind)?.dropFirst().first == offered.grouped, "\(kind): \(table)")
        }
        // Gated as the issue asks (a bound this debug build meets with 2,000 media downloads at
        // the fan-out's second); a folder without a wave cannot be gated on one.
        let gate = try CommandRunner.run(
            ["gate", folder, "--threshold", "return.p99 < 30s", "--threshold", "return.errors < 1%"]
        )
        #expect(gate.status == 0, "\(gate.standardOutput) \(gate.standardError)")
        let tight = try CommandRunner.run(["gate", folder, "--threshold", "return.answered > \(wave.answered)"])
        #expect(tight.status == 1, "\(tight.standardOutput) \(tight.standardError)")
        let plain = NSTemporaryDirectory() + "fanout-wave-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: plain) }
        #expect(try CommandRunner.run(["run", "--verbose", "--count", "500", "--output", plain]).status == 0)
        let without = try CommandRunner.run(["gate", plain, "--threshold", "return.p99 < 300ms"])
        #expect(without.status == 64, "\(without.standardError)")
        // report.html's section: its heading, its two charts, their lines in the wave's colours.
        let html = try HTMLDocument(String(contentsOfFile: folder + "/report.html", encoding: .utf8))
        #expect(html.root.count("h2", text: "The return wave") == 1)
        let rates = try #require(html.root.element(where: "aria-label", is: "return wave rates"))
        let latency = try #require(html.root.element(where: "aria-label", is: "return wave latency"))
        #expect(
            rates.elements("polyline").compactMap { $0.attributes["stroke"] }.contains(
                HTMLReport.ReturnWaveColour.offered
            )
        )
        #expect(
            latency.elements("polyline").compactMap { $0.attributes["stroke"] }.contains(
                HTMLReport.ReturnWaveColour.p99
            )
        )
    }

    /// `fanout plan` answers the campaign's question: the wave's peak and when, whether the
    /// backend holds it, the pace that keeps it under; in plan.json too.
    @Test func thePlanSaysWhatTheBackendMustHold() throws {
        let folder = NSTemporaryDirectory() + "fanout-wave-plan-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let asked = [
            "plan", "--devices", "50M", "--deadline", "5m", "--rtt", "80ms", "--device-open", "3%",
            "--device-open-after", "lognormal:7m,1.2", "--device-requests-per-open", "4",
        ]
        let result = try CommandRunner.run(asked + ["--backend-capacity", "5k/s", "--output", folder])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try CommandRunner.plan(in: folder)
        let wave = try #require(document.wave)
        #expect(wave.holds == false && wave.capacityPerSecond == 5_000 && wave.requests == 6_000_000)
        let paced = try #require(wave.pacedFanOutSeconds)
        #expect(paced > wave.fanOutSeconds)
        // Refused: a capacity without opens, a capacity that is no rate, a rehearsal of the wave
        // without its backend, a backend or a sample without the rehearsal, a sample of nothing.
        for (extra, message) in [
            (["--backend-capacity", "5k/s"], "plan the return wave: add --device-open"),
            (["--device-open", "3%", "--backend-capacity", "lots"], "--backend-capacity is requests a second"),
        ] {
            let refused = try CommandRunner.run(
                ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms"] + extra
            )
            #expect(
                refused.status == 64 && refused.standardError.contains(message),
                "\(extra): \(refused.standardError)"
            )
        }
        let verify = ["--device-open", "3%", "--verify", "--return-to", "http://127.0.0.1:9"]
        for (extra, message) in [
            (
                ["--device-open", "3%", "--verify"],
                "--verify with the wave's options rehearses the wave against your backend: add --return-to URL (or leave out --device-open to rehearse the fan-out)."
            ),
            (
                ["--device-open", "3%", "--return-to", "http://127.0.0.1:9"],
                "--return-to is where --verify sends the wave's rehearsal: add --verify and --device-open."
            ),
            (
                ["--device-open", "3%", "--sample", "1%"],
                "--sample is the wave's rehearsal's: add --verify --return-to URL."
            ),
            (
                verify + ["--sample", "0%"],
                "--sample: a sample is a share from 0.0001% to 100%, like 1% or 0.01; got 0%."
            ),
            (
                ["--device-open", "3%", "--verify", "--return-to", "ftp://x"],
                "--return-to takes an http:// or https:// URL, like http://127.0.0.1:8080; got ftp://x."
            ),
        ] {
            let refused = try CommandRunner.run(
                ["plan", "--devices", "1M", "--deadline", "5m", "--rtt", "80ms"] + extra
            )
            let first = refused.standardError.split(separator: "\n").first.map(String.init)
            #expect(refused.status == 64 && first?.lowercased() == "error: " + message.lowercased(), "\(extra)")
        }
    }

    /// `fanout run --sample` refuses a share that samples nothing and a campaign across both
    /// services (its halves' schedules are not compressed yet).
    @Test func aRunRefusesASampleItCannotTake() throws {
        for (arguments, message) in [
            (
                ["run", "--verbose", "--sample", "0%"],
                "error: the value '0%' is invalid for '--sample <share>': --sample: a sample is a share from 0.0001% to 100%, like 1% or 0.01; got 0%"
            ),
            (
                ["run", "--verbose", "--fleet", "apns=50%,fcm=50%", "--sample", "1%", "--template", "poll.json"],
                "error: --fleet runs one campaign across both services: it does not take --template."
            ),
        ] {
            let refused = try CommandRunner.run(arguments)
            let first = refused.standardError.split(separator: "\n").first.map(String.init)
            #expect(refused.status == 64 && first?.lowercased() == message.lowercased(), "\(arguments)")
        }
    }

    /// The wave at `/metrics` while it goes (issue #63): a sink with `--admin` whose 1,000
    /// devices open over 0–2 s, two requests each, to a counting backend. Its scrape once the
    /// backend has had every request counts each kind as the backend did, by status and in the
    /// latency histogram's `+Inf` bucket, and Prometheus's own linter reads it clean.
    @Test(.requires(.promtool)) func theWaveIsAtMetricsWhileItGoes() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, port) = try CommandRunner.sink(
            [
                "--no-auth", "--admin", "127.0.0.1:0", "--device-open", "100%", "--device-open-after", "uniform:0s-2s",
                "--device-requests-per-open", "2", "--return-to", backend.url, "--idle-exit", "30s",
            ]
        )
        defer { _ = sink.stop() }
        let admin = try sink.announcedPort(after: "admin on ")
        let plain = folder + "/plain.json"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try #"{"aps":{"alert":"hi"}}"#.write(toFile: plain, atomically: true, encoding: .utf8)
        let sent = try CommandRunner.run(
            [
                "send", "--verbose", "--endpoint", "http://127.0.0.1:\(port)", "--template", plain, "--topic",
                "com.example.app",
                "--generate", "1000", "--output", folder + "/send",
            ],
            timeout: .seconds(60)
        )
        #expect(sent.status == 0, "\(sent.standardError)")
        // Every request answered, and a second closed after the last (the figures published).
        var exposition: PrometheusExposition?
        poll(timeout: .seconds(30)) {
            guard backend.count == 2_000,
                let scrape = try? PeerProcess.run(
                    "curl",
                    ["-fsS", "--max-time", "5", "http://127.0.0.1:\(admin)/metrics"]
                ),
                let read = PrometheusExposition(scrape.output)
            else { return false }
            exposition = read
            return read.value("fanout_return_answered_total", ["kind": "launch"]) == 1_000
                && read.value("fanout_return_answered_total", ["kind": "open"]) == 1_000
        }
        let metrics = try #require(exposition, "no scrape counted the wave")
        for (kind, count) in [("open", 1_000.0), ("launch", 1_000), ("media", 0), ("action", 0)] {
            #expect(metrics.value("fanout_return_requests_total", ["kind": kind]) == count, "\(kind)")
            #expect(metrics.value("fanout_return_errors_total", ["kind": kind]) == 0, "\(kind)")
        }
        #expect(metrics.value("fanout_return_answers_total", ["status": "200"]) == 2_000)
        #expect(metrics.value("fanout_return_failures_total", ["cause": "timeout"]) == 0)
        #expect(metrics.value("fanout_return_latency_seconds_bucket", ["le": "+Inf"]) == 2_000)
        #expect(metrics.types["fanout_return_latency_seconds"] == "histogram")
        let text = try PeerProcess.run("curl", ["-fsS", "--max-time", "5", "http://127.0.0.1:\(admin)/metrics"]).output
        let remarks = try promtoolRemarks(text)
        #expect(remarks == nil, "\(remarks ?? "")")
    }

    /// `fanout run --metrics` shows the wave beside the sender's figures: once the run's folder
    /// is written (the wave finished) its lingering endpoint counts every request the backend had.
    @Test func aRunsMetricsHoldTheWave() throws {
        let backend = try CountingBackend()
        defer { backend.close() }
        let folder = NSTemporaryDirectory() + "fanout-wave-run-metrics-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try PeerProcess(
            CommandRunner.executable.path,
            [
                "run", "--verbose", "--count", "500", "--sink-device-open", "100%", "--sink-device-open-after",
                "fixed:0s",
                "--sink-return-to", backend.url, "--metrics", "127.0.0.1:0", "--metrics-linger", "1m", "--output",
                folder,
            ]
        )
        defer { _ = run.stop() }
        let port = try run.announcedPort(after: "metrics on ")
        poll(timeout: .seconds(60)) { FileManager.default.fileExists(atPath: folder + "/summary.json") }
        let wave = try #require(try CommandRunner.summary(in: folder).returnWave)
        let scrape = try PeerProcess.run("curl", ["-fsS", "--max-time", "5", "http://127.0.0.1:\(port)/metrics"])
        let metrics = try #require(PrometheusExposition(scrape.output), "\(scrape.output)")
        #expect(metrics.value("fanout_sender_sent_total") == 500)
        // The poll is mutable-content: a media download and an open for each device.
        #expect(backend.count == 1_000 && wave.offered == 1_000)
        for kind in ["media", "open"] {
            #expect(metrics.value("fanout_return_answered_total", ["kind": kind]) == 500, "\(kind)")
        }
    }

    /// HTTP/2 to a backend nobody here wrote (issue #63): nghttpd, which speaks nothing else,
    /// over h2c and over TLS (ALPN `h2`, its self-signed certificate trusted by `--return-ca`),
    /// serving the wave's paths. One connection (`--return-pool 1`) carries all 600 requests
    /// as streams — nghttpd's log holds one session and 600 requests — every one answered 200.
    /// With nghttpd allowing 5 streams (`-m 5`) and the wave's 600 requests due at once, the
    /// first burst may outrun nghttpd's SETTINGS (a client assumes 100 streams until they come):
    /// a stream it refuses (REFUSED_STREAM, not processed) must go out again, so every request
    /// is answered, none failed.
    @Test(.requires(.nghttpd), arguments: [false, true])
    func theWaveSpeaksHTTP2ToNghttpd(overTLS: Bool) throws {
        let folder = NSTemporaryDirectory() + "fanout-wave-h2-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/www/launch", withIntermediateDirectories: true)
        try "ok".write(toFile: folder + "/www/opens", atomically: true, encoding: .utf8)
        try "ok".write(toFile: folder + "/www/launch/1", atomically: true, encoding: .utf8)
        try #"{"aps":{"alert":"hi"}}"#.write(toFile: folder + "/plain.json", atomically: true, encoding: .utf8)
        var arguments = ["-v", "-m", "5", "-d", folder + "/www", "0"]
        var scheme = "http"
        var trust: [String] = []
        if overTLS {
            let files = try SinkCertificates.writeSelfSigned(into: folder, hosts: ["localhost"])
            arguments += [files.key, files.certificate]
            scheme = "https"
            trust = ["--return-ca", files.certificate]
        } else {
            arguments.insert("--no-tls", at: 0)
        }
        let server = try PeerProcess("nghttpd", arguments)
        defer { _ = server.stop() }
        let port = try listeningPort(of: server.processIdentifier)
        let result = try CommandRunner.run(
            [
                "run", "--verbose", "--count", "300", "--template", folder + "/plain.json", "--sink-device-open",
                "100%",
                "--sink-device-open-after", "fixed:0s", "--sink-device-requests-per-open", "2", "--sink-return-to",
                "\(scheme)://localhost:\(port)", "--return-http", "2", "--return-pool", "1", "--return-streams", "20",
                "--return-request", "open=GET /opens", "--output", folder + "/run",
            ] + trust,
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.standardError)")
        let wave = try #require(try CommandRunner.summary(in: folder + "/run").returnWave)
        #expect(wave.offered == 600 && wave.answered == 600 && wave.byStatus == ["200": 600], "\(wave.lines)")
        #expect(wave.http == "2" && wave.streamsPerConnection == 20 && wave.poolSize == 1)
        // nghttpd -v: `[id=SESSION] [  SECONDS] recv|send TYPE frame <…>` a frame it read or
        // wrote, a RST_STREAM's code on the next line.
        let lines = server.outputSoFar.split(separator: "\n")
        var frames: [(session: String, way: String, type: String)] = []
        var refused = 0
        for (index, line) in lines.enumerated() {
            guard let frame = line.wholeMatch(of: /\[id=(\d+)\] \[ *[0-9.]+\] (recv|send) ([A-Z_]+) frame .*/) else {
                continue
            }
            frames.append((String(frame.1), String(frame.2), String(frame.3)))
            if frame.2 == "send", frame.3 == "RST_STREAM", index + 1 < lines.count,
                lines[index + 1].trimmingCharacters(in: .whitespaces).hasPrefix("(error_code=REFUSED_STREAM")
            {
                refused += 1
            }
        }
        #expect(Set(frames.map(\.session)) == ["1"], "\(frames.prefix(3))")
        // Every request's HEADERS read (nghttpd logs a refused stream's or not, by the moment
        // it refused); a stream refused and not sent again would have left the wave short of
        // its 600 answers, with a failure.
        #expect(frames.count { $0.way == "recv" && $0.type == "HEADERS" } >= 600, "\(refused) refused")
        #expect(wave.failures.isEmpty, "\(refused) refused: \(wave.failures)")
    }
}
