import FanoutFiles
import FanoutNotation
import FanoutResults
import Foundation

/// One gate condition, in the small language a k6 user recognises:
///
/// ```
///   threshold := metric comparison limit
///   metric    := p50 | p90 | p99 | p99.9 | p99.99 | max | lag | harness (times, ms by default)
///              | throughput                                         (per second)
///              | errors | failed | rejected | sent | accepted       (counts; errors also N%)
///              | delivered | discarded.expired | discarded.unregistered | discarded.disabled | forgotten
///                                           (the device fleet's counts; also N% of received)
///              | delivered.p50 | delivered.p90 | delivered.p99 | delivered.last   (from the fan-out's start)
///              | broadcast.accepted | broadcast.delivered | broadcast.open          (broadcasts: counts)
///              | broadcast.from_storage                                          (a count)
///              | broadcast.p99 | broadcast.last | broadcast.last.p99             (from each acceptance)
///              | broadcast.storage.p99                                           (from each acceptance)
///              | rejected.REASON | failed.CAUSE                   (counts by reason; also N% of sent)
///              | window(LENGTH).PERCENTILE                      (the worst window: GateMetric)
///   comparison:= < | <= | > | >= | == | !=
///   limit     := quantity | baseline [(+|-) quantity]
///   quantity  := number [us | µs | ms | s | m | /s | %]
/// ```
///
/// `p99 < 25ms`, `throughput > 100000/s`, `errors < 0.1%` (a share of `sent`), `failed == 0`,
/// `p99 < baseline + 10%` (10% above the baseline's p99), `throughput >= baseline - 5%`,
/// `p50 <= baseline + 2ms`.
public struct Threshold: Sendable, Hashable, CustomStringConvertible {
    /// `<`, `<=`, `>`, `>=`, `==`, `!=`.
    public typealias Comparison = FanoutNotation.Comparison

    public enum Limit: Sendable, Hashable {
        /// A value in the metric's unit (ms, per second, a count, or a share of `sent`).
        case value(Double)
        /// The baseline's value, moved by a share of it (`baseline + 10%`: 0.10) ...
        case baselineRelative(Double)
        /// ... or by a value in the metric's unit (`baseline + 2ms`: 2).
        case baselineAbsolute(Double)

        var needsBaseline: Bool {
            if case .value = self { return false }
            return true
        }
    }

    public var metric: GateMetric
    public var comparison: Comparison
    public var limit: Limit
    /// `errors` read as a share of `sent` (the limit was written with `%`).
    public var isShare: Bool
    public var text: String

    public var description: String { text }
    public var needsBaseline: Bool { limit.needsBaseline }

    /// Parses one threshold; the error says what is wrong and what is expected.
    public init(parsing text: String) throws(ThresholdError) {
        self.text = text.trimmingCharacters(in: .whitespaces)
        var rest = Substring(self.text)
        let metricText = rest.prefix { !" <>=!".contains($0) }
        guard let metric = try GateMetric(parsing: String(metricText)) else {
            let known =
                (RunMetric.allCases.map(\.rawValue) + ["rejected.REASON", "failed.CAUSE", "window(10s).p99"])
                .joined(separator: ", ")
            throw ThresholdError(
                .metric,
                metricText.isEmpty
                    ? "a threshold starts with a metric (\(known))"
                    : "\(TextLines.quoted(metricText)) is not a metric; the metrics are \(known)"
            )
        }
        self.metric = metric
        rest = rest.dropFirst(metricText.count).drop { $0 == " " }
        guard let comparison = Comparison.allCases.first(where: { rest.hasPrefix($0.rawValue) }) else {
            throw ThresholdError(.comparison, "after \(metric) comes a comparison: <, <=, >, >=, == or !=")
        }
        self.comparison = comparison
        rest = rest.dropFirst(comparison.rawValue.count).drop { $0 == " " }
        guard !rest.isEmpty else {
            throw ThresholdError(
                .limit,
                "\(TextLines.quoted(self.text)): the limit is missing, e.g. 25ms or baseline + 10%"
            )
        }

        if rest.hasPrefix("baseline") {
            rest = rest.dropFirst("baseline".count).drop { $0 == " " }
            isShare = false
            if let sign = rest.first {
                guard sign == "+" || sign == "-" else {
                    throw ThresholdError(
                        .limit,
                        "after baseline comes + or - and an amount, like baseline + 10%; got \(TextLines.quoted(rest))"
                    )
                }
                let (amount, unit) = try Self.quantity(rest.dropFirst().drop { $0 == " " }, for: metric)
                let signed = sign == "+" ? amount : -amount
                limit = unit == "%" ? .baselineRelative(signed / 100) : .baselineAbsolute(signed)
            } else {
                limit = .baselineRelative(0)
            }
        } else {
            let (amount, unit) = try Self.quantity(rest, for: metric)
            if unit == "%" {
                guard metric.takesShare else {
                    throw ThresholdError(
                        .unit,
                        "only errors, rejected.REASON and failed.CAUSE (a share of sent) and the devices' counts (delivered, discarded.expired, discarded.unregistered, discarded.disabled, forgotten: a share of received) take a percentage; \(metric) does not"
                    )
                }
                isShare = true
                limit = .value(amount / 100)
            } else {
                isShare = false
                limit = .value(amount)
            }
        }
        if let why = Self.whyItCannotFail(comparison, limit, isShare: isShare) {
            throw ThresholdError(.cannotFail, "\(TextLines.quoted(self.text)) cannot fail: \(why)")
        }
    }

    /// Why a threshold holds of every value its metric can take, if it does: every metric is 0
    /// or more, and a share at most 100% (issue 61, review: `errors < 101%` and `throughput >
    /// baseline - 200%` passed whatever the run measured). `nil` when a value can fail it.
    static func whyItCannotFail(_ comparison: Comparison, _ limit: Limit, isShare: Bool) -> String? {
        let never = "no metric is below 0"
        switch (limit, comparison) {
        case (.value(let bound), .greaterOrEqual) where bound <= 0: return never
        case (.value(let bound), .notEqual) where bound < 0: return never
        case (.value(let bound), .less) where isShare && bound > 1,
            (.value(let bound), .lessOrEqual) where isShare && bound >= 1,
            (.value(let bound), .notEqual) where isShare && bound > 1:
            return "no share is above 100%"
        case (.baselineRelative(let share), .greater) where share < -1,
            (.baselineRelative(let share), .greaterOrEqual) where share <= -1:
            return "\(never), and baseline - \(Self.percent(-share)) is \(share < -1 ? "below 0" : "0")"
        default: return nil
        }
    }

    private static func percent(_ share: Double) -> String {
        // `Int(value)` traps past Int's range: `baseline - 5888…8%` (48 digits) crashed the
        // gate's fuzzer. A whole number that large is written as Double writes it.
        let value = share * 100
        return value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))%" : "\(value)%"
    }

    /// A number and its unit, in the metric's unit (milliseconds for times).
    private static func quantity(_ text: Substring, for metric: GateMetric) throws(ThresholdError) -> (Double, String) {
        var numberText = text.prefix { $0.isNumber || $0 == "." || $0 == "_" || $0 == "," }
        // An exponent is the number's (`5e3`, `1e-400ms`), not a unit.
        if let exponent = text.dropFirst(numberText.count).prefixMatch(of: /[eE][+-]?[0-9]+/) {
            numberText = text.prefix(numberText.count + exponent.output.count)
        }
        let unit = text.dropFirst(numberText.count).trimmingCharacters(in: .whitespaces)
        guard let number = DecimalNotation.parseGrouped(numberText), number.isFinite else {
            throw ThresholdError(
                .limit,
                "\(TextLines.quoted(text)) is not a number with a unit, like 25ms, 100000/s or 0.1%"
            )
        }
        // A number too small for a Double reads as 0: `throughput > 1e-400` was `> 0` unsaid
        // (issue 61, session 37's pass), as `1e-400s` once was a duration of nothing.
        let mantissa = numberText.prefix { $0 != "e" && $0 != "E" }
        if number == 0 && mantissa.contains(where: { ("1"..."9").contains($0) }) {
            throw ThresholdError(.limit, "\(TextLines.quoted(text)) is too small to be told from 0")
        }
        switch unit {
        case "%":
            return (number, "%")
        case "" where metric.isTime, "ms" where metric.isTime:
            return (number, "ms")
        case "s" where metric.isTime:
            return (number * 1000, "ms")
        case "m" where metric.isTime:
            return (number * 60_000, "ms")
        case "us" where metric.isTime, "µs" where metric.isTime:
            return (number / 1000, "ms")
        case "/s" where metric == .run(.throughput), "" where !metric.isTime:
            return (number, unit)
        default:
            let expected =
                metric.isTime
                ? "us, ms, s or m"
                : metric == .run(.throughput) ? "/s or none" : metric.takesShare ? "% or none" : "none"
            throw ThresholdError(
                .unit,
                "\(TextLines.quoted(unit)) is not a unit of \(metric) (use \(expected))"
            )
        }
    }

    /// Reads a thresholds file: one threshold a line; `#` starts a comment.
    public static func load(file path: String) throws(ThresholdError) -> [Threshold] {
        try read(file: path).thresholds
    }

    /// Reads a thresholds file, and what it held (its path and SHA-256), for the gate to say.
    public static func read(file path: String) throws(ThresholdError) -> (thresholds: [Threshold], file: FileUse) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ThresholdError(.file, "cannot read the thresholds file \(path): \(error.reason)")
        }
        return (try thresholds(in: text, source: path), FileUse(path: path, text: text))
    }

    /// The thresholds in a file's `text`, one a line; a problem is said as `source:LINE: what`.
    public static func thresholds(in text: String, source: String) throws(ThresholdError) -> [Threshold] {
        var thresholds: [Threshold] = []
        for line in TextLines(text) {
            let content = line.text.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard !content.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            do {
                thresholds.append(try Threshold(parsing: String(content)))
            } catch {
                throw ThresholdError(error.kind, "\(source):\(line.number): \(error.description)")
            }
        }
        return thresholds
    }

    /// What the threshold says of `run` (medians over repeats), against `baseline` if it needs one.
    public func evaluate(_ run: RunSet, baseline: RunSet?) -> Verdict {
        // A metric a run did not measure (no latency without answers) is NaN: it holds no
        // threshold, and the line says "not measured" (the run is invalid besides).
        let measured =
            (isShare && metric == .run(.errors)) || run.measures(metric) ? run.median(metric, share: isShare) : .nan
        let base = baseline.map { $0.measures(metric) ? $0.median(metric) : .nan } ?? .nan
        let bound: Double
        switch limit {
        case .value(let value):
            bound = value
        case .baselineRelative(let share):
            bound = base * (1 + share)
        case .baselineAbsolute(let amount):
            bound = base + amount
        }
        let passed = !measured.isNaN && !bound.isNaN && comparison.holds(measured, bound)
        return Verdict(threshold: self, measured: measured, limit: bound, passed: passed)
    }

    public struct Verdict: Sendable {
        public var threshold: Threshold
        public var measured: Double
        public var limit: Double
        public var passed: Bool

        /// `p99 < baseline + 10%   measured 23.1 ms   limit 25.3 ms   pass`
        public func line(width: Int) -> String {
            let name = threshold.text.padding(toLength: max(width, threshold.text.count), withPad: " ", startingAt: 0)
            let shown = threshold.isShare ? sharePlaces : 4
            let verdict = passed ? "pass" : "FAIL"
            return "\(name)   measured \(format(measured, places: shown))   limit \(format(limit))   \(verdict)"
        }

        /// A figure as a person reads it, measured and limit alike: counts and rates grouped
        /// (`369,825/s`), times in ms to three or four figures (`404.5 ms`), or in seconds when
        /// the limit is a second or more (`9.997 s` against `60 s`), shares without trailing
        /// zeros: a limit as written (`90%`, `0.01%`), a measured share to `places` decimals
        /// (`68.16%` against `90%`, `0.012%` against `0.01%`).
        func format(_ value: Double, places: Int = 4) -> String {
            if value.isNaN { return "not measured" }
            if threshold.isShare { return ShareNotation.percent(value, places: places) }
            let unit = threshold.metric.unit
            if unit == "ms" {
                let scale = limit.isNaN ? value : limit
                if scale >= 1000 { return Self.figures(value / 1000) + " s" }
                return Self.figures(value) + " ms"
            }
            let number = abs(value) < 1e15 ? grouped(Int(value.rounded())) : String(format: "%.3g", value)
            return unit.isEmpty ? number : number + unit
        }

        /// The decimals a measured share is shown to: one more than the limit has, at least two
        /// (`68.16%` against `90%`; pass 5 read `68.1605%`), and four where fewer would show the
        /// limit itself for a figure on its other side (`0.997%` against `1%`, not `1%`).
        var sharePlaces: Int {
            let limitText = ShareNotation.percent(limit, places: 4)
            let limitDecimals = limitText.split(separator: ".").dropFirst().first.map { $0.count - 1 } ?? 0
            let places = min(4, max(2, limitDecimals + 1))
            let same = ShareNotation.percent(measured, places: places) == limitText && measured != limit
            return same ? 4 : places
        }

        /// Whole figures as they are; else three decimals under 10, two under 100, one above.
        static func figures(_ value: Double) -> String {
            if value == value.rounded() && abs(value) < 1e15 { return grouped(Int(value)) }
            return String(format: abs(value) < 10 ? "%.3f" : abs(value) < 100 ? "%.2f" : "%.1f", value)
        }
    }
}

/// A threshold that cannot be read: which part of it (`kind`), and the words that say where.
public struct ThresholdError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The part of `METRIC COMPARISON LIMIT` that is wrong, or the file that holds them.
    public enum Kind: Sendable, Hashable {
        /// No metric, or one `RunMetric` does not know.
        case metric
        /// Not one of <, <=, >, >=, ==, !=.
        case comparison
        /// The limit is missing or not a number (or `baseline ± amount`).
        case limit
        /// A unit the metric does not take.
        case unit
        /// A threshold every value its metric can take passes (`errors < 101%`).
        case cannotFail
        /// The thresholds file cannot be read.
        case file
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
