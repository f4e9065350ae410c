import FanoutPush
import FanoutResults
import Foundation

/// The devices behind the sink (summary.json's `delivery`, issue #51): the delivery curve — the
/// share of the notifications APNs received that had reached their device, over the time since
/// the fan-out's first request — and the counts in Apple's Push Notifications Console categories.
extension HTMLReport {
    /// The colours of the delivery section (the render test looks for them).
    public enum DeliveryColour {
        public static let curve = "#17becf"
        public static let delivered = "#2ca02c"
        public static let stored = "#1f77b4"
        public static let discarded = "#d62728"
        public static let ours = "#7f7f7f"
    }

    /// The section: the summary's lines, the curve, the categories.
    func deliverySection(_ delivery: DeliverySummary, service: PushService = .apns) -> String {
        var html = "<h2>Devices behind the sink</h2>\n"
        html += delivery.lines(for: service).map { "<p class=\"note\">\(ChartFrame.escape($0))</p>\n" }.joined()
        html += "<h3>Delivery curve</h3>\n" + deliveryCurve(delivery)
        html +=
            "<h3>\(service == .apns ? "Apple's categories" : "Outcomes")</h3>\n"
            + categoriesChart(delivery, service: service)
        return html
    }

    /// The curve's points, (ms since the fan-out's first request, share of received): the
    /// summary's curve, or in a folder written before it, its four figures.
    static func curvePoints(_ delivery: DeliverySummary) -> [(ms: Double, share: Double)] {
        if let curve = delivery.reachedCurve, !curve.isEmpty { return curve.map { ($0.ms, $0.share) } }
        guard let reached = delivery.reachedMs else { return [] }
        let share = delivery.share(delivery.allDelivered)
        return [
            (reached.p50, share * 0.5), (reached.p90, share * 0.9), (reached.p99, share * 0.99), (reached.max, share),
        ]
    }

    /// A time since the fan-out's start in the unit a campaign reads it in: `0 s`, `250 ms`, `42.5 s`,
    /// `12.0 min`, `3.5 h`, `6.0 d`.
    static func deliveryTime(_ ms: Double) -> String {
        switch ms {
        case ...0: "0 s"
        case ..<1000: millisecondsWithUnit(ms)
        case ..<600_000: String(format: "%.1f s", ms / 1000)
        case ..<(2 * 3_600_000): String(format: "%.1f min", ms / 60_000)
        case ..<(2 * 86_400_000): String(format: "%.1f h", ms / 3_600_000)
        default: String(format: "%.1f d", ms / 86_400_000)
        }
    }

    /// The share reached over time, from (0, 0), a step up at each point; its final share dashed
    /// across, each point's figures on hover.
    func deliveryCurve(_ delivery: DeliverySummary) -> String {
        let points = Self.curvePoints(delivery)
        guard let last = points.last else { return "<p>Nothing was delivered to a device.</p>\n" }
        let xTop = ChartFrame.niceCeiling(max(last.ms, 1))
        var svg =
            ChartFrame.open("delivery curve")
            + ChartFrame.yAxis(top: 1) { String(format: "%.0f%%", $0 * 100) }
        for step in 0...4 {
            let value = xTop * Double(step) / 4
            let (x, _) = ChartFrame.position(value, 0, xTop: xTop, yTop: 1)
            svg +=
                "<text x=\"\(x)\" y=\"\(ChartFrame.height - 22)\" text-anchor=\"middle\">\(Self.deliveryTime(value))</text>"
        }
        svg += ChartFrame.line(
            [(0, 0)] + points.map { ($0.ms, $0.share) },
            xTop: xTop,
            yTop: 1,
            colour: DeliveryColour.curve
        )
        let (_, finalY) = ChartFrame.position(0, last.share, xTop: xTop, yTop: 1)
        svg += ChartFrame.dashedLine(
            class: "delivered",
            y: finalY,
            colour: DeliveryColour.delivered,
            title: String(format: "delivered in the end: %.2f%% of received", last.share * 100)
        )
        for point in points {
            let (x, y) = ChartFrame.position(point.ms, point.share, xTop: xTop, yTop: 1)
            svg += String(
                format: "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%@\"><title>%@</title></circle>",
                x,
                y,
                DeliveryColour.curve,
                ChartFrame.escape(
                    String(format: "%.2f%% of received reached by ", point.share * 100) + Self.deliveryTime(point.ms)
                )
            )
        }
        svg +=
            "<text x=\"\(ChartFrame.width / 2)\" y=\"\(ChartFrame.height - 5)\" text-anchor=\"middle\">since the fan-out's first request</text>"
        return svg + "</svg>\n"
    }

    /// The service's categories (Apple's for APNs; and ours), a bar each with its count and share
    /// of received.
    func categoriesChart(_ delivery: DeliverySummary, service: PushService = .apns) -> String {
        func colour(_ fate: DeliverySummary.Fate) -> String {
            switch fate {
            case .received: DeliveryColour.ours
            case .delivered: DeliveryColour.delivered
            case .stored: DeliveryColour.stored
            case .discarded: DeliveryColour.discarded
            }
        }
        let named = DeliverySummary.categories(for: service).map {
            ($0.name, delivery[keyPath: $0.count], colour($0.fate))
        }
        let rows: [(String, Int, String)] =
            named + [
                ("ours: replaced by a newer one", delivery.discardedReplaced, DeliveryColour.ours),
                ("ours: forgotten (store full)", delivery.forgotten, DeliveryColour.ours),
                ("ours: still stored at the end", delivery.stored, DeliveryColour.ours),
            ]
        let largest = Double(max(1, rows.map(\.1).max() ?? 1))
        let height = 26.0 * Double(rows.count) + 10
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(ChartFrame.width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"delivery categories\">"
        for (index, row) in rows.enumerated() {
            let y = 5 + 26.0 * Double(index)
            let width = max(1, 560 * Double(row.1) / largest)
            let share = String(format: "%.2f%%", delivery.share(row.1) * 100)
            svg += "<text x=\"300\" y=\"\(y + 15)\" text-anchor=\"end\">\(ChartFrame.escape(row.0))</text>"
            svg += "<rect x=\"310\" y=\"\(y + 2)\" width=\"\(width)\" height=\"18\" fill=\"\(row.2)\"/>"
            svg += "<text x=\"\(316 + width)\" y=\"\(y + 15)\">\(grouped(row.1)) (\(share))</text>"
        }
        return svg + "</svg>\n"
    }
}
