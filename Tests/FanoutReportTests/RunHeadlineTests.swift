import FanoutFiles
import FanoutResults
import FanoutTestSupport
import Foundation
import Testing

@testable import FanoutReport

/// A run's first screen (issue 64): when and where it ran, its command, what ran in one line,
/// its verdict, the error-rate and trust cards; and the charts' round ticks and one time axis.
@Suite struct RunHeadlineTests {
    static func golden() throws -> SummaryDocument { try HTMLReportTests.summary() }

    @Test func theHeadlineSaysWhenWhereAndWhatRan() throws {
        var summary = try Self.golden()
        summary.command = "fanout run --rate 2000 --duration 3s"
        let headline = RunHeadline(summary: summary)
        #expect(headline.when == "2026-11-22 07:00:00 UTC on golden")
        #expect(headline.command == "fanout run --rate 2000 --duration 3s")
        #expect(
            headline.whatRan
                == "open model, 2000/s for 3.0 seconds: 6,000 notifications in 3.01 s to http://127.0.0.1:2197 over 4 connections × 1000 streams"
        )
        summary.warmUpSeconds = 1
        summary.configuration.scenario = FileUse(
            path: "fixtures/scenarios/bad-day.scenario",
            sha256: String(repeating: "0", count: 64)
        )
        summary.shard = "1/2"
        #expect(
            summary.whatRan
                == "open model, 2000/s for 3.0 seconds (warm-up 1 s): 6,000 notifications in 3.01 s to http://127.0.0.1:2197 over 4 connections × 1000 streams, scenario bad-day.scenario, shard 1/2"
        )
        summary.model = .closed
        summary.schedule = nil
        summary.shard = nil
        summary.configuration.scenario = nil
        summary.configuration.durationSeconds = 60
        summary.mergedFrom = ["a", "b"]
        summary.connections = 1
        #expect(
            summary.whatRan
                == "closed model for 60 s (warm-up 1 s): 6,000 notifications in 3.01 s to http://127.0.0.1:2197 over 1 connection × 1000 streams a shard, merged from 2 shards"
        )
    }

    /// The verdict: an abort's FAILED first, then INVALID with its reasons, PASSED when
    /// `--abort-on` conditions were given and none was met, VALID otherwise.
    @Test func theVerdictIsTheGatesWhenThereWasOneElseValidity() throws {
        var summary = try Self.golden()
        // The golden run's 10 timeouts fail it, as its exit status (3) does.
        #expect(
            RunVerdict(summary: summary).line
                == "FAILED: 10 notifications failed (no answer after every try; by cause in the outcomes)"
        )
        // Without them (and the outcomes still adding up to what was sent) it is valid.
        summary.failed = [:]
        summary.rejected[.apns(.unregistered), default: 0] += 10
        #expect(RunVerdict(summary: summary).kind == .valid)
        #expect(
            RunVerdict(summary: summary).line
                == "VALID: complete; no thresholds were given (fanout gate DIR --threshold … judges the folder)"
        )
        summary.reconciled = true
        #expect(RunVerdict(summary: summary).reason.hasPrefix("complete and reconciled with the sink;"))
        summary.configuration.abortOn = ["p99 > 200ms", "errors > 1%"]
        #expect(
            RunVerdict(summary: summary).line == "PASSED: no --abort-on condition was met (p99 > 200ms; errors > 1%)"
        )
        summary.valid = false
        summary.invalidCauses = [.noAnswers]
        #expect(
            RunVerdict(summary: summary).line
                == "INVALID: its figures cannot be trusted: " + InvalidReason.noAnswers.description
        )
        summary.aborted = SummaryDocument.Aborted(
            condition: "p99 > 200ms",
            windowSeconds: 10,
            afterSeconds: 13,
            measured: 1000.5,
            unit: "ms"
        )
        #expect(RunVerdict(summary: summary).line == "FAILED: " + (summary.aborted?.line ?? ""))
        // A run that gave up before its end, with no signal to say so, is invalid (as the gate
        // has it); a partial merge too; a disagreement with the sink too.
        summary.aborted = nil
        summary.valid = true
        summary.invalidCauses = []
        summary.cancelled = true
        #expect(
            RunVerdict(summary: summary).line
                == "INVALID: its figures cannot be trusted: \(InvalidReason.stoppedBeforeTheEnd)"
        )
        summary.cancelled = false
        summary.reconciled = false
        #expect(
            RunVerdict(summary: summary).line
                == "INVALID: its figures cannot be trusted: \(InvalidReason.senderAndSinkDisagree)"
        )
        summary.reconciled = true
        summary.partial = true
        summary.partialReasons = ["shard 2/2 missing"]
        #expect(RunVerdict(summary: summary).kind == .invalid)
        #expect(RunVerdict(summary: summary).reason.hasPrefix("a partial merge: shard 2/2 missing"))
    }

    /// The page's first screen holds all of it, and the cards for errors and for whose latency
    /// it is.
    @Test func theFirstScreenHoldsTheHeadlineAndTheCards() throws {
        var summary = try Self.golden()
        summary.command = "fanout run --rate '2000/s' --duration 3s"
        let page = HTMLDocument(HTMLReportTests.html(summary))
        #expect(
            page.elements("p", class: "when").map(\.text) == [
                "Ran 2026-11-22 07:00:00 UTC on golden · fanout run --rate '2000/s' --duration 3s"
            ]
        )
        #expect(page.texts("code") == ["fanout run --rate '2000/s' --duration 3s"])
        #expect(page.elements("p", class: "what").map(\.text).first?.hasPrefix("Open model, 2000/s") == true)
        #expect(
            page.elements("p", class: "verdict-failed").map(\.text).first?.hasPrefix(
                "FAILED 10 notifications failed"
            ) == true
        )
        let cards = Dictionary(
            uniqueKeysWithValues: page.elements("div", class: "card").map { card in
                (card.texts("div").first ?? "", card.texts("div").last ?? "")
            }
        )
        #expect(cards["errors"] == "0.50% (30 of 6,000)", "\(cards)")
        // The golden run's own delay is 2 ms of a 404.5 ms p99.
        #expect(cards["latency is"] == "the endpoint's (0.49% Fanout's)", "\(cards)")
        summary.harness?.bound = true
        summary.harness?.shareOfP99 = 0.4
        #expect(HarnessRecord(summary: summary)?.latencyIs == "HARNESS-BOUND (40% Fanout's)")
        summary.harness?.shareOfP99 = 1
        summary.harness?.selfMeasurement = true
        #expect(HarnessRecord(summary: summary)?.latencyIs == "Fanout's own (self-measurement)")
        let selfMeasured = HTMLDocument(HTMLReportTests.html(summary))
        #expect(
            selfMeasured.elements("p", class: "invalid").map(\.text).first?.hasPrefix(
                "HARNESS-BOUND, a self-measurement: the embedded sink answers at once"
            ) == true
        )
    }

    /// Round ticks: 1, 2 or 5 times a power of ten (a top of 5 every 1: a line at 4 reads 4).
    @Test(arguments: [
        (5.0, false, [0.0, 1, 2, 3, 4, 5]), (50, false, [0, 10, 20, 30, 40, 50]), (2, false, [0, 0.5, 1, 1.5, 2]),
        (1, false, [0, 0.2, 0.4, 0.6, 0.8, 1]), (1, true, [0, 1]), (2, true, [0, 1, 2]),
        (20_000, true, [0, 5_000, 10_000, 15_000, 20_000]),
    ])
    func ticksAreRound(top: Double, whole: Bool, ticks: [Double]) {
        let drawn = ChartFrame.ticks(upTo: top, whole: whole)
        #expect(drawn.count == ticks.count && zip(drawn, ticks).allSatisfy { abs($0 - $1) < 1e-9 }, "\(drawn)")
    }

    /// One time axis: every chart of time labels the same seconds at the same x, and a 100 ms
    /// bin's bar begins where its time is on the per-second charts.
    @Test func everyChartOfTimeSharesOneAxis() throws {
        let summary = try Self.golden()
        let html = HTMLReportTests.html(summary)
        let page = HTMLDocument(html)
        let timed = page.elements("svg").filter { $0.texts("text").last == "seconds from the run's start" }
        #expect(timed.count >= 4, "\(timed.count)")
        let labels = timed.map { $0.texts("text").filter { $0.hasSuffix(" s") } }
        #expect(Set(labels.map { $0.joined(separator: ",") }).count == 1, "\(labels)")
        let axis = TimeAxis(span: Double(summary.intervals.count), warmUp: 0)
        let label = try Regex(#"<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">1 s</text>"#)
        let xs = Set(html.matches(of: label).map { $0.output[1].substring.map(String.init) ?? "" })
        #expect(xs == [String(axis.x(1))], "\(xs)")
    }

    /// The command as a person would paste it again: words a shell would split or expand
    /// quoted, and nothing recorded for a process that is not `fanout`.
    @Test func theCommandIsRecordedAsAShellWouldReadIt() {
        #expect(
            Invocation.command([".build/release/fanout", "run", "--abort-on", "p99 > 200ms", "--topic", "it's", ""])
                == ".build/release/fanout run --abort-on 'p99 > 200ms' --topic 'it'\\''s' ''"
        )
        #expect(
            Invocation.command(["/usr/bin/fanout", "run", "--rate", "2000/s", "--sink-latency", "fixed:10ms"])
                == "/usr/bin/fanout run --rate 2000/s --sink-latency fixed:10ms"
        )
        #expect(Invocation.command(["/tmp/xctest", "run"]) == nil)
        // A secret is never recorded: an access token is a credential on a CI page.
        #expect(
            Invocation.command(["fanout", "send", "--fcm-bearer", "ya29.secret", "--project", "p"])
                == "fanout send --fcm-bearer '<redacted>' --project p"
        )
        #expect(
            Invocation.command(["fanout", "send", "--fcm-bearer=ya29.secret"])
                == "fanout send --fcm-bearer='<redacted>'"
        )
        #expect(Invocation.command([]) == nil)
    }
}
