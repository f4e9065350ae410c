import FanoutMeasure
import Histogram

extension PrometheusMetrics.Scrape {
    /// The sink's own delays as Prometheus histograms in seconds, at `LatencyBuckets`' bounds,
    /// counted at scrape time from the loops' HDR histograms:
    ///
    ///     fanout_sink_answer_lateness_seconds_bucket{le="0.0001"} 118
    ///     …
    ///     fanout_sink_answer_lateness_seconds_bucket{le="+Inf"} 120000
    ///     fanout_sink_answer_lateness_seconds_sum 3.1
    ///     fanout_sink_answer_lateness_seconds_count 120000
    mutating func ownDelayHistograms(
        lateness: Histogram<UInt64>,
        fromSend: Histogram<UInt64>,
        injected: Histogram<UInt64>
    ) {
        histogram(
            "answer_lateness",
            LatencyBuckets.counts(of: lateness),
            help: "How long after its due time the sink wrote each answer: its own delay."
        )
        histogram(
            "answer_lateness_from_send",
            LatencyBuckets.counts(of: fromSend),
            help: "Each answer's lateness counted from the client's send (timed apns-ids only)."
        )
        histogram(
            "answer_injected_delay",
            LatencyBuckets.counts(of: injected),
            help: "How long the scenario held each answer (latency, pacing, stalls): not the sink's own."
        )
    }
}
