import Glibc
import GongKit

/// One line on a chart: a name for the legend and its points.
public struct ChartSeries: Sendable {
    public struct Point: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    public var name: String
    public var points: [Point]

    public init(name: String, points: [Point]) {
        self.name = name
        self.points = points
    }
}

/// Plain SVG charts, written by gong with nothing but strings, for a person to open in a
/// browser: a log-scale histogram (OSADL's latency plots are drawn so: rare long latencies
/// stay visible beside millions of short ones) and values over time.
public enum SVGChart {
    static let width = 900.0
    static let height = 360.0
    static let margin = (left: 78.0, right: 250.0, top: 36.0, bottom: 48.0)
    static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f"]

    /// Counts (y, log scale) of values (x, log scale), one stepped line per series; points
    /// at or below zero are left out, as a log axis cannot show them.
    public static func logHistogram(title: String, valueUnit: String, series: [ChartSeries]) -> String {
        let shown = series.map { ChartSeries(name: $0.name, points: $0.points.filter { $0.x > 0 && $0.y > 0 }) }
        let xs = shown.flatMap { $0.points.map(\.x) }
        let ys = shown.flatMap { $0.points.map(\.y) }
        let xRange = logRange(xs)
        let yRange = logRange(ys)
        var body = frame(title: title, xLabel: valueUnit, yLabel: "count")
        body += logTicks(xRange, horizontal: true) + logTicks(yRange, horizontal: false)
        for (index, line) in shown.enumerated() where !line.points.isEmpty {
            let path = line.points.sorted { $0.x < $1.x }.map { point in
                "\(format(xPosition(log10(point.x), xRange))),\(format(yPosition(log10(point.y), yRange)))"
            }
            body += polyline(path, color: color(index), markers: true)
        }
        return document(body + legend(shown.map(\.name)))
    }

    /// Values (y, linear, with a line at zero) against time (x, linear), one line per series.
    public static func timeSeries(title: String, xLabel: String, yLabel: String, series: [ChartSeries]) -> String {
        let xs = series.flatMap { $0.points.map(\.x) }.filter(\.isFinite)
        let ys = series.flatMap { $0.points.map(\.y) }.filter(\.isFinite)
        let xRange = linearRange(xs, includingZero: false)
        let yRange = linearRange(ys, includingZero: true)
        var body = frame(title: title, xLabel: xLabel, yLabel: yLabel)
        body += linearTicks(xRange, horizontal: true) + linearTicks(yRange, horizontal: false)
        let zero = yPosition(0, yRange)
        body +=
            "<line x1=\"\(format(margin.left))\" y1=\"\(format(zero))\" x2=\"\(format(width - margin.right))\" y2=\"\(format(zero))\" stroke=\"#444\" stroke-dasharray=\"4 3\"/>\n"
        for (index, line) in series.enumerated() {
            let path = line.points.filter { $0.x.isFinite && $0.y.isFinite }.sorted { $0.x < $1.x }.map { point in
                "\(format(xPosition(point.x, xRange))),\(format(yPosition(point.y, yRange)))"
            }
            body += polyline(path, color: color(index), markers: true)
        }
        return document(body + legend(series.map(\.name)))
    }

    /// Charts one above the other in one document.
    public static func stack(_ charts: [String]) -> String {
        var body = ""
        for (index, chart) in charts.enumerated() {
            // Each chart is a whole <svg>: nested, placed by its own x and y.
            body += chart.replacing(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" ",
                with: "<svg y=\"\(format(Double(index) * height))\" ")
        }
        return
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(format(width))\" height=\"\(format(height * Double(max(1, charts.count))))\" font-family=\"sans-serif\" font-size=\"12\">\n\(body)</svg>\n"
    }

    /// Text made safe to stand inside an element or an attribute.
    static func escape(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
            .replacing(">", with: "&gt;").replacing("\"", with: "&quot;")
    }

    private static func document(_ body: String) -> String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(format(width))\" height=\"\(format(height))\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\(body)</svg>\n"
    }

    private static func frame(title: String, xLabel: String, yLabel: String) -> String {
        let plotRight = width - margin.right
        let plotBottom = height - margin.bottom
        return """
            <text x="\(format(margin.left))" y="22" font-size="14" font-weight="bold">\(escape(title))</text>
            <rect x="\(format(margin.left))" y="\(format(margin.top))" width="\(format(plotRight - margin.left))" height="\(format(plotBottom - margin.top))" fill="none" stroke="#888"/>
            <text x="\(format((margin.left + plotRight) / 2))" y="\(format(height - 10))" text-anchor="middle">\(escape(xLabel))</text>
            <text x="16" y="\(format((margin.top + plotBottom) / 2))" text-anchor="middle" transform="rotate(-90 16 \(format((margin.top + plotBottom) / 2)))">\(escape(yLabel))</text>

            """
    }

    private static func legend(_ names: [String]) -> String {
        var text = ""
        for (index, name) in names.enumerated() {
            let y = margin.top + 10 + Double(index) * 18
            let x = width - margin.right + 14
            text +=
                "<rect x=\"\(format(x))\" y=\"\(format(y - 9))\" width=\"12\" height=\"12\" fill=\"\(color(index))\"/><text x=\"\(format(x + 18))\" y=\"\(format(y + 1))\">\(escape(name))</text>\n"
        }
        return text
    }

    private static func polyline(_ points: [String], color: String, markers: Bool) -> String {
        guard !points.isEmpty else { return "" }
        var text =
            "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" points=\"\(points.joined(separator: " "))\"/>\n"
        if markers && points.count <= 400 {
            for point in points {
                let parts = point.split(separator: ",")
                text += "<circle cx=\"\(parts[0])\" cy=\"\(parts[1])\" r=\"2.5\" fill=\"\(color)\"/>\n"
            }
        }
        return text
    }

    private static func color(_ index: Int) -> String { colors[index % colors.count] }

    /// Decades that hold every value (log10), at least one.
    private static func logRange(_ values: [Double]) -> ClosedRange<Double> {
        guard let low = values.min(), let high = values.max() else { return 0...1 }
        let bottom = log10(low).rounded(.down)
        let top = max(bottom + 1, log10(high).rounded(.up))
        return bottom...top
    }

    private static func linearRange(_ values: [Double], includingZero: Bool) -> ClosedRange<Double> {
        var low = values.min() ?? 0
        var high = values.max() ?? 1
        if includingZero {
            low = min(low, 0)
            high = max(high, 0)
        }
        if high - low < 1e-12 {
            low -= 1
            high += 1
        }
        let pad = (high - low) * 0.05
        return (low - (includingZero && low == 0 ? 0 : pad))...(high + pad)
    }

    private static func xPosition(_ value: Double, _ range: ClosedRange<Double>) -> Double {
        margin.left + (value - range.lowerBound) / (range.upperBound - range.lowerBound)
            * (width - margin.right - margin.left)
    }

    private static func yPosition(_ value: Double, _ range: ClosedRange<Double>) -> Double {
        height - margin.bottom - (value - range.lowerBound) / (range.upperBound - range.lowerBound)
            * (height - margin.bottom - margin.top)
    }

    private static func logTicks(_ range: ClosedRange<Double>, horizontal: Bool) -> String {
        var text = ""
        for decade in Int(range.lowerBound)...Int(range.upperBound) {
            text += tick(at: Double(decade), label: decadeLabel(decade), range: range, horizontal: horizontal)
        }
        return text
    }

    private static func linearTicks(_ range: ClosedRange<Double>, horizontal: Bool) -> String {
        let span = range.upperBound - range.lowerBound
        let rough = span / 6
        let magnitude = pow(10, log10(rough).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? magnitude * 10
        var text = ""
        var value = (range.lowerBound / step).rounded(.up) * step
        while value <= range.upperBound {
            text += tick(at: value, label: numberLabel(value, step: step), range: range, horizontal: horizontal)
            value += step
        }
        return text
    }

    private static func tick(at value: Double, label: String, range: ClosedRange<Double>, horizontal: Bool) -> String {
        if horizontal {
            let x = format(xPosition(value, range))
            let bottom = height - margin.bottom
            return
                "<line x1=\"\(x)\" y1=\"\(format(margin.top))\" x2=\"\(x)\" y2=\"\(format(bottom))\" stroke=\"#eee\"/><text x=\"\(x)\" y=\"\(format(bottom + 16))\" text-anchor=\"middle\">\(label)</text>\n"
        }
        let y = format(yPosition(value, range))
        return
            "<line x1=\"\(format(margin.left))\" y1=\"\(y)\" x2=\"\(format(width - margin.right))\" y2=\"\(y)\" stroke=\"#eee\"/><text x=\"\(format(margin.left - 6))\" y=\"\(y)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(label)</text>\n"
    }

    private static func decadeLabel(_ decade: Int) -> String {
        decade >= 0 && decade <= 6 ? String(Int(pow(10, Double(decade)))) : "1e\(decade)"
    }

    private static func numberLabel(_ value: Double, step: Double) -> String {
        let digits = max(0, Int(-log10(step).rounded(.down)))
        return Figure.fixed(abs(value) < step / 1e6 ? 0 : value, digits)
    }

    private static func format(_ value: Double) -> String {
        value.isFinite ? Figure.fixed(value, 1) : "0"
    }
}
