import FanoutResults
import Foundation

/// What the HTML reports' SVG charts share: a 1000 × 300 frame with margins for the axes, its
/// grid, lines and legend, and the page around them (self-contained: no script, no network).
/// Hover values are SVG `<title>`s, which a browser shows as a tooltip without any script, and
/// which stay in the page as text.
///
/// ```
///  ┌──────────────────────────────────────────┐  top (15)
///  │ left (70) ┌─────────── plot ───────────┐ │
///  │  y labels │                            │ │  right (40)
///  │           └────────────────────────────┘ │
///  └──────────── x labels, axis title ────────┘  bottom (40)
/// ```
enum ChartFrame {
    static let width = 1000.0
    static let height = 300.0
    static let left = 70.0
    static let right = 40.0
    static let top = 15.0
    static let bottom = 40.0
    static var plotWidth: Double { width - left - right }
    static var plotHeight: Double { height - top - bottom }

    static func open(_ label: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" role=\"img\" aria-label=\"\(label)\">"
            + "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(plotWidth)\" height=\"\(plotHeight)\" fill=\"#fafafa\" stroke=\"#ccc\"/>"
    }

    /// Horizontal grid lines and labels for values 0...top, at `ticks(upTo:)`'s round values.
    static func yAxis(top maximum: Double, whole: Bool = false, format: (Double) -> String) -> String {
        var svg = ""
        for value in ticks(upTo: maximum, whole: whole) {
            let y = top + plotHeight * (1 - value / maximum)
            svg += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#e4e4e4\"/>"
            svg += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\">\(format(value))</text>"
        }
        return svg
    }

    /// An axis's labelled values from 0 to `maximum`: a step of 1, 2 or 5 times a power of ten,
    /// three to six intervals (a top of 5 ticks every 1, of 50 every 10, of 2 every 0.5), so a
    /// line at 4 reads 4, not "about 3" between 3.75 and 5. `whole`: counts, no step under 1.
    static func ticks(upTo maximum: Double, whole: Bool = false) -> [Double] {
        guard maximum > 0, maximum.isFinite else { return [0] }
        var step = niceCeiling(maximum / 6)
        if whole { step = max(1, step.rounded(.up)) }
        var values: [Double] = []
        var index = 0.0
        while index * step <= maximum * (1 + 1e-9) {
            values.append(index * step)
            index += 1
        }
        return values
    }

    /// Where the point (x, y) of a plot spanning 0...xTop by 0...yTop is drawn.
    static func position(_ x: Double, _ y: Double, xTop: Double, yTop: Double) -> (Double, Double) {
        (left + plotWidth * x / xTop, top + plotHeight * (1 - y / yTop))
    }

    static func line(
        _ points: [(Double, Double)],
        xTop: Double,
        yTop: Double,
        colour: String,
        dashed: Bool = false
    ) -> String {
        let coordinates = points.map { x, y in
            let (px, py) = position(x, y, xTop: xTop, yTop: yTop)
            return String(format: "%.1f,%.1f", px, py)
        }
        return "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2.5\""
            + (dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"\(coordinates.joined(separator: " "))\"/>"
    }

    /// Colour keys along the top of the plot.
    static func legend(_ entries: [(name: String, colour: String)]) -> String {
        var svg = ""
        var x = left + 10
        for entry in entries {
            svg += "<rect x=\"\(x)\" y=\"\(top + 8)\" width=\"12\" height=\"4\" fill=\"\(entry.colour)\"/>"
            svg += "<text x=\"\(x + 16)\" y=\"\(top + 14)\">\(escape(entry.name))</text>"
            x += 30 + 7 * Double(entry.name.count)
        }
        return svg
    }

    /// A dashed line across the plot at `y` (a median, an objective) of `class`, its value said
    /// on hover by `title`.
    static func dashedLine(class name: String, y: Double, colour: String, title: String) -> String {
        String(
            format:
                "<line class=\"%@\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%@\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\"><title>%@</title></line>",
            name,
            left,
            width - right,
            y,
            y,
            colour,
            escape(title)
        )
    }

    /// An invisible box over a part of the plot that shows `text` on hover.
    static func hover(x: Double, width: Double, text: String) -> String {
        String(
            format:
                "<rect class=\"hover\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" fill-opacity=\"0\"><title>%@</title></rect>",
            x,
            top,
            width,
            plotHeight,
            escape(text)
        )
    }

    /// A shaded band across the plot, from `x` over `width`, with a class (the tests find it by
    /// it) and a tooltip.
    static func band(class name: String, x: Double, width: Double, colour: String, text: String) -> String {
        String(
            format:
                "<rect class=\"%@\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%@\" opacity=\"0.18\"><title>%@</title></rect>",
            name,
            x,
            top,
            width,
            plotHeight,
            colour,
            escape(text)
        )
    }

    static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(escape(title))</title>
        <style>
        body { font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px; color: #222; background: #fff; max-width: 1100px; }
        h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
        .cards { display: flex; flex-wrap: wrap; gap: 10px; }
        .card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
        .label { color: #666; font-size: 12px; } .value { font-size: 18px; font-weight: 600; }
        .when { color: #555; } code { font: 13px ui-monospace, Menlo, Consolas, monospace; background: #f4f4f4; padding: 1px 4px; }
        .what { font-size: 15px; } .verdict { font-size: 15px; padding: 6px 10px; border-radius: 6px; }
        .verdict-passed, .verdict-valid { background: #e8f5e9; } .verdict-failed, .verdict-invalid { background: #fdecea; color: #b00; }
        .invalid { color: #b00; font-weight: 600; } .answer { font-size: 16px; font-weight: 600; } .note { color: #444; }
        table { border-collapse: collapse; } td, th { border-bottom: 1px solid #eee; padding: 3px 12px 3px 0; text-align: left; }
        svg text { font: 11px sans-serif; fill: #444; }
        </style>
        </head>
        <body>
        \(body)
        </body>
        </html>

        """
    }

    /// 1, 2 or 5 times a power of ten, at or above `value`.
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        let power = pow(10, floor(log10(value)))
        for factor in [1.0, 2, 5, 10] where factor * power >= value { return factor * power }
        return 10 * power
    }

    /// A value axis: linear from 0, or logarithmic between two powers of ten when the values
    /// span two decades or more (a linear axis would flatten the small ones against 0).
    struct ValueScale {
        var top: Double
        /// The log axis's lowest value (a power of ten); `nil` on a linear axis.
        var bottom: Double?

        var isLogarithmic: Bool { bottom != nil }

        /// Fits `values`: logarithmic when the largest is 100 times the smallest above 0 or more.
        static func fitting(_ values: [Double]) -> ValueScale {
            let positive = values.filter { $0 > 0 && $0.isFinite }
            guard let low = positive.min(), let high = positive.max(), high >= 100 * low else {
                return ValueScale(top: niceCeiling(values.filter(\.isFinite).max() ?? 1))
            }
            return ValueScale(top: pow(10, ceil(log10(high))), bottom: pow(10, floor(log10(low))))
        }

        /// The share of the plot's height from its bottom at which `value` lies (0...1).
        func fraction(_ value: Double) -> Double {
            guard let bottom else { return value / top }
            guard value > 0 else { return 0 }
            return Swift.max(0, (log10(value) - log10(bottom)) / (log10(top) - log10(bottom)))
        }

        /// Where `value` is drawn, from the top of the frame.
        func y(_ value: Double) -> Double { ChartFrame.top + plotHeight * (1 - fraction(value)) }

        /// Grid lines and labels: quarters on a linear axis, a line a decade on a log one.
        func axis(format: (Double) -> String) -> String {
            guard let bottom else { return yAxis(top: top, format: format) }
            var svg = ""
            var value = bottom
            while value <= top * 1.000001 {
                let y = y(value)
                svg += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#e4e4e4\"/>"
                svg += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\">\(format(value))</text>"
                value *= 10
            }
            return svg
                + "<text x=\"\(left + 4)\" y=\"\(ChartFrame.top + plotHeight - 6)\" class=\"log-scale\">log scale</text>"
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
