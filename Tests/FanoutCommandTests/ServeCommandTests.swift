import FanoutReport
import FanoutTestSupport
import Foundation
import Testing

/// `--serve HOST:PORT` on `fanout run` and `fanout send`: a live page a headless Chromium draws
/// mid-run at the run's current second, offline, and at the end the folder's report.html byte
/// for byte.
@Suite(.serialized) struct ServeCommandTests {
    /// The mid-run tests' runs last far longer than their checks and are ended by SIGINT once
    /// those are done: once a run has ended, a read of `/` is its final report's and ends
    /// `--serve-linger`, so a run that ended during the checks (15 s ones did, beside other
    /// suites: two headless Chromium loads and several reads) closed the server under them.
    static let longRun = ["--rate", "1000", "--duration", "600s"]

    /// The port of "serving on http://HOST:PORT/", once the command prints it.
    static func servedPort(_ process: PeerProcess) throws -> Int {
        var port: Int?
        poll(timeout: .seconds(30)) {
            port =
                process.outputSoFar.split(separator: "\n").lazy.compactMap { line -> Int? in
                    guard line.hasPrefix("serving on http://"), line.hasSuffix("/") else { return nil }
                    let address = line.dropFirst("serving on http://".count).dropLast()
                    return address.lastIndex(of: ":").flatMap { Int(address[address.index(after: $0)...]) }
                }.first
            return port != nil
        }
        return try #require(port, "no \"serving on\" line: \(process.outputSoFar)")
    }

    /// `/live.json` now, or `nil` when it cannot be read.
    static func live(_ port: Int) -> LiveDocument? {
        guard
            let result = try? PeerProcess.run(
                "curl",
                ["-sf", "--max-time", "5", "http://127.0.0.1:\(port)/live.json"]
            ),
            result.status == 0
        else { return nil }
        return try? JSONDecoder().decode(LiveDocument.self, from: Data(result.output.utf8))
    }

    /// The DOM headless Chromium builds of the page at `/`, scripts run, with every address
    /// but loopback sent to a proxy that refuses: a page that needs the outside world fails.
    static func dumpDOM(_ port: Int) throws -> String {
        try chromium(port, ["--dump-dom"])
    }

    /// Headless Chromium's screenshot of the page at `/` checked by the report's render check
    /// (Tests/FanoutReportTests/Peers/check_render.py): not blank, each of `colours` drawn.
    static func screenshotShows(_ port: Int, colours: [String]) throws -> PeerProcess.Result {
        let screenshot = NSTemporaryDirectory() + "fanout-live-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: screenshot) }
        _ = try chromium(port, ["--screenshot=" + screenshot, "--window-size=1000,1100", "--hide-scrollbars"])
        return try PeerProcess.run(
            "python3",
            [CommandRunner.repositoryRoot + "/Tests/FanoutReportTests/Peers/check_render.py", screenshot] + colours
        )
    }

    static func chromium(_ port: Int, _ options: [String]) throws -> String {
        let profile = NSTemporaryDirectory() + "fanout-chromium-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let result = try PeerProcess.run(
            "chromium",
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile,
                "--proxy-server=http://127.0.0.1:9",
            ] + options + ["http://127.0.0.1:\(port)/"],
            timeout: .seconds(90)
        )
        try #require(result.status == 0, "\(result.errors)")
        return result.output
    }

    /// The second the page says it shows ("second N of the run").
    static func shownSecond(in dom: String) -> Int? {
        guard let match = dom.firstMatch(of: /id="now">second (\d+) of the run/) else { return nil }
        return Int(match.1)
    }

    /// Mid-run, the page Chromium draws shows the run's current second, between what
    /// `/live.json` said just before and just after; the page asks nothing of the outside.
    func checkMidRun(
        port: Int,
        command: String,
        measured: (LiveDocument.Second) -> Bool = { $0.completed > 0 && ($0.p99Ms ?? 0) > 0 },
        colours: [String] = [HTMLReport.Colour.throughput, HTMLReport.Colour.p50, HTMLReport.Colour.p99]
    ) throws {
        var before: LiveDocument?
        let going = poll(timeout: .seconds(60), every: .milliseconds(200)) {
            before = Self.live(port)
            return before.map { $0.second >= 2 && !$0.seconds.isEmpty } ?? false
        }
        try #require(going, "the live document never reached second 2: \(String(describing: before))")
        let first = try #require(before)
        #expect(first.command == command && !first.done)
        let measuring = poll(timeout: .seconds(30), every: .milliseconds(200)) {
            Self.live(port)?.seconds.contains(where: measured) == true
        }
        #expect(measuring, "no second measured: \(String(describing: Self.live(port)))")
        let dom = try Self.dumpDOM(port)
        // Read again after Chromium (a loaded machine can time one read out: bounded retries).
        var latest: LiveDocument?
        _ = poll(timeout: .seconds(30), every: .milliseconds(200)) {
            latest = Self.live(port)
            return latest != nil
        }
        let after = try #require(latest)
        let shown = try #require(Self.shownSecond(in: dom), "\(dom)")
        #expect(shown >= first.second && shown <= after.second, "page \(shown), live \(first.second)…\(after.second)")
        let shownPage = HTMLDocument(dom)
        #expect(!shownPage.elements("polyline").isEmpty && shownPage.count("td", text: "accepted") >= 1, "\(dom)")
        let seen = try Self.screenshotShows(port, colours: colours)
        #expect(seen.status == 0, "\(seen.output)\(seen.errors)")

        let page = try PeerProcess.run("curl", ["-sf", "http://127.0.0.1:\(port)/"])
        try #require(page.status == 0)
        for pattern in ["src=", "<link", "@import", "url(", "https:"] {
            #expect(!page.output.contains(pattern), "the live page contains \(pattern)")
        }
        // The one address in it is SVG's namespace, a name and never fetched.
        #expect(page.output.ranges(of: "http://").count == page.output.ranges(of: "http://www.w3.org/2000/svg").count)
        let early = try PeerProcess.run(
            "curl",
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", url(port, "report.html")]
        )
        #expect(early.output == "404" || Self.live(port)?.done == true, "\(early.output)")
    }

    func url(_ port: Int, _ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// After the run, `/` answers the folder's report.html, byte for byte (as an open page
    /// reloads it); that read ends `--serve-linger` (300 s, far longer than the wait for the
    /// exit) and the command exits: 130 for a run `interrupted` (SIGINT), otherwise 0, or for a
    /// run or send at a rate 4 when a loaded machine made its generator fall behind (`atARate`:
    /// the page is the subject, not the pace).
    func checkFinal(
        port: Int,
        folder: String,
        process: PeerProcess,
        interrupted: Bool = false,
        atARate: Bool = false
    ) throws {
        let done = poll(timeout: .seconds(120), every: .milliseconds(200)) { Self.live(port)?.done == true }
        try #require(done, "the live document never said done")
        let written = try Data(contentsOf: URL(fileURLWithPath: folder + "/report.html"))
        let copy = NSTemporaryDirectory() + "fanout-served-\(UUID().uuidString).html"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let fetched = try PeerProcess.run("curl", ["-sf", "-o", copy, url(port, "")])
        try #require(fetched.status == 0, "\(fetched.errors)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == written, "/ differs from report.html")
        let finished = try process.wait(timeout: .seconds(60))
        if interrupted {
            #expect(finished.status == 130, "\(finished.output)\(finished.errors)")
        } else if atARate {
            try expectValidOrLagged(status: finished.status, folder: folder, "\(finished.output)\(finished.errors)")
        } else {
            #expect(finished.status == 0, "\(finished.output)\(finished.errors)")
        }
    }

    @Test(.requires(.chromium, .curl, .pillow)) func aRunServesItsLivePageAndThenItsReport() throws {
        let folder = NSTemporaryDirectory() + "fanout-live-run-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let run = try PeerProcess(
            CommandRunner.executable.path,
            [
                "run", "--serve", "127.0.0.1:0", "--serve-linger", "300s", "--output", folder,
            ] + Self.longRun
        )
        defer { run.stop() }
        let port = try Self.servedPort(run)
        try checkMidRun(port: port, command: "run")
        run.interrupt()
        try checkFinal(port: port, folder: folder, process: run, interrupted: true)
    }

    @Test(.requires(.chromium, .curl, .pillow)) func aSendServesItsLivePageAndThenItsReport() throws {
        let (sink, sinkPort) = try CommandRunner.sink([])
        defer { sink.stop() }
        let folder = NSTemporaryDirectory() + "fanout-live-send-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let send = try PeerProcess(
            CommandRunner.executable.path,
            CommandRunner.sendArguments(to: sinkPort) + [
                "--generate", "600000", "--serve", "127.0.0.1:0", "--serve-linger", "300s", "--output", folder,
            ] + Self.longRun
        )
        defer { send.stop() }
        let port = try Self.servedPort(send)
        try checkMidRun(port: port, command: "send")
        send.interrupt()
        try checkFinal(port: port, folder: folder, process: send, interrupted: true)
    }

    /// The sink's page: what it accepted each second and its connections, then its `--output`
    /// folder's report.html once it ends (here, idle after the send).
    @Test(.requires(.chromium, .curl, .pillow)) func aSinkServesItsLivePageAndThenItsFolderReport() throws {
        let folder = NSTemporaryDirectory() + "fanout-live-sink-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (sink, sinkPort) = try CommandRunner.sink([
            "--output", folder, "--idle-exit", "2s", "--duration", "120s", "--serve", "127.0.0.1:0",
            "--serve-linger", "300s",
        ])
        defer { sink.stop() }
        let port = try Self.servedPort(sink)
        let send = try PeerProcess(
            CommandRunner.executable.path,
            CommandRunner.sendArguments(to: sinkPort) + ["--generate", "600000", "--output", folder + "-send"]
                + Self.longRun
        )
        defer {
            send.stop()
            try? FileManager.default.removeItem(atPath: folder + "-send")
        }
        try checkMidRun(
            port: port,
            command: "sink",
            measured: { $0.completed > 0 && ($0.connections ?? 0) > 0 },
            colours: [HTMLReport.Colour.throughput]
        )
        // The sink's page is the subject: its load, the send, ends by SIGINT; the sink then ends
        // by itself, idle.
        send.interrupt()
        let sent = try send.wait(timeout: .seconds(120))
        #expect(sent.status == 130, "\(sent.output)\(sent.errors)")
        try checkFinal(port: port, folder: folder, process: sink)
    }

    /// The linger needs `--serve`.
    @Test func theLingerNeedsServe() throws {
        let refused = try CommandRunner.run(["run", "--count", "10", "--serve-linger", "5s"])
        #expect(refused.status == 64)
        #expect(
            errorLine(of: refused.standardError) == "error: --serve-linger needs --serve",
            "\(refused.standardError)"
        )
    }

    /// A broadcast send serves its updates' seconds, then its folder's report.html.
    @Test(.requires(.curl)) func aBroadcastSendServesItsPageAndThenItsReport() throws {
        let (sink, sinkPort) = try CommandRunner.sink(["--channel-subscribers", "100"])
        defer { sink.stop() }
        let folder = NSTemporaryDirectory() + "fanout-live-broadcast-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let send = try PeerProcess(
            CommandRunner.executable.path,
            [
                "send", "--broadcast", "--endpoint", "http://127.0.0.1:\(sinkPort)", "--topic", "com.example.app",
                "--channels", "10", "--updates", "30", "--rate", "100", "--template",
                "fixtures/liveactivity-update.json", "--serve", "127.0.0.1:0", "--serve-linger", "300s",
                "--output", folder,
            ],
            directory: CommandRunner.repositoryRoot
        )
        defer { send.stop() }
        let port = try Self.servedPort(send)
        let seen = poll(timeout: .seconds(30), every: .milliseconds(200)) { (Self.live(port)?.finished ?? 0) > 0 }
        #expect(seen, "the live document never counted an update")
        try checkFinal(port: port, folder: folder, process: send, atARate: true)
    }
}
