/// The random gaps of random bells, reproducible from a seed on every machine and Swift version
/// (the standard library's generator cannot be seeded, and its algorithm may change).
///
/// SplitMix64 (Steele, Lea and Flood, 2014): tiny, fast, and statistically good enough to space
/// bells. The package's tests replay their property tests from it too.
package struct BellDraw: RandomNumberGenerator {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A gap between `shortest` and `longest`, both included, in whole milliseconds above
    /// `shortest`: exact rationals, so the bell's frame is still rounded once from the origin.
    mutating func gap(from shortest: Rational, upTo longest: Rational) -> Rational? {
        guard let span = longest.subtracting(shortest), let steps = span.multiplied(by: 1000) else { return nil }
        let choices = UInt64(steps.numerator / steps.denominator) + 1
        // The high half of a full-width product maps the draw onto 0..<choices without modulo's bias.
        let pick = next().multipliedFullWidth(by: choices).high
        return Rational(Int64(pick), 1000).flatMap { shortest.adding($0) }
    }
}
