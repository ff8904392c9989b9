import GongCore
import Testing

@Suite struct RationalTests {
    @Test func fractionsReduceAndKeepTheSignOnTheNumerator() throws {
        let value = try #require(Rational(6, -4))
        #expect(value.numerator == -3 && value.denominator == 2)
        #expect(Rational(1, 0) == nil)
    }

    @Test func framesRoundHalfAwayFromZeroOnce() throws {
        // 120/11 s at 44100 Hz = 481090.909… → 481091
        #expect(try #require(Rational(120, 11)).frame(atRate: 44100) == 481_091)
        // exactly half a frame rounds up
        #expect(try #require(Rational(1, 96000)).frame(atRate: 48000) == 1)
        #expect(Rational(86400).frame(atRate: 384_000) == 33_177_600_000)
    }

    @Test func arithmeticThatWouldOverflowReturnsNilInsteadOfTrapping() throws {
        let huge = Rational(Int64.max / 2)
        #expect(huge.multiplied(by: 4) == nil)
        #expect(huge.adding(huge)?.adding(huge) == nil)
        #expect(try #require(Rational(1, 3)).adding(try #require(Rational(1, 6))) == Rational(1, 2))
    }

    @Test func comparisonIsExactForCloseFractions() throws {
        let a = try #require(Rational(1_000_000_001, 1_000_000_000))
        let b = try #require(Rational(1_000_000_000, 999_999_999))
        #expect(a < b)
    }
}

@Suite struct DurationTextTests {
    @Test(arguments: [
        ("4s", Rational(4)), ("4.5s", Rational(9, 2)!), ("90s", Rational(90)), ("15m", Rational(900)),
        ("1h30m", Rational(5400)), ("4", Rational(4)), ("4.5", Rational(9, 2)!), ("250ms", Rational(1, 4)!),
        ("1m30s", Rational(90)), (" 2h ", Rational(7200)), ("0.1s", Rational(1, 10)!), ("10min", Rational(600))
    ])
    func durationsPeopleTypeParseExactly(text: String, seconds: Rational) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(arguments: ["", "s", "-4s", "4x", "NaN", "inf", "4s4s", "30m1h", "1..5s", "1e3s", "4 s x", "--", "1h-30m"])
    func thingsThatAreNotDurationsAreRejected(text: String) {
        #expect(DurationText.seconds(text) == nil)
    }

    @Test func formattingIsCompactAndReadable() {
        #expect(DurationText.format(Rational(5400)) == "1h30m")
        #expect(DurationText.format(Rational(9, 2)!) == "4.5s")
        #expect(DurationText.format(Rational(120, 11)!) == "10.909s")
        #expect(DurationText.clock(seconds: 65) == "1:05")
        #expect(DurationText.clock(seconds: 3723) == "1:02:03")
    }
}
