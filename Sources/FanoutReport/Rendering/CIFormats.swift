import FanoutResults
import Foundation

/// A run's figures in the files CI tools read, made from a run folder or a folder of repeats
/// (medians; with repeats, the lowest and highest as Bencher's bounds):
///
/// - Bencher Metric Format (`bencher run --adapter json`):
///   `{"BENCHMARK": {"MEASURE": {"value": V, "lower_value": L, "upper_value": U}}}`
/// - github-action-benchmark's `customBiggerIsBetter` and `customSmallerIsBetter`:
///   `[{"name": "…", "unit": "…", "value": V, "range": "…", "extra": "…"}]`
public struct CIExport: Sendable {
    public var run: RunSet
    /// The benchmark's name in the files: what was measured (`fanout run`, a scenario's name).
    public var name: String

    public init(run: RunSet, name: String) {
        self.run = run
        self.name = name
    }

    public enum Format: String, Sendable, CaseIterable {
        case bencher
        case benchmarkActionBigger = "benchmark-action-bigger"
        case benchmarkActionSmaller = "benchmark-action-smaller"
    }

    /// The metrics exported: throughput is bigger-is-better; latencies and errors smaller.
    static let metrics: [RunMetric] = [.throughput, .p50, .p90, .p99, .p99_9, .max, .errors]

    /// Bencher's measure slug for a metric.
    static func slug(_ metric: RunMetric) -> String {
        switch metric {
        case .throughput: "throughput"
        case .errors: "errors"
        default: "latency-\(metric.rawValue.replacingOccurrences(of: ".", with: "-"))"
        }
    }

    static func unit(_ metric: RunMetric) -> String {
        switch metric {
        case .throughput: "notifications/s"
        case .errors: "notifications"
        default: "ms"
        }
    }

    /// A measure in Bencher Metric Format; the bounds only over repeats.
    struct BencherMeasure: Encodable {
        var value: Double
        var lowerValue: Double?
        var upperValue: Double?

        enum CodingKeys: String, CodingKey {
            case value
            case lowerValue = "lower_value"
            case upperValue = "upper_value"
        }
    }

    /// An entry of github-action-benchmark's custom formats; the range only over repeats.
    struct ActionEntry: Encodable {
        var name: String
        var unit: String
        var value: Double
        var range: String?
        var extra: String?
    }

    /// Bencher's object: the benchmark's measures by their slugs.
    var bencher: [String: [String: BencherMeasure]] {
        var measures: [String: BencherMeasure] = [:]
        for metric in Self.metrics {
            let range = run.runs.count > 1 ? run.range(metric) : nil
            measures[Self.slug(metric)] = BencherMeasure(
                value: run.median(metric),
                lowerValue: range?.lowerBound,
                upperValue: range?.upperBound
            )
        }
        return [name: measures]
    }

    /// github-action-benchmark's entries, bigger-is-better or smaller-is-better.
    func actionEntries(bigger: Bool) -> [ActionEntry] {
        Self.metrics.filter { $0.higherIsBetter == bigger }.map { metric in
            var entry = ActionEntry(
                name: "\(name) - \(metric.rawValue)",
                unit: Self.unit(metric),
                value: run.median(metric)
            )
            if run.runs.count > 1 {
                let range = run.range(metric)
                entry.range = String(format: "%g … %g", range.lowerBound, range.upperBound)
                entry.extra = "median of \(run.runs.count) repeats"
            }
            return entry
        }
    }

    public func data(_ format: Format) throws -> Data {
        switch format {
        case .bencher: try JSONDocument.data(bencher)
        case .benchmarkActionBigger: try JSONDocument.data(actionEntries(bigger: true))
        case .benchmarkActionSmaller: try JSONDocument.data(actionEntries(bigger: false))
        }
    }
}

extension Gate.Outcome {
    /// JUnit XML (as Jenkins, GitLab and the test-report actions read it): one test case per
    /// threshold, failed with the measured value and the limit; an invalid run is one more
    /// case, in error.
    ///
    /// ```
    /// <testsuites><testsuite name="fanout gate" tests="N" failures="F" errors="E">
    ///   <testcase classname="fanout.gate" name="p99 &lt; 25ms">
    ///     <failure message="measured 31.2 ms, limit 25 ms">…</failure>
    ///   </testcase> …
    /// ```
    public func junit(run directory: String) -> String {
        let escape = { XMLText.escaped($0, attribute: true) }
        let failures = verdicts.filter { !$0.passed }.count
        let errors = invalidReasons.isEmpty ? 0 : 1
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n"
        xml +=
            "  <testsuite name=\"fanout gate\" tests=\"\(verdicts.count + errors)\" failures=\"\(failures)\" errors=\"\(errors)\">\n"
        xml += "    <properties><property name=\"run\" value=\"\(escape(directory))\"/>"
        if let file = thresholdsFile {
            xml += "<property name=\"thresholds\" value=\"\(escape(file.path))\"/>"
            xml += "<property name=\"thresholds_sha256\" value=\"\(file.sha256)\"/>"
        }
        xml += "</properties>\n"
        for verdict in verdicts {
            xml += "    <testcase classname=\"fanout.gate\" name=\"\(escape(verdict.threshold.text))\">"
            if verdict.passed {
                xml += "<system-out>\(escape(verdict.line(width: 0)))</system-out></testcase>\n"
            } else {
                let message = "measured \(verdict.format(verdict.measured)), limit \(verdict.format(verdict.limit))"
                xml +=
                    "\n      <failure message=\"\(escape(message))\" type=\"threshold\">\(escape(verdict.line(width: 0)))</failure>\n    </testcase>\n"
            }
        }
        if !invalidReasons.isEmpty {
            let reasons = invalidReasons.map(\.description).joined(separator: "; ")
            xml += "    <testcase classname=\"fanout.gate\" name=\"the run is valid\">\n"
            xml += "      <error message=\"\(escape(reasons))\" type=\"invalid\">\(escape(reasons))</error>\n"
            xml += "    </testcase>\n"
        }
        return xml + "  </testsuite>\n</testsuites>\n"
    }
}

/// Text in an XML 1.0 document (JUnit reports): markup characters as entities, and what XML 1.0
/// cannot hold at all — the C0 controls but tab, newline and carriage return, U+FFFE and
/// U+FFFF — as U+FFFD, so a reason or a file name with a stray control byte never makes the
/// report unreadable. In an attribute, tab, newline and carriage return become character
/// references too: a parser would turn them into spaces (attribute-value normalisation).
enum XMLText {
    static func escaped(_ text: String, attribute: Bool = false) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t" where attribute: out += "&#9;"
            case "\n" where attribute: out += "&#10;"
            case "\r" where attribute: out += "&#13;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
