import FanoutMeasure
import FanoutPush
import Histogram

extension PrometheusMetrics.Scrape {
    /// The device fleet's state as `fanout_SUBSYSTEM_device_…` metrics: notifications by the
    /// service's category (`DeliveryCategory`: Apple's Console's for APNs; and ours) as
    /// counters, those stored now as a gauge, and when the delivered reached their devices as
    /// quantile gauges in seconds (from the request's arrival; from the fan-out's first request,
    /// "1" being the last device).
    package mutating func deviceFleet(_ snapshot: DeliverySnapshot, service: PushService = .apns) {
        let counts = snapshot.counts
        let help =
            service == .apns
            ? "Notifications by what became of them behind APNs (Apple's Push Notifications Console categories; replaced and forgotten are Fanout's)."
            : "Messages by what became of them behind FCM (Fanout's words: FCM publishes no categories for one campaign)."
        let categories =
            DeliveryCategory.all(for: service).map { ($0.name, counts[keyPath: $0.count]) }
            + [("Discarded – Replaced", counts.discardedReplaced), ("Forgotten", counts.forgotten)]
        for (category, value) in categories {
            count("device_notifications", labels: [("category", category)], value, help: help)
        }
        gauge(
            "device_stored",
            Double(counts.stored),
            help: "Notifications stored now, waiting for their device or their expiry."
        )
        count(
            "device_collapsed",
            counts.collapsed,
            help: "Stored notifications replaced by one with the same collapse id."
        )
        let times = snapshot.times
        // Histograms that add up across sinks (`sum by (le)`); the quantile gauges below are
        // kept for one release (docs/reports.md, "Prometheus and Grafana").
        histogram(
            "device_delivery_latency",
            LatencyBuckets.counts(of: times.toDevice),
            help: "From a request's arrival at APNs to its device (delivered notifications)."
        )
        histogram(
            "device_fanout_time",
            LatencyBuckets.counts(of: times.sinceStart),
            help: "From the fan-out's first request to each delivered notification reaching its device."
        )
        if times.toDevice.totalCount > 0 {
            summary(
                "device_delivery",
                of: times.toDevice,
                [
                    ("0.5", times.toDevice.valueAtPercentile(50)), ("0.99", times.toDevice.valueAtPercentile(99)),
                    ("1", times.toDevice.max),
                ],
                help: "From a request's arrival at APNs to its device."
            )
            summary(
                "device_reached",
                of: times.sinceStart,
                [
                    ("0.5", times.reached(percent: 50)), ("0.9", times.reached(percent: 90)),
                    ("0.99", times.reached(percent: 99)), ("1", times.last / 1000),
                ],
                help: "From the fan-out's first request until this share of the delivered had reached their devices."
            )
        }
    }
}
