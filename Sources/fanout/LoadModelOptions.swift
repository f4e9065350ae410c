import ArgumentParser
import FanoutAPNs
import FanoutClient
import FanoutReport
import FanoutSettings
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The load model options `fanout send` and `fanout run` share.
struct LoadModelOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The open model: notifications per second (N or N/WINDOW, like 5000/s); latency counts from each one's intended send time.",
            valueName: "rate"
        )
    )
    var rate: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --rate, how long the run lasts; without, start no new token after this long.",
            valueName: "duration"
        )
    )
    var duration: String?

    @Option(
        name: .customLong("stage"),
        help: ArgumentHelp(
            "A ramp stage, DURATION:RATE (repeat it): the rate moves linearly from the last one (--rate, or 0) to RATE.",
            valueName: "stage"
        )
    )
    var stages: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Leave notifications started in the first DURATION out of latency and throughput.",
            valueName: "duration"
        )
    )
    var warmUp: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The open model: a run whose generator falls further behind its schedule than this is invalid (exit status 4; default \(LoadModel().maxLag)).",
            valueName: "duration"
        )
    )
    var maxLag: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Flag the run harness-bound when Fanout's own delay at p99 (its loops' lag, its answer reading, the embedded sink's lateness) exceeds this share of the measured p99 (N% or 0.N; default \(Int(LoadModel().maxHarnessShare * 100))%).",
            valueName: "share"
        )
    )
    var maxHarnessShare: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Start sending at this time (RFC 3339, like 2026-11-23T10:00:00.000Z): connections open and exchange SETTINGS before it; shards given one time start together.",
            valueName: "time"
        )
    )
    var startAt: String?

    /// The longest wait `--start-at` may ask for: a time further ahead is taken for a mistake.
    static let longestWait: TimeInterval = 24 * 3600

    /// The schedule (`nil`: the closed model), checked.
    func schedule() throws -> ArrivalSchedule? {
        do {
            return try ArrivalSchedule.parse(rate: rate, duration: duration, stages: stages)
        } catch {
            throw ValidationError("\(error).")
        }
    }

    func validate() throws {
        _ = try schedule()
        if let duration, DurationNotation.parse(duration).map({ $0 > .zero }) != true {
            throw ValidationError("--duration: \(duration) is not a duration above 0; \(DurationNotation.hint).")
        }
        if let warmUp, DurationNotation.parse(warmUp) == nil {
            throw ValidationError("--warm-up: \(warmUp) is not a duration; \(DurationNotation.hint).")
        }
        if let maxLag, DurationNotation.parse(maxLag).map({ $0 > .zero }) != true {
            throw ValidationError("--max-lag: \(maxLag) is not a duration above 0; \(DurationNotation.hint).")
        }
        _ = try start()
        _ = try harnessShare()
    }

    /// `--max-harness-share`, checked: a share above 0.
    func harnessShare() throws -> Double? {
        guard let maxHarnessShare else { return nil }
        guard let share = ShareNotation.parse(maxHarnessShare), share > 0 else {
            throw ValidationError(
                "--max-harness-share: \(maxHarnessShare) is not a share above 0, like 20% or 0.2."
            )
        }
        return share
    }

    /// `--start-at`'s time: a time already past is allowed (the run starts at once and says
    /// how late), one more than a day ahead is not.
    func start() throws -> Date? {
        guard let startAt else { return nil }
        guard let date = TimeNotation.parse(startAt) else {
            throw ValidationError("--start-at: \(startAt) is not a time; \(TimeNotation.hint).")
        }
        if date.timeIntervalSinceNow > Self.longestWait {
            throw ValidationError("--start-at: \(startAt) is more than a day ahead.")
        }
        return date
    }

    /// The model, the duration, the warm-up and the lag limit the options ask for.
    func model() throws -> LoadModel {
        var model = LoadModel(schedule: try schedule())
        if model.schedule == nil { model.duration = duration.flatMap { DurationNotation.parse($0) } }
        model.warmUp = warmUp.flatMap { DurationNotation.parse($0) } ?? .zero
        if let lag = maxLag.flatMap({ DurationNotation.parse($0) }) { model.maxLag = lag }
        model.startAt = try start()
        if let share = try harnessShare() { model.maxHarnessShare = share }
        return model
    }
}
