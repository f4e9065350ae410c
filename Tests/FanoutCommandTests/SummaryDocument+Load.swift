import FanoutResults
import Testing

extension SummaryDocument {
    /// Whether the run is invalid only because its generator fell behind its schedule by more
    /// than `--max-lag`: what a loaded machine does to an open-model run (the CPU was elsewhere;
    /// nothing under test went wrong). A test about something else accepts this outcome
    /// explicitly, and still judges its subject; `RunCommandTests` and `MergeCommandTests` test
    /// the lag limit itself.
    ///
    /// The lag figures must show it (the worst lag over the limit), and every reason must be
    /// the generator's (a merge's are each filed under the shard's folder).
    var isInvalidOnlyByGeneratorLag: Bool {
        guard !valid, let lag = generatorLag, lag.max > lag.limit else { return false }
        let reasons = invalidity
        return !reasons.isEmpty && reasons.allSatisfy(\.isGeneratorBehind)
    }

    /// Whether the run is invalid only because the sender could not keep the offered pace: its
    /// generator fell behind, or a backlog of arrivals waited past `--max-backlog` and the
    /// schedule was cut. A debug build on a loaded machine draining a stall's backlog does the
    /// second (AbortOnTests: 15.8 s waited, cut 28.7 s into a 13 s schedule).
    var isInvalidOnlyByThePace: Bool {
        isInvalid { (reason: InvalidReason) in
            if case .backlogExceeded = reason.root { return true }
            return reason.isGeneratorBehind
        }
    }

    /// Whether a merged run is invalid only because a loaded machine kept its shards apart:
    /// they began further apart than `--max-skew` (one shard descheduled at the start: 494 ms
    /// seen with two busy loops beside the suite), or their generators fell behind.
    var isInvalidOnlyByStartSkewOrLag: Bool {
        isInvalid { (reason: InvalidReason) in
            if case .startSkew = reason.root { return true }
            return reason.isGeneratorBehind
        }
    }

    /// Whether the run is invalid with at least one reason, and `only` takes every one.
    func isInvalid(onlyFor only: (InvalidReason) -> Bool) -> Bool {
        guard !valid else { return false }
        let reasons = invalidity
        return !reasons.isEmpty && reasons.allSatisfy(only)
    }

    /// Whether a signal named `signal` (`SIGTERM`) interrupted the run, as its reasons say.
    func wasInterrupted(by signal: String) -> Bool {
        invalidity.contains {
            if case .interrupted(signal, _, _) = $0.root { return true }
            return false
        }
    }
}

/// Checks how a `fanout run` or `fanout send` at a rate ended, for a test whose subject is not
/// the generator's pace: exit status 0, or — where a loaded machine made the generator fall
/// behind its schedule — 4 (invalid) with `folder`'s summary invalid for that alone. Either way
/// the folder was written.
func expectValidOrLagged(
    status: Int32,
    folder: String,
    _ said: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let summary = try CommandRunner.summary(in: folder)
    if summary.valid {
        #expect(status == 0, "\(said())", sourceLocation: sourceLocation)
    } else {
        #expect(summary.isInvalidOnlyByGeneratorLag, "\(summary.invalidity)", sourceLocation: sourceLocation)
        #expect(status == 4, "\(said())", sourceLocation: sourceLocation)
    }
}

/// Checks how a campaign (`fanout run --fleet`) at a rate ended, for a test whose subject is not
/// the generators' pace: exit status 0 with every half valid, or 4 where a loaded machine held a
/// half's generator back (`isInvalidOnlyByGeneratorLag`: the lag over its limit, the only
/// reason), that half's summary invalid for that alone. Either way no half failed a
/// notification: the campaign's status is its worst half's, and a lagging half's 4 would
/// otherwise cover the other's 3. CI once ended a 2% rehearsal (each half 1,000 devices at
/// 5,000/s, 0.2 s, the debug build beside the whole suite) with 4, and showed only stderr.
func expectValidOrLagged(
    status: Int32,
    campaign folder: String,
    halves: [String],
    _ said: @autoclosure () -> String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let summaries = try halves.map { try CommandRunner.summary(in: folder + "/" + $0) }
    for (half, summary) in zip(halves, summaries) {
        #expect(summary.failed.isEmpty, "\(half): \(summary.failed)", sourceLocation: sourceLocation)
        if !summary.valid {
            #expect(
                summary.isInvalidOnlyByGeneratorLag,
                "\(half): \(summary.invalidity)",
                sourceLocation: sourceLocation
            )
        }
    }
    #expect(status == (summaries.allSatisfy(\.valid) ? 0 : 4), "\(said())", sourceLocation: sourceLocation)
}
