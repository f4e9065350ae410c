import FanoutAssembly
import FanoutClient
import FanoutEndpoint
import FanoutMeasure
import FanoutReport
import FanoutRun
import Foundation
import Histogram
import Testing

@testable import fanout

/// The console reporter: the one place a job's events become words, each on its stream, and
/// the progress line that no other line is written over.
@Suite struct ConsoleReporterTests {
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
                .runWritten(summary: "sent 10", folder: "results/a", files: ["summary.json", "summary.md"]),
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
                "warning: --start-at 1970-01-01T00:00:00.000Z passed 1250 ms before the run began: it starts now"
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
}
