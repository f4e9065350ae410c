import FanoutAPNs
import FanoutNotation
import FanoutPush
import Foundation

/// `summary.json`'s `delivery`: what became of the notifications the sink accepted, with the
/// device fleet on (`fanout sink --device-…`; docs/sink.md, "Devices behind the sink"). The
/// counts are Apple's Push Notifications Console categories (Apple, "Viewing the status of push
/// notifications using Metrics and APNs") and three of ours (`discarded_replaced`, `forgotten`,
/// `stored`); times are milliseconds. Absent when the fleet is off, and in older folders: an
/// added, optional field, so the schema's number stays.
@dynamicMemberLookup
public struct DeliverySummary: Codable, Sendable, Equatable {
    /// The counts (FanoutAPNs's `DeliveryCounts`: Apple's categories and ours), written flat
    /// in `delivery` beside the times, and read as the summary's own (`summary.delivered`).
    public var counts = DeliveryCounts()

    public subscript<Value>(dynamicMember path: WritableKeyPath<DeliveryCounts, Value>) -> Value {
        get { counts[keyPath: path] }
        set { counts[keyPath: path] = newValue }
    }

    /// The first and last expirations of what was still stored when the run ended (RFC 3339).
    public var storedExpireFrom: String?
    public var storedExpireUntil: String?
    /// Arrival at APNs → device, over everything delivered.
    public var toDeviceMs: Times?
    /// The fan-out's first request → device: when 50, 90, 99% of the delivered had it, and the last.
    public var reachedMs: Times?
    /// Delivered per second, from the fan-out's first request to the last delivery.
    public var deliveredPerSecond: Double?
    /// The delivery curve: when (ms from the fan-out's first request) each of `curvePercents`
    /// of the delivered had reached their device, as a share of those received by APNs. `nil`
    /// with nothing delivered, in merged folders (the sinks' histograms are not kept) and in
    /// older ones.
    public var reachedCurve: [CurvePoint]?

    /// One point of the delivery curve.
    public struct CurvePoint: Codable, Sendable, Equatable {
        public var ms: Double
        /// Of the notifications received by APNs (0...1).
        public var share: Double

        public init(ms: Double, share: Double) {
            self.ms = ms
            self.share = share
        }
    }

    /// The percents of the delivered the curve has a point at.
    public static let curvePercents: [Double] = [1] + stride(from: 5.0, through: 95, by: 5) + [99, 100]

    public struct Times: Codable, Sendable, Equatable {
        public var p50: Double
        public var p90: Double
        public var p99: Double
        public var max: Double

        public init(p50: Double, p90: Double, p99: Double, max: Double) {
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.max = max
        }
    }

    public init() {}

    /// The fields beside the counts (which `DeliveryCounts` names).
    enum CodingKeys: String, CodingKey {
        case storedExpireFrom = "stored_expire_from"
        case storedExpireUntil = "stored_expire_until"
        case toDeviceMs = "to_device_ms"
        case reachedMs = "reached_ms"
        case deliveredPerSecond = "delivered_per_second"
        case reachedCurve = "reached_curve"
    }

    public init(from decoder: any Decoder) throws {
        counts = try DeliveryCounts(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storedExpireFrom = try container.decodeIfPresent(String.self, forKey: .storedExpireFrom)
        storedExpireUntil = try container.decodeIfPresent(String.self, forKey: .storedExpireUntil)
        toDeviceMs = try container.decodeIfPresent(Times.self, forKey: .toDeviceMs)
        reachedMs = try container.decodeIfPresent(Times.self, forKey: .reachedMs)
        deliveredPerSecond = try container.decodeIfPresent(Double.self, forKey: .deliveredPerSecond)
        reachedCurve = try container.decodeIfPresent([CurvePoint].self, forKey: .reachedCurve)
    }

    public func encode(to encoder: any Encoder) throws {
        try counts.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(storedExpireFrom, forKey: .storedExpireFrom)
        try container.encodeIfPresent(storedExpireUntil, forKey: .storedExpireUntil)
        try container.encodeIfPresent(toDeviceMs, forKey: .toDeviceMs)
        try container.encodeIfPresent(reachedMs, forKey: .reachedMs)
        try container.encodeIfPresent(deliveredPerSecond, forKey: .deliveredPerSecond)
        try container.encodeIfPresent(reachedCurve, forKey: .reachedCurve)
    }

    /// Delivered at once or from storage.
    public var allDelivered: Int { counts.allDelivered }

    /// What became of the notifications a category counts: report.html colours its bar by it.
    public typealias Fate = DeliveryCategory.Fate

    /// A service's categories (`DeliveryCategory.all(for:)`), each count read from the summary.
    public static func categories(
        for service: PushService
    ) -> [(name: String, count: KeyPath<DeliverySummary, Int>, fate: Fate)] {
        DeliveryCategory.all(for: service).map {
            ($0.name, (\DeliverySummary.counts).appending(path: $0.count), $0.fate)
        }
    }

    /// `count` as a share of `received` (0 with nothing received).
    public func share(_ count: Int) -> Double { counts.received > 0 ? Double(count) / Double(counts.received) : 0 }

    /// The lines summary.md and the terminal show:
    ///
    /// ```
    ///   devices: 1,000 received by APNs; delivered 850 (85.0%: 700 at once, 150 from storage)
    ///     reached 50% 0.00 s, 90% 41.2 s, 99% 58.9 s, last 60.0 s; 14.2 delivered/s
    ///     stored: offline 300, power 0; discarded: expired 150 (15.0%), unregistered 0 (0 from storage), …
    ///     still stored at the end: 12, expiring 2026-11-27T21:00:00.000Z … 2026-12-03T21:00:00.000Z
    /// ```
    public var lines: [String] { lines(for: .apns) }

    /// The lines for the fleet behind `service`'s sink: FCM's receives and answers a gone app's
    /// token 404 UNREGISTERED where APNs answers 410 (its "power" store is Doze's).
    public func lines(for service: PushService) -> [String] {
        let (name, gone, collapse) =
            (
                service.name, service == .apns ? "410" : "404 UNREGISTERED",
                service == .apns ? "collapse id" : "collapse key"
            )
        func percent(_ count: Int) -> String { String(format: "%.1f%%", share(count) * 100) }
        func seconds(_ ms: Double) -> String { String(format: ms < 10_000 ? "%.2f s" : "%.1f s", ms / 1000) }
        var lines = [
            "devices: \(counts.received.grouped) received by \(name); delivered \(allDelivered.grouped) (\(percent(allDelivered)): \(counts.delivered.grouped) at once, \(counts.deliveredFromStorage.grouped) from storage)"
        ]
        if let reachedMs {
            lines.append(
                "  reached 50% \(seconds(reachedMs.p50)), 90% \(seconds(reachedMs.p90)), 99% \(seconds(reachedMs.p99)), last \(seconds(reachedMs.max))"
                    + (deliveredPerSecond.map { String(format: "; %.1f delivered/s", $0) } ?? "")
            )
        }
        lines.append(
            "  stored: offline \(counts.storedOffline.grouped), power \(counts.storedPower.grouped); discarded: expired \(counts.discardedExpired.grouped) (\(percent(counts.discardedExpired))), unregistered \(counts.discardedUnregistered.grouped) (\(counts.discardedUnregisteredFromStorage.grouped) from storage), disabled \(counts.discardedDisabled.grouped) (\(counts.discardedDisabledFromStorage.grouped) from storage), replaced by a newer one \(counts.discardedReplaced.grouped) (\(counts.collapsed.grouped) with its \(collapse))"
        )
        if counts.forgotten > 0 {
            lines.append("  forgotten (the store was full, --device-store-cap): \(counts.forgotten.grouped)")
        }
        if counts.stored > 0 {
            lines.append(
                "  still stored at the end: \(counts.stored.grouped), expiring \(storedExpireFrom ?? "?") … \(storedExpireUntil ?? "?")"
            )
        }
        if counts.unregisteredAnswers > 0 {
            let answered = counts.unregisteredAnswers.grouped
            lines.append("  answered \(gone) after the app was found uninstalled: \(answered)")
        }
        return lines
    }

    /// summary.md's section: Apple's categories in a table, then the times.
    public var markdown: [String] { markdown(for: .apns) }

    /// summary.md's section for the fleet behind `service`'s sink: its categories in a table
    /// (`categories(for:)`), then the times.
    public func markdown(for service: PushService) -> [String] {
        func row(_ name: String, _ count: Int) -> String {
            "| \(name) | \(count) | \(String(format: "%.2f%%", share(count) * 100)) |"
        }
        let header =
            service == .apns
            ? "| Apple's category | notifications | of received |" : "| outcome | messages | of received |"
        var lines = ["", "### Devices behind the sink", "", header, "|---|---:|---:|"]
        lines += Self.categories(for: service).map { row($0.name, self[keyPath: $0.count]) }
        lines += [
            row("ours: discarded, replaced by a newer one", counts.discardedReplaced),
            row("ours: forgotten (store full)", counts.forgotten), row("ours: still stored at the end", counts.stored),
        ]
        lines.append("")
        lines += self.lines(for: service).dropFirst().map { "- " + $0.trimmingCharacters(in: .whitespaces) }
        return lines
    }
}
