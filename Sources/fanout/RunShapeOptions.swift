import ArgumentParser
import FanoutAPNs
import FanoutReport

/// `--timeout` and `--attempts`, shared by `fanout run` and `fanout send`.
struct RetryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Reset and retry a request unanswered this long.", valueName: "duration"))
    var timeout = "30s"

    @Option(
        name: .long,
        help: ArgumentHelp("Tries per notification (429, 5xx, timeouts, lost connections).", valueName: "n")
    )
    var attempts = 3

    func validate() throws {
        if attempts < 1 { throw ValidationError("--attempts must be at least 1.") }
        _ = try streamTimeout()
    }

    /// `--timeout` as a duration above zero.
    func streamTimeout() throws -> Duration {
        guard let duration = DurationNotation.parse(timeout), duration > .zero else {
            throw ValidationError("--timeout: \(timeout) is not a duration above 0; \(DurationNotation.hint).")
        }
        return duration
    }
}

/// `--repeat N`, shared by `fanout run` and `fanout send`: the run N times into `repeat-1/` …
/// `repeat-N/`, then the medians and spread.
struct RepeatOptions: ParsableArguments {
    @Option(
        name: .customLong("repeat"),
        help: ArgumentHelp(
            "Run N times (repeat-1 … repeat-N under the output folder) and report medians and spread.",
            valueName: "n"
        )
    )
    var repeats = 1

    func validate() throws {
        if repeats < 1 { throw ValidationError("--repeat must be at least 1.") }
    }

    /// Runs `once` into each folder (stopping after Ctrl-C), prints the spread of several, and
    /// returns the worst exit status.
    func run(into directory: String, _ once: (_ folder: String) throws -> Int32) throws -> Int32 {
        var status: Int32 = 0
        for index in 1...repeats {
            let folder = repeats == 1 ? directory : "\(directory)/repeat-\(index)"
            if repeats > 1 { StandardStream.output.write("repeat \(index) of \(repeats)\n".utf8) }
            let outcome = try once(folder)
            status = max(status, outcome)
            if outcome == interruptedStatus { return status }
        }
        if repeats > 1 {
            do {
                StandardStream.output.write((try RunSet.load(directory).spreadText + "\n").utf8)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        return status
    }
}
