/// Reading and writing the durations people type: `4s`, `4.5s`, `90s`, `15m`, `1h30m`, `250ms`,
/// or plain seconds (`4`, `4.5`).
///
/// Decimal digits are read exactly into a `Rational` (`4.5s` is `9/2`), so a typed duration never
/// picks up binary floating-point error on its way into the timeline.
public enum DurationText {
    /// What to tell a person whose duration did not parse.
    public static let allowed = "a duration such as 4s, 4.5s, 90s, 15m, 1h30m or 250ms"

    /// Seconds, or nil when `text` is not a duration. Negative, NaN and infinite values are not
    /// durations; zero is (callers decide whether zero is allowed).
    public static func seconds(_ text: String) -> Rational? {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return nil }
        if let plain = decimal(trimmed) { return plain }

        var total = Rational.zero
        var rest = Substring(trimmed)
        var lastUnitRank = Int.max
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = decimal(String(number)) else { return nil }
            rest = rest.dropFirst(number.count)
            let unitText = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(unitText.count)
            guard let unit = units.first(where: { $0.name == unitText.lowercased() }) else { return nil }
            // Units must come largest first, each at most once: "1h30m", not "30m1h" or "1m1m".
            guard unit.rank < lastUnitRank else { return nil }
            lastUnitRank = unit.rank
            guard let scaled = value.multiplied(by: unit.seconds), let sum = total.adding(scaled) else { return nil }
            total = sum
        }
        return total
    }

    /// A compact human form: `4s`, `4.5s`, `15m`, `1h30m`, `10.909s`.
    public static func format(_ seconds: Rational) -> String {
        format(seconds: seconds.doubleValue)
    }

    public static func format(seconds value: Double) -> String {
        guard value.isFinite else { return "?" }
        if value < 0 { return "-" + format(seconds: -value) }
        let totalMilliseconds = (value * 1000).rounded()
        let whole = Int64(totalMilliseconds / 1000)
        let millis = Int64(totalMilliseconds) % 1000
        let hours = whole / 3600, minutes = (whole % 3600) / 60, secs = whole % 60
        var text = ""
        if hours > 0 { text += "\(hours)h" }
        if minutes > 0 { text += "\(minutes)m" }
        if secs > 0 || millis > 0 || text.isEmpty {
            text += "\(secs)"
            if millis > 0 {
                var fraction = String(millis)
                while fraction.count < 3 { fraction = "0" + fraction }
                while fraction.hasSuffix("0") { fraction.removeLast() }
                text += "." + fraction
            }
            text += "s"
        }
        return text
    }

    /// A clock form for live displays: `4:05`, `1:02:03`.
    public static func clock(seconds value: Double) -> String {
        let whole = Int64(max(0, value.rounded(.up)))
        let hours = whole / 3600, minutes = (whole % 3600) / 60, secs = whole % 60
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
    }

    private struct Unit { let name: String; let seconds: Rational; let rank: Int }
    private static let units = [
        Unit(name: "h", seconds: 3600, rank: 4),
        Unit(name: "m", seconds: 60, rank: 3),
        Unit(name: "min", seconds: 60, rank: 3),
        Unit(name: "s", seconds: 1, rank: 2),
        Unit(name: "ms", seconds: Rational(1, 1000)!, rank: 1)
    ]

    /// An unsigned decimal such as `4`, `4.5` or `.25`, read exactly. At most 9 fractional digits.
    public static func decimal(_ text: String) -> Rational? {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count <= 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            parts.contains(where: { !$0.isEmpty })
        else { return nil }
        let integerDigits = parts[0], fractionDigits = parts.count == 2 ? parts[1] : ""
        guard integerDigits.count <= 12, fractionDigits.count <= 9 else { return nil }
        var scale: Int64 = 1
        for _ in fractionDigits { scale *= 10 }
        let integer = Int64(integerDigits.isEmpty ? "0" : String(integerDigits)) ?? 0
        let fraction = Int64(fractionDigits.isEmpty ? "0" : String(fractionDigits)) ?? 0
        return Rational(integer * scale + fraction, scale)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
