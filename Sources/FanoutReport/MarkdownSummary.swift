import Foundation

/// `summary.md`: the run for a CI job summary (`$GITHUB_STEP_SUMMARY`) or a pull-request
/// comment — a verdict line, the headline numbers, latency percentiles and outcomes as tables.
public struct MarkdownSummary {
    /// `summary.json`'s object.
    public var summary: [String: Any]

    public init(summary: [String: Any]) {
        self.summary = summary
    }

    /// `CPU per notification: sender 5.21 µs, sink 3.10 µs` (sink only for `fanout run`).
    var cpuLine: String {
        let cpu = summary["cpu"] as? [String: Any] ?? [:]
        let parts = ["sender", "sink"].compactMap { role in
            (cpu["\(role)_us_per_notification"] as? Double).map { "\(role) \(String(format: "%.2f", $0)) µs" }
        }
        return parts.isEmpty
            ? "CPU per notification: not measured" : "CPU per notification: " + parts.joined(separator: ", ")
    }

    public var text: String {
        let latency = summary["latency_ms"] as? [String: Double] ?? [:]
        let sent = summary["sent"] as? Int ?? 0
        let valid = summary["valid"] as? Bool ?? true
        let reconciled = summary["reconciled"] as? Bool
        let configuration = summary["configuration"] as? [String: Any] ?? [:]
        let environment = summary["environment"] as? [String: Any] ?? [:]
        var lines = ["## Fanout run", ""]
        lines.append(
            (valid ? "✅ valid" : "❌ **invalid**")
                + (reconciled == true
                    ? " · sender and sink agree" : reconciled == false ? " · ❌ **sender and sink disagree**" : "")
                + " · \(configuration["model"] as? String ?? "closed") model"
        )
        for reason in summary["invalid_reasons"] as? [String] ?? [] { lines.append("- \(reason)") }
        lines += [
            "",
            "| notifications | throughput | connections × streams | elapsed |",
            "|---:|---:|---:|---:|",
            "| \(grouped(sent)) | \(grouped(Int((summary["throughput_per_second"] as? Double ?? 0).rounded())))/s | \(summary["connections"] as? Int ?? 0) × \(summary["streams_per_connection"] as? Int ?? 0) | \(String(format: "%.2f", summary["elapsed_seconds"] as? Double ?? 0)) s |",
            "",
            cpuLine,
            "",
            "| latency | p50 | p90 | p99 | p99.9 | p99.99 | max |",
            "|---|---:|---:|---:|---:|---:|---:|",
            "| ms | "
                + ["p50", "p90", "p99", "p99_9", "p99_99", "max"].map { String(format: "%.2f", latency[$0] ?? 0) }
                .joined(separator: " | ") + " |",
            "",
            "| outcome | count |",
            "|---|---:|",
            "| accepted | \(grouped(summary["accepted"] as? Int ?? 0)) |",
        ]
        for (kind, key) in [("rejected", "rejected"), ("failed", "failed"), ("skipped", "skipped")] {
            for (reason, count) in (summary[key] as? [String: Int] ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines.append("| \(kind) \(reason) | \(grouped(count)) |")
            }
        }
        if let harness = HarnessRecord(summary: summary) {
            lines += [
                "",
                (harness.bound ? "⚠️ **harness-bound**: " : "") + harness.headline.prefix(1).uppercased()
                    + harness.headline.dropFirst(),
            ]
            lines += harness.guidance.map { "- \($0)" }
            lines += ["", "| the harness's own delays, ms | p50 | p99 | max |", "|---|---:|---:|---:|"]
            for row in harness.rows {
                lines.append(String(format: "| %@ | %.2f | %.2f | %.2f |", row.name, row.p50, row.p99, row.max))
            }
        }
        lines += [
            "",
            "<sub>Fanout \(environment["fanout_version"] as? String ?? "?") (\(environment["build"] as? String ?? "?"), \(environment["allocator"] as? String ?? "?")) on \(environment["cpu"] as? String ?? "?"), \(environment["cores"] as? Int ?? 0) cores · \(configuration["endpoint"] as? String ?? "")</sub>",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
