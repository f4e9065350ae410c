import FanoutClient
import FanoutNotation
import FanoutReport
import FanoutResults
import Foundation

// MARK: What a person reads at the end of a run

extension RunSummary {
    /// What a person reads at the end of a run.
    public var text: String {
        var lines =
            (sample.map { ["SCALED REHEARSAL: " + $0.headline] } ?? []) + countLines + openModelLines + notSentLines
        lines.append(latencyLine)
        lines.append(cpuLine)
        lines += harness.lines
        if let reconciliation {
            lines.append(
                reconciliation.agrees
                    ? "reconciled: the sink counted \(grouped(reconciliation.sinkRequests)) requests and every answer, and its digest matches (\(reconciliation.sinkDigest.text))"
                    : "NOT reconciled: " + reconciliation.differences.joined(separator: "; ")
            )
        }
        if let aborted = abortedDocument {
            lines.append("ABORTED: " + aborted.line)
        } else if report.cancelled {
            lines.append(report.abandoned.map { "gave up: \($0)" } ?? "stopped before the end")
        }
        if let scenario { lines.append("scenario: \(scenario)") }
        lines += delivery?.lines(for: configuration.endpoint.fcm == nil ? .apns : .fcm) ?? []
        lines += broadcast?.lines ?? []
        lines += returnWave?.lines ?? []
        for reason in invalidReasons { lines.append("INVALID: \(reason)") }
        return lines.joined(separator: "\n")
    }

    /// What was sent and how it ended: the totals, then each reason with its count.
    var countLines: [String] {
        let snapshot = report.snapshot
        let rejected = snapshot.rejected.values.reduce(0, +)
        let failed = snapshot.failed.values.reduce(0, +)
        let skipped = snapshot.skipped.values.reduce(0, +)
        let rate =
            answered == 0
            ? "no answers" : measured ? "\(grouped(Int(throughput.rounded()))) notifications/s" : "nothing measured"
        var lines = [
            "\(grouped(snapshot.sent)) notifications to \(endpoint) in \(String(format: "%.2f", seconds)) s over \(connections) connection\(connections == 1 ? "" : "s") × \(streamsPerConnection) streams: \(rate)",
            "accepted \(grouped(snapshot.accepted))   rejected \(grouped(rejected))   failed \(grouped(failed))   skipped \(grouped(skipped))   (requests \(grouped(snapshot.requests)), retries \(grouped(snapshot.retries))\(snapshot.resent > 0 ? ", resent \(grouped(snapshot.resent))" : ""))",
        ]
        for (reason, count) in snapshot.rejected.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  rejected \(reason.status.map(String.init) ?? "-") \(reason.rawValue): \(grouped(count))")
        }
        for (cause, count) in snapshot.failed.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  failed \(cause.rawValue): \(grouped(count))")
        }
        for (cause, count) in snapshot.skipped.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            lines.append("  skipped \(cause.rawValue): \(grouped(count))")
        }
        return lines
    }

    /// The open model's schedule, generator lag, pacing and stream waits; none for the closed model.
    var openModelLines: [String] {
        guard let schedule = report.schedule else { return [] }
        let snapshot = report.snapshot
        var lines: [String] = []
        let lag = snapshot.lag.totalCount == 0 ? 0 : Double(snapshot.lag.max) / 1000
        lines.append(
            "open model, \(schedule): latency counted from each notification's due time; generator lag max \(millisecondsText(lag)) ms (limit \(millisecondsText(report.maxLag.milliseconds)) ms)"
        )
        if let note = configuration.shape.model.rateNote { lines.append("rate \(note)") }
        if let open = openModelDocument {
            lines.append(
                "pacing: --coalesce \(open.coalesce), windows up to \(millisecondsText(open.largestWindowMs)) ms "
                    + "(tickets go out at their window's start, latency counted from the send when early)"
            )
            if let waited = open.streamWaitLine { lines.append("stream waits: \(waited)") }
            if let kept = open.keptUpLine {
                lines.append(
                    "did not keep up: \(kept)"
                        + (selfMeasurement
                            ? " (the embedded sink answers at once: this is Fanout's own ceiling here)" : "")
                )
            }
        }
        return lines
    }

    /// What was never sent, and why (schedule over, interrupted, tokens ran out), and the warm-up
    /// left out of the figures.
    var notSentLines: [String] {
        let snapshot = report.snapshot
        var lines: [String] = []
        if snapshot.unscheduled > 0 {
            lines.append("not sent (the schedule or duration was over): \(grouped(snapshot.unscheduled))")
        }
        if snapshot.unsent > 0 {
            lines.append(
                "never sent (interrupted): \(grouped(snapshot.unsent)) tokens read ahead, neither sent nor failed"
            )
        }
        if let ranOut = report.tokensRanOut {
            let at = ranOut.at.seconds
            lines.append(
                "unscheduled: \(grouped(Int(ranOut.arrivals))) of \(grouped(Int(ranOut.planned))) arrivals had no token "
                    + "(the tokens ran out \(String(format: "%.2f", at)) s into the schedule): not sent, "
                    + "and no latency stands for them"
            )
        }
        if report.warmUp > .zero {
            lines.append(
                "warm-up: notifications started in the first \(report.warmUp) are left out of latency and throughput"
            )
        }
        return lines
    }

    /// `latency ms: p50 … max …`, or why there is none.
    var latencyLine: String {
        if answered == 0 { return "latency: no answers" }
        if !measured { return "latency: none measured after the warm-up" }
        return "latency ms: "
            + SummaryDocument.Latency.percentiles.map {
                "\($0.label) \(millisecondsText(latency(at: $0.percentile)))"
            }
            .joined(separator: "  ")
    }

    /// `cpu µs per notification: sender 5.21 (5.2 s)  sink 3.10 (3.1 s)`.
    var cpuLine: String {
        let sent = report.snapshot.sent
        func part(_ name: String, _ cpu: Duration) -> String {
            let perNotification =
                Self.microsecondsPerNotification(cpu, sent: sent).map { String(format: "%.2f", $0) } ?? "-"
            return "\(name) \(perNotification) (\(String(format: "%.2f", cpu.seconds)) s)"
        }
        guard answered > 0 else {
            return
                "cpu: sender \(String(format: "%.2f", report.senderCPU.seconds)) s, none per notification (no answers)"
        }
        return "cpu µs per notification: " + part("sender", report.senderCPU)
            + (sinkCPU.map { "  " + part("sink", $0) } ?? "")
    }
}
