import Foundation

/// `summary.json`'s `delivery`: what became of the notifications the sink accepted, with the
/// device fleet on (`fanout sink --device-…`; docs/sink.md, "Devices behind the sink"). The
/// counts are Apple's Push Notifications Console categories (Apple, "Viewing the status of push
/// notifications using Metrics and APNs") and three of ours (`discarded_replaced`, `forgotten`,
/// `stored`); times are milliseconds. Absent when the fleet is off, and in older folders: an
/// added, optional field, so the schema's number stays.
public struct DeliverySummary: Codable, Sendable, Equatable {
    /// Received by APNs.
    public var received = 0
    /// Delivered to Device, and (From Storage).
    public var delivered = 0
    public var deliveredFromStorage = 0
    /// Stored – Device Offline, Stored – Power Considerations (went into storage).
    public var storedOffline = 0
    public var storedPower = 0
    /// Discarded – Token Unregistered, and (From Storage).
    public var discardedUnregistered = 0
    public var discardedUnregisteredFromStorage = 0
    /// Discarded – Disabled, and (From Storage).
    public var discardedDisabled = 0
    public var discardedDisabledFromStorage = 0
    /// Discarded – Expired.
    public var discardedExpired = 0
    /// Ours: discarded when a newer notification for the device arrived; of them, `collapsed`
    /// had the newer one's collapse id.
    public var discardedReplaced = 0
    public var collapsed = 0
    /// Ours: the sink's store had no room (`--device-store-cap`).
    public var forgotten = 0
    /// Still stored when the run ended, and the first and last of their expirations (RFC 3339).
    public var stored = 0
    public var storedExpireFrom: String?
    public var storedExpireUntil: String?
    /// Requests answered 410 because an earlier attempt found the app uninstalled.
    public var unregisteredAnswers = 0
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

    enum CodingKeys: String, CodingKey {
        case received, delivered
        case deliveredFromStorage = "delivered_from_storage"
        case storedOffline = "stored_offline"
        case storedPower = "stored_power"
        case discardedUnregistered = "discarded_unregistered"
        case discardedUnregisteredFromStorage = "discarded_unregistered_from_storage"
        case discardedDisabled = "discarded_disabled"
        case discardedDisabledFromStorage = "discarded_disabled_from_storage"
        case discardedExpired = "discarded_expired"
        case discardedReplaced = "discarded_replaced"
        case collapsed, forgotten, stored
        case storedExpireFrom = "stored_expire_from"
        case storedExpireUntil = "stored_expire_until"
        case unregisteredAnswers = "unregistered_answers"
        case toDeviceMs = "to_device_ms"
        case reachedMs = "reached_ms"
        case deliveredPerSecond = "delivered_per_second"
        case reachedCurve = "reached_curve"
    }

    /// Delivered at once or from storage.
    public var allDelivered: Int { delivered + deliveredFromStorage }

    /// What became of the notifications a category counts: report.html colours its bar by it.
    public enum Fate: Sendable {
        case received, delivered, stored, discarded
    }

    /// "Received by APNs" and Apple's Push Notifications Console categories under it, in the
    /// order summary.md's table and report.html's bars give them (ours follow in each).
    public static var appleCategories: [(name: String, count: KeyPath<DeliverySummary, Int>, fate: Fate)] {
        [
            ("Received by APNs", \.received, .received), ("Delivered to Device", \.delivered, .delivered),
            ("Delivered to Device (From Storage)", \.deliveredFromStorage, .delivered),
            ("Stored – Device Offline", \.storedOffline, .stored),
            ("Stored – Power Considerations", \.storedPower, .stored),
            ("Discarded – Token Unregistered", \.discardedUnregistered, .discarded),
            ("Discarded – Token Unregistered (From Storage)", \.discardedUnregisteredFromStorage, .discarded),
            ("Discarded – Expired", \.discardedExpired, .discarded),
            ("Discarded – Disabled", \.discardedDisabled, .discarded),
            ("Discarded – Disabled (From Storage)", \.discardedDisabledFromStorage, .discarded),
        ]
    }

    /// `count` as a share of `received` (0 with nothing received).
    public func share(_ count: Int) -> Double { received > 0 ? Double(count) / Double(received) : 0 }

    /// The lines summary.md and the terminal show:
    ///
    /// ```
    ///   devices: 1,000 received by APNs; delivered 850 (85.0%: 700 at once, 150 from storage)
    ///     reached 50% 0.00 s, 90% 41.2 s, 99% 58.9 s, last 60.0 s; 14.2 delivered/s
    ///     stored: offline 300, power 0; discarded: expired 150 (15.0%), unregistered 0 (0 from storage), …
    ///     still stored at the end: 12, expiring 2026-11-27T21:00:00.000Z … 2026-12-03T21:00:00.000Z
    /// ```
    public var lines: [String] {
        func percent(_ count: Int) -> String { String(format: "%.1f%%", share(count) * 100) }
        func seconds(_ ms: Double) -> String { String(format: ms < 10_000 ? "%.2f s" : "%.1f s", ms / 1000) }
        var lines = [
            "devices: \(received) received by APNs; delivered \(allDelivered) (\(percent(allDelivered)): \(delivered) at once, \(deliveredFromStorage) from storage)"
        ]
        if let reachedMs {
            lines.append(
                "  reached 50% \(seconds(reachedMs.p50)), 90% \(seconds(reachedMs.p90)), 99% \(seconds(reachedMs.p99)), last \(seconds(reachedMs.max))"
                    + (deliveredPerSecond.map { String(format: "; %.1f delivered/s", $0) } ?? "")
            )
        }
        lines.append(
            "  stored: offline \(storedOffline), power \(storedPower); discarded: expired \(discardedExpired) (\(percent(discardedExpired))), unregistered \(discardedUnregistered) (\(discardedUnregisteredFromStorage) from storage), disabled \(discardedDisabled) (\(discardedDisabledFromStorage) from storage), replaced by a newer one \(discardedReplaced) (\(collapsed) with its collapse id)"
        )
        if forgotten > 0 { lines.append("  forgotten (the store was full, --device-store-cap): \(forgotten)") }
        if stored > 0 {
            lines.append(
                "  still stored at the end: \(stored), expiring \(storedExpireFrom ?? "?") … \(storedExpireUntil ?? "?")"
            )
        }
        if unregisteredAnswers > 0 {
            lines.append("  answered 410 after the app was found uninstalled: \(unregisteredAnswers)")
        }
        return lines
    }

    /// summary.md's section: Apple's categories in a table, then the times.
    public var markdown: [String] {
        func row(_ name: String, _ count: Int) -> String {
            "| \(name) | \(count) | \(String(format: "%.2f%%", share(count) * 100)) |"
        }
        var lines = [
            "", "### Devices behind the sink", "", "| Apple's category | notifications | of received |",
            "|---|---:|---:|",
        ]
        lines += Self.appleCategories.map { row($0.name, self[keyPath: $0.count]) }
        lines += [
            row("ours: discarded, replaced by a newer one", discardedReplaced),
            row("ours: forgotten (store full)", forgotten), row("ours: still stored at the end", stored),
        ]
        lines.append("")
        lines += self.lines.dropFirst().map { "- " + $0.trimmingCharacters(in: .whitespaces) }
        return lines
    }
}
