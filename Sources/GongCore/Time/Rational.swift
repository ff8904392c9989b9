/// An exact fraction of two `Int64`s, always reduced, with a positive denominator.
///
/// Session times are rationals so that every boundary can be computed from the session origin
/// without rounding: `60 / 5.5` breaths per minute is `120/11` seconds exactly, and cycle 7 920
/// of it begins at exactly `950400/11` seconds. Frames are derived from a rational once
/// (`frame(atRate:)`), which is the whole defence against drift.
///
/// Arithmetic that would overflow returns `nil` rather than trapping: patterns come from users,
/// and an absurd pattern must become an error message, never a crash.
public struct Rational: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let numerator: Int64
    public let denominator: Int64

    public static let zero = Rational(0)
    public static let one = Rational(1)

    public init(_ integer: Int64) {
        numerator = integer
        denominator = 1
    }

    /// Nil when `denominator` is zero or the reduced value does not fit.
    public init?(_ numerator: Int64, _ denominator: Int64) {
        guard denominator != 0 else { return nil }
        guard numerator != .min, denominator != .min else { return nil }
        let divisor = Rational.gcd(numerator.magnitude, denominator.magnitude)
        var n = numerator / Int64(divisor)
        var d = denominator / Int64(divisor)
        if d < 0 { n = -n; d = -d }
        self.numerator = n
        self.denominator = d
    }

    public var isZero: Bool { numerator == 0 }
    public var isPositive: Bool { numerator > 0 }
    public var doubleValue: Double { Double(numerator) / Double(denominator) }

    public var description: String {
        denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
    }

    public static func < (lhs: Rational, rhs: Rational) -> Bool {
        // Cross-multiplication in 128 bits cannot overflow.
        let l = lhs.numerator.multipliedFullWidth(by: rhs.denominator)
        let r = rhs.numerator.multipliedFullWidth(by: lhs.denominator)
        return (l.high, l.low) < (r.high, r.low)
    }

    public func adding(_ other: Rational) -> Rational? {
        let g = Int64(Rational.gcd(denominator.magnitude, other.denominator.magnitude))
        let (lhsScaled, o1) = numerator.multipliedReportingOverflow(by: other.denominator / g)
        let (rhsScaled, o2) = other.numerator.multipliedReportingOverflow(by: denominator / g)
        let (sum, o3) = lhsScaled.addingReportingOverflow(rhsScaled)
        let (den, o4) = (denominator / g).multipliedReportingOverflow(by: other.denominator)
        guard !(o1 || o2 || o3 || o4) else { return nil }
        return Rational(sum, den)
    }

    public func subtracting(_ other: Rational) -> Rational? {
        adding(Rational(-other.numerator, other.denominator) ?? .zero)
    }

    public func multiplied(by other: Rational) -> Rational? {
        // Cross-reduce first so that products of already-reduced fractions stay small.
        let g1 = Int64(Rational.gcd(numerator.magnitude, other.denominator.magnitude))
        let g2 = Int64(Rational.gcd(other.numerator.magnitude, denominator.magnitude))
        let (n, o1) = (numerator / g1).multipliedReportingOverflow(by: other.numerator / g2)
        let (d, o2) = (denominator / g2).multipliedReportingOverflow(by: other.denominator / g1)
        guard !(o1 || o2) else { return nil }
        return Rational(n, d)
    }

    public func divided(by other: Rational) -> Rational? {
        guard other.numerator != 0 else { return nil }
        return multiplied(by: Rational(other.denominator, other.numerator) ?? .zero)
    }

    /// The frame this time falls on at `rate` frames per second: `round(rate * self)`, halves away
    /// from zero, computed in 128 bits so no session length can overflow the intermediate product.
    public func frame(atRate rate: Int) -> Int64 {
        let product = numerator.magnitude.multipliedFullWidth(by: UInt64(rate))
        let d = UInt64(denominator)
        let (quotient, remainder) = d.dividingFullWidth(product)
        let rounded = Int64(quotient) + (remainder >= d - remainder ? 1 : 0)
        return numerator < 0 ? -rounded : rounded
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }
}

extension Rational: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self.init(value) }
}

extension Rational {
    private enum CodingKeys: String, CodingKey {
        case numerator, denominator
    }

    /// Decoded through `init?(_:_:)`, so a stored value keeps the invariants (reduced, a
    /// positive denominator, never zero) whatever the file says.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let numerator = try container.decode(Int64.self, forKey: .numerator)
        let denominator = try container.decode(Int64.self, forKey: .denominator)
        guard let value = Rational(numerator, denominator) else {
            throw DecodingError.dataCorruptedError(
                forKey: .denominator, in: container, debugDescription: "not a fraction: \(numerator)/\(denominator)")
        }
        self = value
    }
}
