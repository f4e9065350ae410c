import FanoutFiles
import FanoutResults

/// `fanout gate`: a run (or its repeats' medians) against thresholds, with exit statuses CI
/// can act on.
public struct Gate: Sendable {
    /// The exit statuses, as documented in `fanout gate --help` and the README.
    public enum Status: Int32, Sendable {
        case passed = 0
        case failed = 1
        /// The run (or the baseline) cannot be trusted: generator lag, disagreement with the
        /// sink, stopped early. It never passes, whatever the thresholds say.
        case invalid = 2
        /// Bad options, a threshold that cannot be read, a folder that is not a run.
        case usage = 64
    }

    public var run: RunSet
    public var baseline: RunSet?
    public var thresholds: [Threshold]
    /// The thresholds file that applied, said with its content hash.
    public var thresholdsFile: FileUse?

    /// Loads the folders and parses the thresholds; every problem is said with where it is.
    public init(run: String, baseline: String?, thresholds: [String], file: String?) throws(GateError) {
        do {
            self.run = try RunSet.load(run)
            self.baseline = try baseline.map { path throws(ResultsError) in try RunSet.load(path) }
        } catch {
            throw GateError(.results(error.kind), error.description)
        }
        var parsed: [Threshold] = []
        do {
            if let file {
                let read = try Threshold.read(file: file)
                parsed += read.thresholds
                thresholdsFile = read.file
            }
            for text in thresholds { parsed.append(try Threshold(parsing: text)) }
        } catch {
            throw GateError(.threshold(error.kind), error.description)
        }
        guard !parsed.isEmpty else {
            throw GateError(.noThreshold, "no threshold: give --threshold EXPR or --thresholds FILE")
        }
        let folders = [self.run] + (self.baseline.map { [$0] } ?? [])
        if let needing = parsed.first(where: \.metric.needsSinkFolder),
            let folder = folders.first(where: { !$0.measures(needing.metric) })
        {
            throw GateError(
                .needsSinkFolder,
                "\(needing.text): \(needing.metric) is measured by fanout sink --output; \(folder.directory) is not a sink's folder"
            )
        }
        if let needing = parsed.first(where: \.metric.needsDelivery),
            let folder = folders.first(where: { $0.runs.contains { $0.metrics[.delivered] == nil } })
        {
            throw GateError(
                .needsDelivery,
                "\(needing.text): \(needing.metric) is measured with the sink's device fleet (--device-… or --sink-device-…); \(folder.directory) has no delivery section"
            )
        }
        if let needing = parsed.first(where: \.metric.needsBroadcast),
            let folder = folders.first(where: { !$0.measures(needing.metric) })
        {
            throw GateError(
                .needsBroadcast,
                "\(needing.text): \(needing.metric) is measured with broadcasts (the devices and times by fanout sink --output); \(folder.directory) has no such figure in its broadcast section"
            )
        }
        if let needing = parsed.first(where: \.metric.needsReturnWave),
            let folder = folders.first(where: { $0.runs.contains { $0.metrics[.returnOffered] == nil } })
        {
            throw GateError(
                .needsReturnWave,
                "\(needing.text): \(needing.metric) is measured with the return wave (--return-to or --sink-return-to); \(folder.directory) has no return_wave section"
            )
        }
        if let needing = parsed.first(where: \.needsBaseline), self.baseline == nil {
            throw GateError(.needsBaseline, "\(needing.text) compares with a baseline: give --baseline RUN_DIR")
        }
        do {
            self.run = try self.run.measuringWindows(of: parsed)
            self.baseline = try self.baseline?.measuringWindows(of: parsed)
        } catch {
            throw GateError(.results(error.kind), error.description)
        }
        self.thresholds = parsed
    }

    /// Why the run or its baseline cannot be judged: which of the two, and the reason.
    public struct Invalidity: Sendable, Hashable, CustomStringConvertible {
        public enum Side: String, Sendable, Hashable {
            case run, baseline
        }
        public var side: Side
        public var reason: InvalidReason

        public var description: String { "\(side.rawValue): \(reason)" }
    }

    public struct Outcome: Sendable {
        public var status: Status
        public var verdicts: [Threshold.Verdict]
        public var invalidReasons: [Invalidity]
        public var text: String
        /// The thresholds file that applied, for the reports to name.
        public var thresholdsFile: FileUse? = nil
    }

    public func evaluate() -> Outcome {
        let verdicts = thresholds.map { $0.evaluate(run, baseline: baseline) }
        var invalid = run.invalidReasons.map { Invalidity(side: .run, reason: $0) }
        if let baseline { invalid += baseline.invalidReasons.map { Invalidity(side: .baseline, reason: $0) } }
        let width = thresholds.map(\.text.count).max() ?? 0
        var lines: [String] = []
        if let thresholdsFile {
            lines.append("thresholds: \(thresholdsFile), \(thresholds.count) in all")
        }
        if run.runs.count > 1 { lines.append("medians of \(run.runs.count) repeats in \(run.directory)") }
        lines += verdicts.map { $0.line(width: width) }
        // A partial merge is gated on what ran; the verdict says so.
        lines += run.runs.flatMap(\.partialReasons).map { "PARTIAL \($0)" }
        // Not a failure by itself (threshold `harness` for that), but the figures are Fanout's.
        // Of several repeats, each line names its repeat (four alike lines said none).
        for (index, record) in run.runs.enumerated() {
            let which = run.runs.count > 1 ? "repeat \(index + 1): " : ""
            lines += record.harnessBound.map { "HARNESS-BOUND \(which)\($0)" }
        }
        // A run its own --abort-on stopped fails, whatever the thresholds say of what it did.
        let aborts = run.runs.compactMap(\.aborted).map(\.line)
        lines += aborts.map { "ABORTED \($0)" }
        let status: Status
        if !invalid.isEmpty {
            status = .invalid
            lines += invalid.map { "INVALID \($0)" }
            lines.append("gate: the run is invalid and cannot pass")
        } else if !aborts.isEmpty {
            status = .failed
            lines.append("gate: FAILED (the run was aborted)")
        } else if verdicts.allSatisfy(\.passed) {
            status = .passed
            lines.append("gate: passed (\(verdicts.count) of \(verdicts.count))")
        } else {
            status = .failed
            lines.append("gate: FAILED (\(verdicts.filter { !$0.passed }.count) of \(verdicts.count) thresholds)")
        }
        return Outcome(
            status: status,
            verdicts: verdicts,
            invalidReasons: invalid,
            text: lines.joined(separator: "\n"),
            thresholdsFile: thresholdsFile
        )
    }
}

/// A gate that cannot judge: its folders or thresholds, or a threshold its folders cannot
/// answer.
public struct GateError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Hashable {
        /// A run or baseline folder that cannot be read.
        case results(ResultsError.Kind)
        /// A threshold (or the thresholds file) that cannot be read.
        case threshold(ThresholdError.Kind)
        /// No threshold given.
        case noThreshold
        /// A threshold on a metric only a sink's folder (`fanout sink --output`) has.
        case needsSinkFolder
        /// A threshold on the device fleet's deliveries, on a folder without them.
        case needsDelivery
        /// A threshold on broadcasts' figures, on a folder without them.
        case needsBroadcast
        /// A threshold on the return wave's figures, on a folder without one.
        case needsReturnWave
        /// A threshold relative to a baseline, without `--baseline`.
        case needsBaseline
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}
