import FanoutMeasure
import FanoutResults
import Foundation

/// `summary.json`'s `harness` object read back, for the files drawn from it (summary.md,
/// report.html) and for `fanout gate`.
struct HarnessRecord {
    /// Each delay the harness measured: its name and p50, p99, max (ms).
    var rows: [(name: String, p50: Double, p99: Double, max: Double)]
    var ownP99: Double
    var ownIsMeasured: Bool
    var measuredP99: Double
    var share: Double
    var maxShare: Double
    var bound: Bool
    /// No endpoint's time is in the latency (`harness.self_measurement`).
    var selfMeasurement: Bool
    var guidance: [String]

    /// The record in `summary`, `nil` before schema 5.
    init?(summary: SummaryDocument) {
        guard let harness = summary.harness else { return nil }
        let sender = harness.sender
        let sink = harness.sink
        let rows: [(String, DelayFigures?)] = [
            ("sender send lateness", sender.sendLateness),
            ("sender event-loop lag", sender.loopLag),
            ("sender answer reading", sender.readDelay),
            ("the way back, sink's write to handling (timed answers)", sender.returnPath),
            ("the sender's share of each timed answer (send lateness + the way back)", sender.perAnswer),
            ("sink lateness", sink?.lateness),
            ("sink lateness from the send (transit included)", sink?.fromSend),
            ("sink event-loop lag", sink?.loopLag),
            ("sink hold as told (injected, not the harness's)", sink?.injected),
            ("the harness's whole share (timed answers: latency less the hold)", harness.own),
        ]
        self.rows = rows.compactMap { name, delay in delay.map { (name, $0.p50, $0.p99, $0.max) } }
        ownP99 = harness.ownP99
        ownIsMeasured = harness.ownMeasured
        measuredP99 = harness.measuredP99
        share = min(1, harness.shareOfP99)
        maxShare = harness.maxShare
        bound = harness.bound
        selfMeasurement = harness.selfMeasurement ?? false
        guidance = harness.guidance
    }

    /// "the harness's own delay at p99: 0.31 ms, 3% of the measured p99 (limit 20%)", a
    /// self-measurement said so first.
    var headline: String {
        String(
            format: "%@the harness's own delay at p99: %@%.2f ms, %@ of the measured p99 %.2f ms (limit %@)",
            selfMeasurement ? "a self-measurement (the embedded sink answers at once): " : "",
            ownIsMeasured ? "" : "at least ",
            ownP99,
            shareText,
            measuredP99,
            percentText(maxShare)
        )
    }

    /// The page's warning when the run is harness-bound: the rule's verdict and what it means
    /// for the latency's figures.
    var banner: String {
        selfMeasurement
            ? "HARNESS-BOUND, a self-measurement: the embedded sink answers at once, so the latency is Fanout's own (\(shareText) of p99) — Fanout's ceiling on this machine; no endpoint's latency is in it"
            : "HARNESS-BOUND: Fanout's own delay is \(shareText) of the measured p99 (limit \(percentText(maxShare))): the p99 is mostly the harness's, and cannot be read as the endpoint's"
    }

    /// The share of the p99 in percent as every line writes it: whole from 1%, its figures
    /// under (`0.43%`, where a whole percent read 0% on one line and ≥0.43% on another).
    var shareText: String { shareOfP99Text(share) }

    /// Whose latency the run measured, in a few words: the trust card's value. A share from the
    /// largest part alone (no timed answers) is a lower bound, and says so (`≥`); a share under
    /// 1% keeps its figures (`0.49%`: "≥0%" said nothing), and a lower bound of nothing is said
    /// to be unmeasured.
    var latencyIs: String {
        if selfMeasurement { return "Fanout's own (self-measurement)" }
        let fanouts =
            !ownIsMeasured && share == 0
            ? "Fanout's share not measured" : (ownIsMeasured ? "" : "≥") + shareText + " Fanout's"
        return bound ? "HARNESS-BOUND (\(fanouts))" : "the endpoint's (\(fanouts))"
    }
}
