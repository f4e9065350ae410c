import FanoutClient
import FanoutMeasure
import FanoutNotation
import FanoutReport
import FanoutResults
import Foundation

/// How much of a run's measured latency Fanout itself accounts for.
///
/// A notification's latency is its server's time plus the harness's own delays on the way:
///
/// ```
///   due ─► sent ─► … queues … ─► sink reads ─► held as told ─► written ─► sender's loop ─► handled
///   └ send lateness ┘└──────────── sink lateness (from the send) ─────┘└ loop lag ┘└ read delay ┘
/// ```
///
/// Every part but the hold is the harness's: the sender sending after the due time (the open
/// model's generator lag), the sink answering after its hold would have it (timed from the send
/// when the request's apns-id carries it, `TimedAPNsID`: then every queue on the way in is in
/// it), the sender's loops running late (an answer waits in the socket about as long), and an
/// answer waiting in its read burst. The parts are measured apart; an answer's parts add up.
/// When the requests' apns-ids are timed and the endpoint is a Fanout sink, its answers say when
/// they were written and what the scenario held them (`TimedAPNsID`), so for those the harness's
/// whole share is measured answer by answer — the latency less the hold — and so is the way
/// back. Without them, the largest part's p99 is given: a lower bound.
///
/// One rule, with no exception: when the harness's own delay at p99 exceeds `maxShare` of the
/// measured p99 the run is harness-bound, its figures describing Fanout on this machine more
/// than the endpoint. A run against an embedded sink that answers at once has no endpoint time
/// in it at all; it is a self-measurement (`selfMeasurement`), labelled so wherever the rule's
/// verdict is shown, and harness-bound by the same rule (its own delay is all of its latency).
public struct HarnessAccount: Sendable {
    public var senderLoopLag: DelayPercentiles
    public var readDelay: DelayPercentiles
    /// Timed answers (`TimedAPNsID`, a Fanout sink): from the sink's write to their handling.
    public var returnPath: DelayPercentiles
    /// Timed answers' latency less the sink's hold: the harness's whole share, answer by answer
    /// (first tries; empty without timed answers).
    public var measuredOwn: DelayPercentiles
    /// The sender's part of `measuredOwn`, answer by answer: its send lateness and the way back
    /// (the rest is the sink's lateness from the send, `SinkOwnDelays.fromSend`).
    public var senderShare: DelayPercentiles
    /// The open model's send lateness (the generator's lag); `nil` in the closed model.
    public var sendLateness: DelayPercentiles?
    /// Each sender loop's CPU time over the run ÷ the run's length (1 = a whole core).
    public var senderUtilisation: [Double]
    /// The embedded sink's own delays (`fanout run`); `nil` for an endpoint elsewhere.
    public var sink: SinkOwnDelays?
    /// The run's measured latency at p99 (µs).
    public var measuredP99: UInt64
    /// `--max-harness-share`.
    public var maxShare: Double
    /// Event-loop threads of the sender, and the machine's cores.
    public var senderThreads: Int
    public var cores: Int
    /// The embedded sink holds no answer and has no wire in front of it (`fanout run` as it
    /// ships): every microsecond of the latency is Fanout's own, so the run is a
    /// self-measurement of Fanout's ceiling on this machine. The rule is the same for it
    /// (`isBound`); this labels what it measured and what to change.
    public var selfMeasurement = false

    public init(
        report: LoadEngine.Report,
        sink: SinkOwnDelays?,
        maxShare: Double,
        cores: Int
    ) {
        let merged = LoopDelays.merged(report.loopDelays)
        senderLoopLag = DelayPercentiles(merged.loopLag)
        readDelay = DelayPercentiles(merged.readDelay)
        returnPath = DelayPercentiles(merged.returnPath)
        measuredOwn = DelayPercentiles(merged.own)
        senderShare = DelayPercentiles(merged.senderShare)
        sendLateness = report.schedule == nil ? nil : DelayPercentiles(report.snapshot.lag)
        let seconds = report.elapsed.seconds
        senderUtilisation = report.loopDelays.map { seconds > 0 ? Double($0.cpuNanoseconds) / 1e9 / seconds : 0 }
        self.sink = sink
        let latency = report.snapshot.latency
        measuredP99 = latency.totalCount == 0 ? 0 : latency.valueAtPercentile(99)
        self.maxShare = maxShare
        senderThreads = report.loopDelays.count
        self.cores = cores
    }

    /// A part of the harness's delay.
    public enum Part: String, Sendable, CaseIterable {
        case sendLateness = "the sender's send lateness"
        case senderLoopLag = "the sender's event-loop lag"
        case readDelay = "the sender's answer reading"
        /// Timed answers: the sink's write to the sender's handling.
        case returnPath = "the way back"
        /// Timed answers: the send lateness and the way back of each, added.
        case senderShare = "the sender's share of each answer"
        case sinkLateness = "the sink's lateness"
        /// The sink's lateness counted from the send (`TimedAPNsID`): the queues on the way in too.
        case sinkFromSend = "the sink's lateness from the send"
    }

    /// The parts measured, with their percentiles.
    public var parts: [(part: Part, delay: DelayPercentiles)] {
        var parts: [(Part, DelayPercentiles)] = []
        if let sendLateness { parts.append((.sendLateness, sendLateness)) }
        parts += [(.senderLoopLag, senderLoopLag), (.readDelay, readDelay)]
        if returnPath.count > 0 { parts.append((.returnPath, returnPath)) }
        if senderShare.count > 0 { parts.append((.senderShare, senderShare)) }
        if let sink {
            parts.append(sink.fromSend.count > 0 ? (.sinkFromSend, sink.fromSend) : (.sinkLateness, sink.lateness))
        }
        return parts
    }

    /// The part with the largest p99.
    public var largest: (part: Part, delay: DelayPercentiles) {
        parts.max { $0.delay.p99 < $1.delay.p99 }!
    }

    /// Whether the harness's own delay was measured answer by answer (timed answers from a
    /// Fanout sink), rather than bounded below by its largest part.
    public var ownIsMeasured: Bool { measuredOwn.count > 0 }

    /// The harness's own delay at p99 (µs): measured on timed answers when there are any (never
    /// less than the largest part's p99, which holds for every answer), else that lower bound.
    public var ownP99: UInt64 { ownIsMeasured ? max(measuredOwn.p99, largest.delay.p99) : largest.delay.p99 }

    /// The harness's own delay at p99 as a share of the measured p99 (0 when nothing was
    /// measured), at most all of it: the two p99s are of different samples (timed answers, or
    /// one part's delays, against every latency), and 101% of a latency is not a share of it.
    public var share: Double { measuredP99 == 0 ? 0 : min(1, Double(ownP99) / Double(measuredP99)) }

    /// Whether the harness accounts for more of the measured p99 than `maxShare`, hiding an
    /// endpoint's (or a sink's hold's) share: the one rule, self-measurements included.
    public var isBound: Bool { share > maxShare }

    /// A loop busier than this share of a core is the one that makes the others wait.
    static let saturated = 0.8

    /// What to change so that the run measures the endpoint rather than Fanout: a loop named
    /// only when its own figures say it is behind (its delay is the largest part and its thread
    /// was busy most of the time), else what the figures do show.
    public var guidance: [String] {
        guard isBound else { return [] }
        if selfMeasurement { return [Self.endpointTimeAdvice] }
        var advice: [String] = []
        let sinkThreads = sink?.loopUtilisation.count ?? 0
        let busiestSender = senderUtilisation.max() ?? 0
        let busiestSink = sink?.loopUtilisation.max() ?? 0
        // A `where` binds only the last pattern of a case: each pattern carries its own test.
        switch largest.part {
        case .sendLateness where busiestSender >= Self.saturated,
            .senderLoopLag where busiestSender >= Self.saturated,
            .readDelay where busiestSender >= Self.saturated,
            .returnPath where busiestSender >= Self.saturated,
            .senderShare where busiestSender >= Self.saturated:
            advice.append(
                "the sender's loops are behind (busiest at \(percentText(busiestSender)) of a core): give it more --threads"
                    + (senderThreads + sinkThreads >= cores ? " on a machine with cores to spare" : "")
                    + ", or split the run over machines with --shard i/N"
            )
        case .sinkLateness where busiestSink >= Self.saturated,
            .sinkFromSend where busiestSink >= Self.saturated:
            advice.append(
                "the sink answers late (busiest loop at \(percentText(busiestSink)) of a core): "
                    + "give it more --sink-threads, or run `fanout sink` on another machine"
            )
        default:
            advice.append(
                "no loop is saturated (the sender's busiest at \(percentText(busiestSender))"
                    + (sink == nil ? "" : ", the sink's at \(percentText(busiestSink))")
                    + " of a core): the delay is requests waiting their turn in the harness; "
                    + "fewer in flight (--streams, --connections) shorten the wait"
            )
        }
        if senderThreads + sinkThreads > cores {
            advice.append(
                "\(senderThreads) sender and \(sinkThreads) sink loops share \(cores) cores: each waits for the others"
            )
        }
        advice.append("or offer a lower rate (--rate), which the harness can serve without queueing")
        return advice
    }

    /// What a self-measurement lacks, and how to put it in.
    static let endpointTimeAdvice =
        "to measure an endpoint rather than Fanout, put an endpoint's time in: --sink-latency, --sink-rtt, or a --sink-scenario that holds answers (a latency, a wire, a stall, a token rate); or send to one with fanout send"

    /// `summary.json`'s `harness` object.
    var document: SummaryDocument.Harness {
        SummaryDocument.Harness(
            sender: .init(
                sendLateness: sendLateness.map(DelayFigures.init),
                loopLag: DelayFigures(senderLoopLag),
                readDelay: DelayFigures(readDelay),
                returnPath: returnPath.count > 0 ? DelayFigures(returnPath) : nil,
                perAnswer: senderShare.count > 0 ? DelayFigures(senderShare) : nil,
                loopUtilisation: senderUtilisation
            ),
            sink: sink?.figures,
            ownP99: ownP99.microsecondsInMilliseconds,
            own: ownIsMeasured ? DelayFigures(measuredOwn) : nil,
            ownMeasured: ownIsMeasured,
            largest: largest.part.rawValue,
            measuredP99: measuredP99.microsecondsInMilliseconds,
            shareOfP99: share,
            maxShare: maxShare,
            bound: isBound,
            selfMeasurement: selfMeasurement,
            guidance: guidance
        )
    }

    /// Said after the parts when one's p99, or the own delay's, is above the measured p99: each
    /// is a percentile of its own samples (a loop's 1 ms probes, the timed answers), not of the
    /// answers', so it can be the larger (newcomer pass 4 read a loop lag of 1.93 ms beside a
    /// measured p99 of 1.5 ms as a contradiction).
    var partsBeyondTheMeasuredP99: String {
        guard measuredP99 > 0, ownP99 > measuredP99 || parts.contains(where: { $0.delay.p99 > measuredP99 }) else {
            return ""
        }
        return String(
            format:
                " (each part's percentiles are of its own samples, not of the answers: above the measured p99 of %.2f ms, the share is taken as 100%%)",
            measuredP99.microsecondsInMilliseconds
        )
    }

    /// The printed summary's lines.
    var lines: [String] {
        func utilisation(_ shares: [Double]) -> String { shares.map(percentText).joined(separator: ", ") }
        let parts = self.parts.map { "\($0.part.rawValue.replacingOccurrences(of: "the ", with: "")) \($0.delay.text)" }
        var lines = [
            "harness: its own delay at p99 is \(ownIsMeasured ? "" : "at least ")\(String(format: "%.2f", ownP99.microsecondsInMilliseconds)) ms, \(measuredP99 == 0 ? "no p99 measured to share" : "\(shareOfP99Text(share)) of the measured p99") "
                + (ownIsMeasured
                    ? "(\(grouped(Int(measuredOwn.count))) timed answers' latency less the sink's hold; the largest part is \(largest.part.rawValue))"
                    : "(\(largest.part.rawValue), a lower bound)"),
            "  " + parts.joined(separator: "; ") + partsBeyondTheMeasuredP99,
            "  CPU per loop: sender \(utilisation(senderUtilisation))"
                + (sink.map {
                    "; sink \(utilisation($0.loopUtilisation)); the sink held answers \($0.injected.text) as told"
                }
                    ?? ""),
        ]
        if isBound {
            lines.append(
                selfMeasurement
                    ? "HARNESS-BOUND, a self-measurement: the embedded sink answers at once (no hold, no wire), so Fanout's own delay is \(percentText(share)) of the measured p99, above --max-harness-share \(percentText(maxShare)): these figures are Fanout's own ceiling on this machine, not an endpoint's latency"
                    : "HARNESS-BOUND: Fanout's own delay is \(percentText(share)) of the measured p99, above --max-harness-share \(percentText(maxShare)): these figures measure the harness more than the endpoint"
            )
            lines += guidance.map { "  - \($0)" }
        } else if selfMeasurement {
            lines.append(
                "a self-measurement: the embedded sink answers at once (no hold, no wire), so its latency is Fanout's own"
            )
        }
        return lines
    }
}
