import FanoutResults
import Foundation

/// `summary.md`: the run for a CI job summary (`$GITHUB_STEP_SUMMARY`) or a pull-request
/// comment — a verdict line, the headline numbers, latency percentiles and outcomes as tables.
public struct MarkdownSummary {
    public var summary: SummaryDocument

    public init(summary: SummaryDocument) {
        self.summary = summary
    }

    /// `CPU per notification: sender 5.21 µs, sink 3.10 µs` (sink only for `fanout run`).
    var cpuLine: String {
        guard summary.answered > 0 else { return "CPU per notification: none (no answers)" }
        let cpu = summary.cpu
        let parts = [("sender", cpu?.senderPerNotification), ("sink", cpu?.sinkPerNotification)].compactMap {
            role,
            cost in cost.map { "\(role) \(String(format: "%.2f", $0)) µs" }
        }
        return parts.isEmpty
            ? "CPU per notification: not measured" : "CPU per notification: " + parts.joined(separator: ", ")
    }

    public var text: String {
        if let provider = summary.provider { return providerText(provider) }
        let reconciled = summary.reconciled
        let environment = summary.environment
        var lines = ["## Fanout run" + (summary.sample.map { ": " + $0.title } ?? ""), ""]
        if let sample = summary.sample { lines += ["**Scaled rehearsal**: " + sample.headline + ".", ""] }
        lines.append(
            (summary.valid ? "✅ valid" : "❌ **invalid**")
                + (reconciled == true
                    ? " · sender and sink agree" : reconciled == false ? " · ❌ **sender and sink disagree**" : "")
                + " · \(summary.configuration.model) model"
        )
        for reason in summary.invalidity { lines.append("- \(reason)") }
        if let aborted = summary.aborted { lines.append("- ⛔ **\(aborted.line)**") }
        let headline = RunHeadline(summary: summary)
        if headline.verdict.kind == .passed { lines.append("- ✅ **PASSED**: \(headline.verdict.reason)") }
        lines += [
            "",
            "Ran \(headline.when)" + (headline.command.map { " · `\($0)`" } ?? "") + "  ",
            headline.whatRan.prefix(1).uppercased() + headline.whatRan.dropFirst(),
        ]
        let nothing = summary.answered == 0 ? "no answers" : "nothing measured"
        let throughput = summary.throughputPerSecond.map { "\(grouped(Int($0.rounded())))/s" } ?? nothing
        lines += [
            "",
            "| notifications | throughput | connections × streams | elapsed |",
            "|---:|---:|---:|---:|",
            "| \(grouped(summary.sent)) | \(throughput) | \(summary.connections) × \(summary.streamsPerConnection) | \(String(format: "%.2f", summary.elapsedSeconds)) s |",
            "",
            cpuLine,
            "",
        ]
        if let latency = summary.latency {
            lines += [
                "| latency | p50 | p90 | p99 | p99.9 | p99.99 | max |",
                "|---|---:|---:|---:|---:|---:|---:|",
                "| ms | "
                    + SummaryDocument.Latency.percentiles.map { String(format: "%.2f", latency[keyPath: $0.value]) }
                    .joined(separator: " | ") + " |",
            ]
        } else {
            lines.append("Latency: \(nothing).")
        }
        if let waited = summary.openModel?.streamWaitLine {
            lines += ["", "Stream waits: \(waited)."]
        }
        if let kept = summary.openModel?.keptUpLine {
            lines += ["", "⚠️ **Did not keep up**: \(kept)."]
        }
        lines += [
            "",
            "| outcome | count |",
            "|---|---:|",
            "| accepted | \(grouped(summary.accepted)) |",
        ]
        for (kind, counts) in [
            ("rejected", summary.rejected.byName), ("failed", summary.failed.byName),
            ("skipped", summary.skipped.byName),
        ] {
            for (reason, count) in counts {
                lines.append("| \(kind) \(reason) | \(grouped(count)) |")
            }
        }
        if let harness = HarnessRecord(summary: summary) {
            lines += [
                "",
                // In the console's and the page's word: `⚠️ **HARNESS-BOUND**, a self-measurement (…): …`.
                harness.bound
                    ? "⚠️ **HARNESS-BOUND**" + (harness.selfMeasurement ? ", " : ": ") + harness.headline
                    : harness.headline.prefix(1).uppercased() + harness.headline.dropFirst(),
            ]
            lines += harness.guidance.map { "- \($0)" }
            lines += ["", "| the harness's own delays, ms | p50 | p99 | max |", "|---|---:|---:|---:|"]
            for row in harness.rows {
                lines.append(String(format: "| %@ | %.2f | %.2f | %.2f |", row.name, row.p50, row.p99, row.max))
            }
        }
        lines += [
            "",
            "<sub>Fanout \(environment.fanoutVersion) (\(environment.build), \(environment.allocator)) on \(environment.cpu), \(environment.cores) cores · \(summary.configuration.endpoint)</sub>",
        ]
        // The devices' section goes above the footer (its blank line and the environment).
        lines.insert(contentsOf: summary.delivery?.markdown(for: summary.service) ?? [], at: lines.count - 2)
        lines.insert(contentsOf: summary.returnWave?.markdown ?? [], at: lines.count - 2)
        return lines.joined(separator: "\n") + "\n"
    }

    /// A sink's folder: the fan-out, the card and the capacity line.
    func providerText(_ provider: SummaryDocument.Provider) -> String {
        let delivery = provider.delivery
        var lines = ["## Fanout sink: the provider under test", ""]
        // A sink's folder always has a card (`provider`): judged, or not for want of requests.
        let card =
            switch summary.cardJudgement ?? .notJudged {
            case .notJudged: "card not judged (no request arrived)"
            case .passed: "card passed"
            case .failed(let violations): "❌ **card failed: \(grouped(violations)) violations**"
            }
        lines.append(
            (summary.valid ? "✅ valid" : "❌ **invalid**") + " · \(card) · ended by \(provider.endedBy)"
        )
        for reason in summary.invalidity { lines.append("- \(reason)") }
        lines += [
            "",
            "| accepted | fan-out time | accepted/s | connections | streams a connection |",
            "|---:|---:|---:|---:|---:|",
            "| \(grouped(summary.accepted)) | \(String(format: "%.3f", delivery.fanoutSeconds)) s | \(grouped(Int(delivery.acceptedPerSecond.rounded())))/s | \(summary.connections) | \(provider.streams.text) (peak \(provider.streams.peak)) |",
            "",
            "| delivery time | first | p50 | p90 | p99 | last |",
            "|---|---:|---:|---:|---:|---:|",
            String(
                format: "| ms | %.2f | %.2f | %.2f | %.2f | %.2f |",
                delivery.firstMs,
                delivery.p50Ms,
                delivery.p90Ms,
                delivery.p99Ms,
                delivery.lastMs
            ),
            "",
        ]
        if provider.maybeUnread > 0 {
            lines += [
                "⚠️ **\(grouped(provider.maybeUnread)) answered, maybe unread**: accepted answers the provider never acknowledged reading before its connection broke.",
                "",
            ]
        }
        lines += [
            "| check | rule | count | verdict |",
            "|---|---|---:|---|",
        ]
        for check in provider.card.checks {
            lines.append(
                "| \(check.rule.rawValue) | \(check.title) | \(grouped(check.count)) | \(check.passed ? "pass" : "❌ FAIL") |"
            )
        }
        lines += [
            "",
            "Capacity: " + provider.capacity.text + ".",
            "",
            String(
                format: "The sink's own lateness (not the provider's): p99 %.2f ms, max %.2f ms.",
                provider.sinkOwn.lateness.p99,
                provider.sinkOwn.lateness.max
            ),
            "",
            "<sub>Fanout \(summary.environment.fanoutVersion) (\(summary.environment.build), \(summary.environment.allocator)) on \(summary.environment.cpu), \(summary.environment.cores) cores · \(summary.endpoint)</sub>",
        ]
        // The devices' section goes above the footer (its blank line and the environment).
        lines.insert(contentsOf: summary.delivery?.markdown(for: summary.service) ?? [], at: lines.count - 2)
        return lines.joined(separator: "\n") + "\n"
    }
}
