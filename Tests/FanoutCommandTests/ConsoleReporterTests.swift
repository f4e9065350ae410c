import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutMeasure
import FanoutReport
import FanoutResults
import FanoutRun
import FanoutTestSupport
import Foundation
import Histogram
import Testing

@testable import fanout

/// The console reporter: the one place a job's events become words, each on its stream, and
/// the progress line that no other line is written over.
@Suite struct ConsoleReporterTests {
    /// A run's summary.json: the report tests' golden one (6,000 sent, 20 rejected, 10 failed).
    static let golden = try! SummaryDocument.read(repositoryRoot + "/Tests/FanoutReportTests/Golden/summary.json")

    @Test func eachEventIsSaidOnItsStreamInItsWords() {
        let failure = EndpointFailure(.connectionRefused, "ECONNREFUSED")
        let kept = ChannelsKept(
            kept: 2,
            created: 5,
            management: "http://127.0.0.1:2196",
            reasons: ["BadChannelId"],
            failure: nil
        )
        let said: [(JobEvent, ConsoleReporter.Stream, String)] = [
            (.listening(.sink, address: "127.0.0.1:2197"), .output, "listening on 127.0.0.1:2197"),
            (.listening(.admin, address: "127.0.0.1:9000"), .output, "admin on 127.0.0.1:9000"),
            (.listening(.metrics, address: "127.0.0.1:9100"), .output, "metrics on 127.0.0.1:9100"),
            (.listening(.livePage, address: "http://127.0.0.1:8080/"), .output, "serving on http://127.0.0.1:8080/"),
            (
                .runWritten(
                    summary: "sent 10",
                    document: Self.golden,
                    folder: "results/a",
                    files: ["summary.json", "summary.md"]
                ),
                .output, "sent 10\nresults: results/a/ (summary.json, summary.md)"
            ),
            (
                .unreachable(failure, host: "::1", port: 2197), .error,
                RunSummary.unreachableLine(failure, host: "::1", port: 2197)
            ),
            (.repeatStarting(index: 2, of: 3), .output, "repeat 2 of 3"),
            (
                .repeatsInterrupted(finished: 1, asked: 3, signal: .interrupt), .output,
                "INVALID: interrupted after 1 of 3 repeats (SIGINT)"
            ),
            (
                .startAtPassed(Date(timeIntervalSince1970: 0), late: .milliseconds(1250)), .error,
                "warning: --start-at 1970-01-01T00:00:00.000Z passed 1.25 s before the run began: it starts now"
            ),
            (
                .startAtPassed(Date(timeIntervalSince1970: 0), late: .seconds(1_796_000_000)), .error,
                "warning: --start-at 1970-01-01T00:00:00.000Z passed 20,787 days before the run began: it starts now"
            ),
            (
                .fewPairs(1), .error,
                "warning: --repeat 1: 1 pair cannot measure the noise, so no verdict will be given (at least 3 can; 5 or more narrow the interval)"
            ),
            (
                .costFromFlatOut(folder: "results/a"), .error,
                "warning: --cost results/a is a flat-out run (the closed model): its answers come back together and cost the sender least, and plans from such costs were up to 6 times short of cores (docs/planning.md); give --cost a run at the plan's pace on its wire (--rate, --sink-rtt), or --calibrate"
            ),
            (.stepSummaryUnwritable(path: "/x"), .error, "cannot append to $GITHUB_STEP_SUMMARY (/x)"),
            (.sink(.wire("a 20 ms wire")), .error, "fanout sink: a 20 ms wire"),
            (
                .sink(.connectionLimit(connections: 1000, openFiles: 1024, perPeer: 500)), .error,
                "fanout sink: at most 1,000 connections: what the open-file limit, 1,024, leaves with headroom (--max-connections sets it); 500 from one address"
            ),
            (.sinkStopped(lines: ["a", "b"]), .output, "a\nb"),
            (.sinkWritten(summary: "s", folder: "out"), .output, "s\nwrote out"),
            (
                .channelsKept(kept), .error,
                "fanout: 2 of 5 channels were not deleted at http://127.0.0.1:2196 (BadChannelId): they stay until deleted"
            ),
            (.pairStarting(pair: 1, of: 5, side: "b", binary: "/bin/new"), .output, "pair 1 of 5: B (/bin/new)"),
            (
                .calibrating(Calibration(notifications: 20_000, connections: 4, streams: 100, wire: "no wire")), .error,
                "calibrating: 20000 notifications to the embedded sink over TLS with token auth, 4 connections × 100 streams, no wire…"
            ),
            (.repeatsSpread("throughput 1/s"), .output, "throughput 1/s"),
            (.repeatsReportWritten(path: "r/report.html"), .output, "the repeats side by side: r/report.html"),
            (
                .sink(.selfSigned(directory: "/tls")), .error,
                "fanout sink: TLS with a self-signed certificate; clients trust it with /tls/cert.pem"
            ),
            (
                .sink(.authenticationOff), .error,
                "fanout sink: auth is off (no --key-file or --client-ca given): every request is taken as authenticated"
            ),
            (.sink(.serving("too many streams")), .error, "fanout sink: too many streams"),
            (.searchStarted, .output, SearchReport.tableHeader),
            (.renderFailed(position: 3, token: nil, reason: "too short"), .error, "error: token 3: too short"),
            (
                .renderFailed(position: 4, token: String(repeating: "ab", count: 32), reason: "too big"), .error,
                "error: token 4 (abababababababab…): too big"
            ),
        ]
        for (event, stream, words) in said {
            let (saidOn, saidWords) = ConsoleReporter.words(for: event)
            #expect(saidOn == stream, "\(event)")
            #expect(saidWords == words)
        }
    }

    /// The progress line is drawn on standard error only for a terminal, and cleared before the
    /// next line on either stream: a summary never starts in the middle of it.
    @Test func theProgressLineIsClearedBeforeAnyOtherLine() throws {
        let output = Pipe()
        let error = Pipe()
        let progress = RunProgress(
            elapsed: .seconds(2),
            finished: 1000,
            ratePerSecond: 500,
            latency: Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        )
        let line = ProgressLine(progress, total: 2000).text
        let clear = "\r\u{1B}[K"

        let terminal = ConsoleReporter(
            progressOnTerminal: true,
            output: StandardStream(descriptor: output.fileHandleForWriting.fileDescriptor),
            error: StandardStream(descriptor: error.fileHandleForWriting.fileDescriptor)
        )
        terminal.report(.progress(progress, total: 2000))
        terminal.report(.progress(progress, total: 2000))
        terminal.report(.repeatStarting(index: 1, of: 2))
        terminal.report(.repeatStarting(index: 2, of: 2))

        let notTerminal = ConsoleReporter(
            progressOnTerminal: false,
            output: StandardStream(descriptor: output.fileHandleForWriting.fileDescriptor),
            error: StandardStream(descriptor: error.fileHandleForWriting.fileDescriptor)
        )
        notTerminal.report(.progress(progress, total: 2000))
        notTerminal.report(.sinkStopped(lines: ["done"]))
        try output.fileHandleForWriting.close()
        try error.fileHandleForWriting.close()

        let written = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorWritten = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(written == "repeat 1 of 2\nrepeat 2 of 2\ndone\n")
        #expect(errorWritten == clear + line + clear + line + clear)
        #expect(!notTerminal.wantsProgress && terminal.wantsProgress)
    }

    /// What each style prints when a run's folder is written (issue 64): five lines by default,
    /// every line with --verbose, nothing with --quiet (no progress either), and with --json the
    /// document alone on standard output, every other line moved to standard error.
    @Test(arguments: [ConsoleReporter.Style.brief, .verbose, .quiet, .json])
    func eachStylePrintsWhatItSays(style: ConsoleReporter.Style) throws {
        let output = Pipe()
        let error = Pipe()
        let reporter = ConsoleReporter(
            progressOnTerminal: true,
            output: StandardStream(descriptor: output.fileHandleForWriting.fileDescriptor),
            error: StandardStream(descriptor: error.fileHandleForWriting.fileDescriptor)
        )
        reporter.style = style
        let progress = RunProgress(
            elapsed: .seconds(1),
            finished: 10,
            ratePerSecond: 10,
            latency: Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        )
        reporter.report(.progress(progress, total: nil))
        reporter.report(.repeatStarting(index: 1, of: 1))
        let files = ["summary.json", "summary.md"]
        reporter.report(.runWritten(summary: "every line", document: Self.golden, folder: "results/a", files: files))
        try output.fileHandleForWriting.close()
        try error.fileHandleForWriting.close()
        let written = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errorWritten = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let brief = ConsoleSummary(summary: Self.golden).lines(folder: "results/a", files: files)
        let clear = "\r\u{1B}[K"
        let drawn = clear + ProgressLine(progress, total: nil).text + clear
        switch style {
        case .brief:
            #expect(brief.count == 5)
            #expect(written == "repeat 1 of 1\n" + brief.joined(separator: "\n") + "\n")
            #expect(errorWritten == drawn)
        case .verbose:
            // Every line, whose latency and the error rate, and the verdict of a valid run (an
            // invalid one's INVALID lines are it).
            #expect(
                written
                    == "repeat 1 of 1\nevery line\nerrors 0.50% (30 of 6,000); latency is the endpoint's (0.49% Fanout's)\n"
                    + RunVerdict(summary: Self.golden).line + "\nresults: results/a/ (summary.json, summary.md)\n"
            )
        case .quiet:
            // Not even a repeat's line (a newcomer's --repeat 2 --quiet printed the spread).
            #expect(written.isEmpty)
            #expect(errorWritten.isEmpty)
        case .json:
            #expect(written == String(decoding: try JSONDocument.data(Self.golden), as: UTF8.self))
            #expect(errorWritten == drawn + "repeat 1 of 1\n")
        }
    }

    /// The five lines of the golden run, each whole.
    @Test func theFiveLinesSayWhatRanWhatCameBackAndWhetherItStands() {
        #expect(
            ConsoleSummary(summary: Self.golden).lines(folder: "results/a", files: ["summary.json"]) == [
                "6,000 notifications to http://127.0.0.1:2197 in 3.01 s over 4 connections × 1000 streams: 1,992 notifications/s",
                "accepted 5,970   rejected 20   failed 10   skipped 0   errors 0.50%",
                "latency ms: p50 2.94  p90 4.72  p99 404.5  p99.9 404.8  p99.99 404.8  max 405.0  — the endpoint's (0.49% Fanout's)",
                "FAILED: 10 notifications failed (no answer after every try; by cause in the outcomes)",
                "results: results/a/ (summary.json)",
            ]
        )
    }

    /// The first line says what its rate is over: the time after a warm-up (500,000 in 10.02 s
    /// read 49,963/s, newcomer pass 3), and a merge's connections a shard, with the shards.
    @Test func theFirstLineSaysWhatItsRateIsOver() {
        var summary = Self.golden
        summary.warmUpSeconds = 2
        #expect(
            ConsoleSummary(summary: summary).lines[0].hasSuffix("streams: 1,992 notifications/s after the 2 s warm-up")
        )
        summary.warmUpSeconds = 0
        summary.mergedFrom = ["a", "b"]
        #expect(
            ConsoleSummary(summary: summary).lines[0].hasSuffix(
                "over 4 connections × 1000 streams a shard, 2 shards merged: 1,992 notifications/s"
            )
        )
    }

    /// The latency line says what else is in the latency: a lower bound of Fanout's share is
    /// marked so (with its figures under 1%: "≥0%" said nothing, newcomer pass 3; a bound of
    /// nothing is "not measured"), and notifications that waited for a stream are counted (the README tour's
    /// p99 of 162 ms against a sink holding 80 ms was otherwise unexplained, newcomer pass).
    @Test func theLatencyLineSaysWhatElseIsInIt() throws {
        var summary = Self.golden
        summary.harness?.ownMeasured = false
        summary.openModel?.streamWaits.count = 1_677
        summary.openModel?.streamWaits.share = 0.839
        summary.openModel?.streamWaits.longestMs = 80
        #expect(
            ConsoleSummary(summary: summary).lines[2]
                == "latency ms: p50 2.94  p90 4.72  p99 404.5  p99.9 404.8  p99.99 404.8  max 405.0  — the endpoint's (≥0.49% Fanout's); 83.9% waited up to 80.0 ms for a stream"
        )
        summary.harness?.shareOfP99 = 0
        #expect(
            ConsoleSummary(summary: summary).lines[2].hasSuffix(
                "— the endpoint's (Fanout's share not measured); 83.9% waited up to 80.0 ms for a stream"
            )
        )
    }

    /// A scaled rehearsal says so first, in the title's words.
    @Test func aScaledRehearsalSaysSoFirst() {
        var summary = Self.golden
        summary.sample = SampleSummary(share: 0.01, campaignDevices: 600_000, devices: 6_000)
        #expect(
            ConsoleSummary(summary: summary).lines[0]
                == "SCALED REHEARSAL (1% of the devices, time ×100): 6,000 notifications to http://127.0.0.1:2197 in 3.01 s over 4 connections × 1000 streams: 1,992 notifications/s"
        )
    }

    /// The progress line shows the errors so far, and their share of what finished.
    @Test func progressShowsErrors() {
        let latency = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        let progress = RunProgress(
            elapsed: .seconds(3),
            finished: 4_000,
            ratePerSecond: 1_000,
            latency: latency,
            errors: 30
        )
        #expect(
            ProgressLine(progress, total: 6_000).text
                == "3.0 s  1,000/s  4,000 / 6,000 (66.7%)  errors 30 (0.75%)  ETA 2.0 s"
        )
        let few = RunProgress(
            elapsed: .seconds(3),
            finished: 1_000_000,
            ratePerSecond: 1_000,
            latency: latency,
            errors: 3
        )
        #expect(ProgressLine(few, total: nil).text == "3.0 s  1,000/s  1,000,000 done  errors 3 (0.00030%)")
    }
}
