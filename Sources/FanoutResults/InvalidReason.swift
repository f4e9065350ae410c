import FanoutAPNs
import FanoutNotation
import FanoutPush
import Foundation

/// Why a run's figures cannot be trusted: one case a cause, carrying what the cause is made of.
///
/// Gate, merge, compare, export and search judge the cases; `description` renders the words a
/// person reads (`invalid_reasons` in summary.json, `INVALID: …` on the console), once, here.
/// summary.json keeps the cases too (`invalid_causes`, an added field), written by Swift's
/// synthesized coding with each case and field named in snake case:
///
///     "invalid_causes": [
///       {"generator_behind": {"worst_lag_ms": 148.2, "limit_ms": 100}},
///       {"in_folder": {"directory": "shard-2", "reason": {"interrupted": {…}}}}
///     ]
///
/// A folder written before the cases were kept reads its words back (`init(legacy:)`).
public indirect enum InvalidReason: Hashable, Sendable, Codable {
    // A run's own.
    /// A signal stopped the run; the tokens read ahead were never sent.
    case interrupted(signal: String, afterSeconds: Double, unsent: Int)
    /// The token set stopped the run part-way (its error's words, with where).
    case tokenSetStopped(at: String)
    /// A list written on the side (`--rejects`, `--gone-tokens`) lost lines.
    case listIncomplete(option: String, failure: String)
    /// The open model's generator fell behind its schedule by more than the limit.
    case generatorBehind(worstLagMs: Double, limitMs: Double)
    /// The open model's queue for streams passed `--max-backlog`: the schedule was cut after
    /// `afterSeconds`, and its `unsent` arrivals left were not sent (`nil`: it had no end).
    case backlogExceeded(waitSeconds: Double, limitSeconds: Double, afterSeconds: Double, unsent: Int?)
    /// The sender's counts and the sink's differ.
    case senderAndSinkDisagree
    /// The server answered no notification.
    case noAnswers
    /// No notification was accepted and every answer refused the credentials (403).
    case credentialsRefused(refusals: [PushReason: Int])
    /// No notification started after the warm-up.
    case warmUpTookAll(warmUpSeconds: Double)
    /// Fewer answers were measured (after the warm-up; a sink: requests) than the run's
    /// stated minimum (`--min-measured`): too few for its percentiles and rate to mean much.
    case tooFewMeasured(measured: Int, minimum: Int, unit: MeasuredUnit)
    /// The run was stopped before its end (no signal named).
    case stoppedBeforeTheEnd
    /// summary.json says `"valid": false` and gives no reason.
    case validWithoutReason

    // A sink's folder.
    /// Fewer notifications or tokens than expected were accepted before the sink stopped.
    case expectedNotReached(unit: ExpectedUnit, reached: Int, expected: Int, endedBy: String)
    /// The trigger exited with a non-zero status (`nil`: it was still running at the end).
    case triggerFailed(exitStatus: Int?, output: String)

    // A merge of shards, a set of repeats.
    /// A reason of one folder among several (a shard, a repeat).
    case inFolder(directory: String, reason: InvalidReason)
    /// A sink's folders given with runs' folders.
    case sinkAmongRuns(folders: [String])
    /// Folders of runs made without `--shard i/N`.
    case notAShard(folders: [String])
    /// The shards' `i/N` name different N.
    case shardCountsDisagree(counts: [Int])
    /// One shard given more than once.
    case shardTwice(index: Int, count: Int, folders: [String])
    /// Shards of the N that are not there.
    case shardsMissing(names: [String])
    /// A folder without summary.json: its shard did not finish.
    case noSummary(folder: String)
    /// A shard gave up early.
    case shardGaveUp(shard: String, abandoned: String)
    /// A shard was stopped before its end (no shard aborted).
    case shardStopped(shard: String)
    /// A shard configured unlike the first one.
    case configuredUnlike(folder: String, reference: String, differences: [ConfigurationDifference])
    /// The shards' first sends lie further apart than `--max-skew`.
    case startSkew(skewMs: Double, limitMs: Double)
    /// A repeat set stopped by a signal.
    case repeatsInterrupted(finished: Int, asked: Int)
    /// A repeat set with fewer finished repeats than asked.
    case repeatsPartial(finished: Int, asked: Int)
    /// Two repeats of a set that are one run: one folder under two names, or two copies.
    case sameRunTwice(folders: [String])
    /// Repeat folders without the manifest saying how many were asked (`repeats.json`, which
    /// every set writes before its first repeat): a set cut short cannot be told from a whole one.
    case repeatsWithoutManifest(found: Int)

    // What the document's own figures contradict (`SummaryDocument.contradictions`): a file
    // edited, truncated or written by something else.
    /// A count, time or rate below zero.
    case negativeFigure(field: String, value: Double)
    /// A run's outcomes do not add up to what it sent.
    case outcomesDoNotAddUp(sent: Int, accepted: Int, rejected: Int, failed: Int)
    /// `reconciled: true` beside a sink section that disagrees with the sender's figures.
    case reconciledButDisagrees(field: String, sender: Int, sink: Int)
    /// A digest counts other than the accepted it digests (`where`: "" for the document's own,
    /// "sink" for its sink section's).
    case digestDisagrees(where: String, digested: Int, accepted: Int)
    /// The provider card's violations are not the sum of its checks' counts.
    case cardDoesNotAddUp(violations: Int, counted: Int)
    /// A card's check (or the card) says passed where its count says otherwise.
    case cardFlagWrong(rule: String, count: Int, passed: Bool)
    /// The latency percentiles are not in order (p50 ≤ p90 ≤ … ≤ max).
    case percentilesOutOfOrder
    /// A rate above every notification sent over the run's length (less its warm-up).
    case throughputAboveSent(perSecond: Double, sent: Int, seconds: Double)
    /// A latency percentile outside what the folder's `latency.hgrm` allows.
    case latencyFileDisagrees(percentile: String, summaryMs: Double, fileLowMs: Double, fileHighMs: Double)
    /// A run's folder holding its interval log (`latency.hlog`) but not the `latency.hgrm`
    /// written beside it: the file the percentiles are checked against was taken away.
    case latencyFileMissing
    /// A summary of schema 6 or older with every latency zero: how those wrote "nothing
    /// measured".
    case zeroLatencies(schema: Int)
    /// A sink's folder in which no request arrived.
    case noRequests

    /// A reason read from a folder written before the cases were kept: its words alone.
    case stated(String)

    /// What `tooFewMeasured` counts: a run's answers after the warm-up, a sink's requests.
    public enum MeasuredUnit: String, Hashable, Sendable, Codable {
        case answers, requests
    }

    /// What a sink expected: notifications or tokens.
    public enum ExpectedUnit: String, Hashable, Sendable, Codable {
        case notifications, tokens
    }

    /// One configuration field two shards set differently.
    public struct ConfigurationDifference: Hashable, Sendable, Codable {
        public var field: String
        /// The shard's value (`nil`: not set).
        public var value: String?
        /// The first shard's value (`nil`: not set).
        public var reference: String?

        public init(field: String, value: String?, reference: String?) {
            self.field = field
            self.value = value
            self.reference = reference
        }
    }

    /// A reason as a folder written before the cases were kept says it: the case whose words
    /// they are where the words name one with nothing to read back (sender and sink disagree,
    /// no answers, stopped before the end) or an interruption, else `.stated(words)`. So an
    /// older shard's interruption is judged as one (a merge leaves it out when a shard
    /// aborted) and a reason is not listed twice beside the gate's own.
    public init(legacy words: String) {
        for plain in [InvalidReason.senderAndSinkDisagree, .noAnswers, .stoppedBeforeTheEnd, .validWithoutReason]
        where plain.description == words {
            self = plain
            return
        }
        let interruption = /interrupted by (SIG[A-Z]+) after ([0-9.]+) s: ([0-9,. ]+) tokens read ahead were never sent/
        if let match = words.wholeMatch(of: interruption), let after = Double(match.2) {
            let unsent = Int(match.3.filter(\.isNumber)) ?? 0
            self = .interrupted(signal: String(match.1), afterSeconds: after, unsent: unsent)
            return
        }
        self = .stated(words)
    }

    /// Whether the reason is too little measured (`tooFewMeasured`).
    public var isTooFewMeasured: Bool {
        if case .tooFewMeasured = self { return true }
        return false
    }

    /// The reason under any folders it is filed in.
    public var root: InvalidReason {
        if case .inFolder(_, let reason) = self { return reason.root }
        return self
    }

    /// Whether it is a signal's stopping of the run (in any folder).
    public var isInterruption: Bool {
        if case .interrupted = root { return true }
        return false
    }

    /// Whether it is the generator falling behind its schedule (in any folder).
    public var isGeneratorBehind: Bool {
        if case .generatorBehind = root { return true }
        return false
    }

    // Each case's coding keys, in summary.json's snake case.
    enum CodingKeys: String, CodingKey {
        case interrupted
        case tokenSetStopped = "token_set_stopped"
        case listIncomplete = "list_incomplete"
        case generatorBehind = "generator_behind"
        case backlogExceeded = "backlog_exceeded"
        case senderAndSinkDisagree = "sender_and_sink_disagree"
        case noAnswers = "no_answers"
        case credentialsRefused = "credentials_refused"
        case warmUpTookAll = "warm_up_took_all"
        case tooFewMeasured = "too_few_measured"
        case stoppedBeforeTheEnd = "stopped_before_the_end"
        case validWithoutReason = "valid_without_reason"
        case expectedNotReached = "expected_not_reached"
        case triggerFailed = "trigger_failed"
        case inFolder = "in_folder"
        case sinkAmongRuns = "sink_among_runs"
        case notAShard = "not_a_shard"
        case shardCountsDisagree = "shard_counts_disagree"
        case shardTwice = "shard_twice"
        case shardsMissing = "shards_missing"
        case noSummary = "no_summary"
        case shardGaveUp = "shard_gave_up"
        case shardStopped = "shard_stopped"
        case configuredUnlike = "configured_unlike"
        case startSkew = "start_skew"
        case repeatsInterrupted = "repeats_interrupted"
        case repeatsPartial = "repeats_partial"
        case sameRunTwice = "same_run_twice"
        case repeatsWithoutManifest = "repeats_without_manifest"
        case negativeFigure = "negative_figure"
        case outcomesDoNotAddUp = "outcomes_do_not_add_up"
        case reconciledButDisagrees = "reconciled_but_disagrees"
        case digestDisagrees = "digest_disagrees"
        case cardDoesNotAddUp = "card_does_not_add_up"
        case cardFlagWrong = "card_flag_wrong"
        case percentilesOutOfOrder = "percentiles_out_of_order"
        case latencyFileDisagrees = "latency_file_disagrees"
        case latencyFileMissing = "latency_file_missing"
        case throughputAboveSent = "throughput_above_sent"
        case zeroLatencies = "zero_latencies"
        case noRequests = "no_requests"
        case stated
    }
    enum InterruptedCodingKeys: String, CodingKey {
        case signal
        case afterSeconds = "after_seconds"
        case unsent
    }
    enum TokenSetStoppedCodingKeys: String, CodingKey { case at }
    enum ListIncompleteCodingKeys: String, CodingKey { case option, failure }
    enum GeneratorBehindCodingKeys: String, CodingKey {
        case worstLagMs = "worst_lag_ms"
        case limitMs = "limit_ms"
    }
    enum BacklogExceededCodingKeys: String, CodingKey {
        case waitSeconds = "wait_seconds"
        case limitSeconds = "limit_seconds"
        case afterSeconds = "after_seconds"
        case unsent
    }
    enum SenderAndSinkDisagreeCodingKeys: CodingKey {}
    enum NoAnswersCodingKeys: CodingKey {}
    enum CredentialsRefusedCodingKeys: String, CodingKey { case refusals }
    enum WarmUpTookAllCodingKeys: String, CodingKey { case warmUpSeconds = "warm_up_seconds" }
    enum TooFewMeasuredCodingKeys: String, CodingKey { case measured, minimum, unit }
    enum StoppedBeforeTheEndCodingKeys: CodingKey {}
    enum ValidWithoutReasonCodingKeys: CodingKey {}
    enum ExpectedNotReachedCodingKeys: String, CodingKey {
        case unit, reached, expected
        case endedBy = "ended_by"
    }
    enum TriggerFailedCodingKeys: String, CodingKey {
        case exitStatus = "exit_status"
        case output
    }
    enum InFolderCodingKeys: String, CodingKey { case directory, reason }
    enum SinkAmongRunsCodingKeys: String, CodingKey { case folders }
    enum NotAShardCodingKeys: String, CodingKey { case folders }
    enum ShardCountsDisagreeCodingKeys: String, CodingKey { case counts }
    enum ShardTwiceCodingKeys: String, CodingKey { case index, count, folders }
    enum ShardsMissingCodingKeys: String, CodingKey { case names }
    enum NoSummaryCodingKeys: String, CodingKey { case folder }
    enum ShardGaveUpCodingKeys: String, CodingKey { case shard, abandoned }
    enum ShardStoppedCodingKeys: String, CodingKey { case shard }
    enum ConfiguredUnlikeCodingKeys: String, CodingKey { case folder, reference, differences }
    enum StartSkewCodingKeys: String, CodingKey {
        case skewMs = "skew_ms"
        case limitMs = "limit_ms"
    }
    enum RepeatsInterruptedCodingKeys: String, CodingKey { case finished, asked }
    enum RepeatsPartialCodingKeys: String, CodingKey { case finished, asked }
    enum RepeatsWithoutManifestCodingKeys: String, CodingKey { case found }
    enum NegativeFigureCodingKeys: String, CodingKey { case field, value }
    enum OutcomesDoNotAddUpCodingKeys: String, CodingKey { case sent, accepted, rejected, failed }
    enum ReconciledButDisagreesCodingKeys: String, CodingKey { case field, sender, sink }
    enum PercentilesOutOfOrderCodingKeys: CodingKey {}
    enum ThroughputAboveSentCodingKeys: String, CodingKey {
        case perSecond = "per_second"
        case sent, seconds
    }
    enum LatencyFileDisagreesCodingKeys: String, CodingKey {
        case percentile
        case summaryMs = "summary_ms"
        case fileLowMs = "file_low_ms"
        case fileHighMs = "file_high_ms"
    }
    enum ZeroLatenciesCodingKeys: String, CodingKey { case schema }
    enum NoRequestsCodingKeys: CodingKey {}
    enum StatedCodingKeys: String, CodingKey { case _0 = "words" }
}

extension InvalidReason: CustomStringConvertible {
    /// The words a person reads: the one rendering of every case.
    public var description: String {
        switch self {
        case .interrupted(let signal, let after, let unsent):
            "interrupted by \(signal) after \(String(format: "%.2f", after)) s: \(unsent.grouped) tokens read ahead were never sent"
        case .tokenSetStopped(let at):
            "the token set stopped the run at \(at) (the tokens before it were sent and are counted)"
        case .listIncomplete(let option, let failure):
            "\(option) \(failure): the list is incomplete"
        case .generatorBehind(let lag, let limit):
            "the generator fell \(Self.lagWords(lag)) behind its schedule (limit \(Self.lagWords(limit)))"
        case .backlogExceeded(let wait, let limit, let after, let unsent):
            "the offered rate was above what was carried: a notification waited \(String(format: "%.1f", wait)) s for a stream, "
                + "past --max-backlog \(String(format: "%g", limit)) s, and the schedule was cut \(String(format: "%.2f", after)) s in "
                + "(\(unsent.map { "\($0.grouped) arrivals" } ?? "the arrivals after it") not sent)"
        case .senderAndSinkDisagree:
            "sender and sink disagree"
        case .noAnswers:
            "no answers: the server answered no notification, so no rate or latency was measured"
        case .credentialsRefused(let refusals):
            "credentials refused: no notification was accepted and the server refused the credentials (403 "
                + refusals.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
                .joined(separator: ", ")
                + "): check the certificate or the provider token's key, key id and team id"
        case .warmUpTookAll(let warmUp):
            "the warm-up (\(DurationNotation.format(.nanoseconds(Int64((warmUp * 1e9).rounded()))))) took the whole run: no notification started after it, so no rate or latency was measured (a shorter --warm-up, or more notifications)"
        case .tooFewMeasured(let measured, let minimum, let unit):
            "too few measured: \(measured.grouped) \(unit == .answers ? "answers after the warm-up" : "requests"), fewer than the \(minimum.grouped) --min-measured asks for, so no percentile or rate stands on them (more notifications, a shorter --warm-up, or a lower --min-measured)"
        case .stoppedBeforeTheEnd:
            "it was stopped before the end"
        case .validWithoutReason:
            "summary.json says \"valid\": false and gives no reason"
        case .expectedNotReached(let unit, let reached, let expected, let endedBy):
            "\(reached.grouped) of the \(expected.grouped) \(unit.rawValue) expected were accepted before the sink stopped (\(endedBy))"
        case .triggerFailed(let status?, let output):
            "the trigger exited with status \(status) (see \(output))"
        case .triggerFailed(nil, _):
            "the trigger was still running when the sink stopped"
        case .inFolder(let directory, let reason):
            "\(directory): \(reason)"
        case .sinkAmongRuns(let folders):
            "\(folders.joined(separator: ", ")): a sink's folder merges only with other sinks' folders"
        case .notAShard(let folders):
            "\(folders.joined(separator: ", ")): not a shard (run without --shard i/N)"
        case .shardCountsDisagree(let counts):
            "the shards disagree on how many there are: \(counts.map(String.init).joined(separator: ", "))"
        case .shardTwice(let index, let count, let folders):
            "shard \(index)/\(count) is there \(folders.count) times: \(folders.joined(separator: ", "))"
        case .shardsMissing(let names):
            "\(names.count == 1 ? "shard" : "shards") \(Self.list(names)) \(names.count == 1 ? "is" : "are") missing"
        case .noSummary(let folder):
            "\(folder) holds no summary.json: its shard did not finish"
        case .shardGaveUp(let shard, let abandoned):
            "\(shard) did not finish: \(abandoned)"
        case .shardStopped(let shard):
            "\(shard) did not finish: it was stopped before the end"
        case .configuredUnlike(let folder, let reference, let differences):
            "\(folder) was configured unlike \(reference): "
                + differences.map { "\($0.field) \($0.value ?? "-") (not \($0.reference ?? "-"))" }
                .joined(separator: ", ")
        case .startSkew(let skew, let limit):
            "the shards began \(String(format: "%.1f", skew)) ms apart (their first sends), more than --max-skew allows (\(String(format: "%.1f", limit)) ms)"
        case .repeatsInterrupted(let finished, let asked):
            "interrupted after \(finished) of \(asked) repeats"
        case .sameRunTwice(let folders):
            "\(folders.joined(separator: " and ")) are one run (one folder, or the same start): a repeat counted twice"
        case .repeatsPartial(let finished, let asked):
            "partial: \(finished) of \(asked) repeats finished"
        case .repeatsWithoutManifest(let found):
            "\(found) repeat \(found == 1 ? "folder" : "folders") and no \(RepeatManifest.fileName): how many repeats were asked cannot be told (a set cut short, or its manifest removed)"
        case .negativeFigure(let field, let value):
            "\(field) is \(value.formatted()): a count, time or rate cannot be negative (the file was not written by a run)"
        case .outcomesDoNotAddUp(let sent, let accepted, let rejected, let failed):
            "the outcomes do not add up: sent \(sent.grouped) but accepted \(accepted.grouped) + rejected \(rejected.grouped) + failed \(failed.grouped) = \((accepted + rejected + failed).grouped)"
        case .reconciledButDisagrees(let field, let sender, let sink):
            "reconciled says true but the sink's \(field) is \(sink.grouped) where the sender's is \(sender.grouped)"
        case .digestDisagrees(let place, let digested, let accepted):
            "the \(place.isEmpty ? "" : place + "'s ")digest counts \(digested.grouped) notifications where \(place.isEmpty ? "" : "its ")accepted is \(accepted.grouped)"
        case .cardDoesNotAddUp(let violations, let counted):
            "the provider card says \(violations.grouped) violations where its checks count \(counted.grouped)"
        case .cardFlagWrong(let rule, let count, let passed):
            "the provider card's \(rule) says \(passed ? "passed" : "failed") with \(count.grouped) violations"
        case .percentilesOutOfOrder:
            "the latency percentiles are out of order (each must be at least the one before it)"
        case .throughputAboveSent(let rate, let sent, let seconds):
            "throughput_per_second is \(Self.rate(rate))/s, above all \(sent.grouped) sent over the run's \(String(format: "%.3f", seconds)) s: a figure no run wrote"
        case .latencyFileDisagrees(let percentile, let stated, let low, let high):
            "summary.json's \(percentile) (\(Self.milliseconds(stated)) ms) is not what latency.hgrm holds ("
                + (low == high
                    ? "\(Self.milliseconds(low)) ms"
                    : "between \(Self.milliseconds(low)) and \(Self.milliseconds(high)) ms")
                + "): a file edited, or one run's summary beside another's histogram"
        case .latencyFileMissing:
            "latency.hlog is here and latency.hgrm, written beside it, is not: summary.json's percentiles cannot be checked"
        case .zeroLatencies(let schema):
            "every latency is 0 in a schema-\(schema) summary: what Fanout wrote before schema 7 when nothing was measured"
        case .noRequests:
            "no request arrived: the sink measured nothing"
        case .stated(let words):
            words
        }
    }

    /// A lag in µs under a millisecond, else in whole milliseconds.
    private static func lagWords(_ milliseconds: Double) -> String {
        milliseconds < 1 ? "\(Int((milliseconds * 1000).rounded())) µs" : "\(Int(milliseconds.rounded())) ms"
    }

    /// Milliseconds to 3 decimals, or in %g for a value too small or large for them (1e-300).
    private static func milliseconds(_ value: Double) -> String {
        value != 0 && (abs(value) < 0.001 || abs(value) >= 1e9)
            ? String(format: "%g", value) : String(format: "%.3f", value)
    }

    /// A rate grouped when it is a sane one, else in %g (1e9, 1e300).
    private static func rate(_ value: Double) -> String {
        value < 1e15 ? Int(value.rounded()).grouped : String(format: "%g", value)
    }

    /// At most eight names, then how many more.
    private static func list(_ names: [String]) -> String {
        names.count <= 8
            ? names.joined(separator: ", ") : names.prefix(8).joined(separator: ", ") + " and \(names.count - 8) more"
    }
}
