import FanoutClient
import FanoutReport
import Foundation

/// `fanout ab`: two builds of `fanout` run alternately with the same options — A B, B A, A B …
/// (each pair's order swapped from the last's, so that whatever favours the first or the second
/// run of a pair cancels) — each run into `output/pair-N/a` or `…/b` (its log beside it), then
/// compared pair by pair (`PairedComparison`). A run that does not end cleanly (failed notifications, an invalid
/// run, a timeout) stops the job: its pair cannot be compared.
public struct ABJob: Sendable {
    public var baseline: String
    public var candidate: String
    /// What each build runs: `run …` or `send …`, without `--output`.
    public var arguments: [String]
    public var pairs = Self.defaultPairs
    public var metrics = Self.defaultMetrics
    public var minimumEffect = Self.defaultMinimumEffect
    public var output: String
    /// The longest one run may take.
    public var runTimeout = Self.defaultRunTimeout
    /// Stop signals to pass on to the run going on (in a process group of its own, it does not
    /// get a terminal's Ctrl-C itself); after one, no further run starts (`ABJob.Stopped`).
    public var stopSignals: StopSignals?
    /// Where the job's events go (each run of a pair beginning): by default nowhere.
    public var reporter: any JobReporter = SilentReporter()
    public static let defaultPairs = 5
    public static let defaultMinimumEffect = 0.05
    public static let defaultRunTimeout: Duration = .seconds(3600)

    /// Throughput, the median, p99 and errors: the tail beyond p99 is too thin in one run to
    /// pair.
    public static let defaultMetrics: [RunMetric] = [.throughput, .p50, .p99, .errors]

    public init(baseline: String, candidate: String, arguments: [String], output: String) {
        self.baseline = baseline
        self.candidate = candidate
        self.arguments = arguments
        self.output = output
    }

    public func run() throws -> PairedComparison {
        for binary in [baseline, candidate] where !FileManager.default.isExecutableFile(atPath: binary) {
            throw JobError.option(.file(binary), "not an executable (a fanout build)")
        }
        let earlier = Self.earlierResults(in: output)
        guard earlier.isEmpty else {
            throw JobError.option(
                .optionValue("--output", output),
                "holds earlier results (\(earlier.joined(separator: ", "))): give a new folder, or remove them first"
            )
        }
        // Said before the runs, not only after them (#64): a user would wait for a verdict.
        if pairs < PairedComparison.minimumPairs { reporter.report(.fewPairs(pairs)) }
        var values: [RunMetric: [(a: Double, b: Double)]] = [:]
        var place = (pair: 1, side: "a")
        do {
            try runPairs(into: &values, place: &place)
        } catch {
            // The folder says how far the job got and why it stopped, as the terminal did.
            let why = (error as? Stopped)?.line ?? "\(error)"
            let line = "ab: no verdict: stopped at pair \(place.pair) of \(pairs), \(place.side.uppercased()): \(why)\n"
            try? Data(line.utf8).write(to: URL(fileURLWithPath: output + "/ab.txt"))
            throw error
        }
        let comparison = PairedComparison(metrics: metrics, values: values, minimumEffect: minimumEffect)
        do {
            try Data((comparison.text + "\n").utf8).write(to: URL(fileURLWithPath: output + "/ab.txt"))
        } catch {
            throw JobError.cannotWrite(.file("\(output)/ab.txt"), error.reason)
        }
        return comparison
    }

    /// Runs the pairs, each run's metrics into `values`; `place` is the run going on.
    private func runPairs(
        into values: inout [RunMetric: [(a: Double, b: Double)]],
        place: inout (pair: Int, side: String)
    ) throws {
        for pair in 1...max(1, pairs) {
            var records: [String: RunRecord] = [:]
            let order = pair % 2 == 1 ? [("a", baseline), ("b", candidate)] : [("b", candidate), ("a", baseline)]
            for (side, binary) in order {
                place = (pair, side)
                let folder = "\(output)/pair-\(pair)/\(side)"
                if let signal = stopSignals?.received {
                    throw Stopped(signal: signal, pair: pair, side: side, folder: nil)
                }
                reporter.report(.pairStarting(pair: pair, of: pairs, side: side, binary: binary))
                try runOnce(binary, into: folder)
                if let signal = stopSignals?.received {
                    throw Stopped(signal: signal, pair: pair, side: side, folder: folder)
                }
                let record: RunRecord
                do {
                    record = try RunRecord.load(folder)
                } catch {
                    throw JobError.cannotRead(.file(folder), "\(error)")
                }
                // Its exit status said clean, but the folder is what is compared.
                guard record.valid else {
                    throw JobError(
                        .outcome,
                        at: .file(folder),
                        .invalidRun(record.invalidReasons, consequence: "its pair cannot be compared")
                    )
                }
                records[side] = record
            }
            for metric in metrics {
                values[metric, default: []].append(
                    (records["a"]?.metrics[metric] ?? 0, records["b"]?.metrics[metric] ?? 0)
                )
            }
        }
    }

    /// Earlier results found in `folder`, refused before the first run rather than found by the
    /// first pair's runs one build in: an ab's `ab.txt` and `pair-N/`, or a run's or a search's
    /// files (ab's own would go beside them).
    public static func earlierResults(in folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let ours = names.filter { name in
            name == "ab.txt" || (name.hasPrefix("pair-") && Int(name.dropFirst(5)) != nil)
        }
        return (ours.sorted() + RunOutput.earlierResults(in: folder, results: .search)).sorted()
    }

    private func runOnce(_ binary: String, into folder: String) throws {
        let logPath = folder + ".log"
        do {
            try FileManager.default.createDirectory(
                atPath: (folder as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true
            )
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        } catch {
            throw JobError.cannotWrite(.file(folder), error.reason)
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(binary, arguments + ["--output", folder], output: logPath)
        } catch {
            throw JobError.resource(.file(binary), error.description)
        }
        stopSignals?.onStop { signal in
            child.signal(signal.rawValue)
            // A run stops within a second of a stop signal; one that has not in 10 s is ended.
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
                if child.termination == nil { child.signal(SIGKILL) }
            }
        }
        defer { stopSignals?.onStop { _ in } }
        guard let termination = child.wait(upTo: runTimeout) else {
            child.stop(grace: .seconds(5))
            throw JobError.resource(.file(binary), "took longer than \(runTimeout) (\(logPath))")
        }
        if stopSignals?.received != nil { return }
        guard termination == .exited(0) else {
            throw JobError.resource(
                .part("\(binary) \(arguments.joined(separator: " "))"),
                "ended with \(termination): its run cannot be compared (\(logPath))"
            )
        }
    }
}

extension ABJob {
    /// A stop signal ended the job before its last run: no verdict. `folder` is the run it
    /// stopped (marked interrupted by that run), `nil` when it came between runs.
    public struct Stopped: Error, Sendable {
        public var signal: StopSignal
        public var pair: Int
        public var side: String
        public var folder: String?

        /// The line `fanout ab` ends with.
        public var line: String {
            let place = "pair \(pair), \(side.uppercased())"
            guard let folder else { return "stopped by \(signal.name) before \(place): no verdict" }
            return "stopped by \(signal.name) during \(place) (its run: \(folder)): no verdict"
        }
    }
}
