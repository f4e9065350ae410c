import FanoutClient
import FanoutNotation
import FanoutResults

extension LoadEngine.Report {
    /// Why the engine's own numbers cannot be trusted, if they cannot: the run was interrupted,
    /// the token set stopped it part-way, a file written on the side lost lines, or the
    /// generator could not keep the schedule (the load the server saw was not the load asked
    /// for).
    public var engineReasons: [InvalidReason] {
        var reasons: [InvalidReason] = []
        if let interruption {
            reasons.append(
                .interrupted(
                    signal: interruption.signal.name,
                    afterSeconds: interruption.after.seconds,
                    unsent: snapshot.unsent
                )
            )
        }
        if let error = tokens?.error { reasons.append(.tokenSetStopped(at: "\(error)")) }
        if let lost = tokens?.lostRejects { reasons.append(.listIncomplete(option: "--rejects", failure: "\(lost)")) }
        reasons += lostWrites.map { .listIncomplete(option: $0.option, failure: $0.failure) }
        if schedule != nil, worstLag > maxLag {
            reasons.append(.generatorBehind(worstLagMs: worstLag.milliseconds, limitMs: maxLag.milliseconds))
        }
        if let cut = backlogCut {
            reasons.append(
                .backlogExceeded(
                    waitSeconds: cut.wait.seconds,
                    limitSeconds: cut.limit.seconds,
                    afterSeconds: cut.after.seconds,
                    unsent: cut.arrivals.map { Int(min($0, UInt64(Int.max))) }
                )
            )
        }
        return reasons
    }

    /// Whether the generator fell behind its schedule (the open model): what a rate search
    /// reads as its own limit, not the endpoint's.
    public var generatorFellBehind: Bool { engineReasons.contains { $0.isGeneratorBehind } }
}
