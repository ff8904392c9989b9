import Testing

@testable import GongPractice

/// `then = "…"` in `[bells]` (and `--then`): how a practice after each bell is written.
@Suite struct BellPracticeTests {
    @Test func aPracticeIsBreatheSoManyBreathsOrAPatternWithOrWithoutACount() {
        let read: [(String, BellPractice?)] = [
            ("breathe 3 breaths", BellPractice(pattern: "resonant", cycles: 3)),
            ("Breathe 1 breath", BellPractice(pattern: "resonant", cycles: 1)),
            ("box 2 cycles", BellPractice(pattern: "box", cycles: 2)),
            ("4-7-8 4 breaths", BellPractice(pattern: "4-7-8", cycles: 4)),
            ("sigh", BellPractice(pattern: "sigh")),
            ("~/patterns/Evening.toml", BellPractice(pattern: "~/patterns/Evening.toml")),
            ("breathe", nil),
            ("breathe 0 breaths", nil),
            ("breathe 61 breaths", nil),
            ("box 2 laps", nil),
            ("box two cycles", nil),
            ("box 2", nil),
            ("", nil)
        ]
        for (text, expected) in read {
            #expect(BellPractice(text: text) == expected, "\(text)")
        }
    }

    @Test func theFlagAndTheKeyReadAlikeAndAFlagOverridesTheFile() throws {
        var file = BellRules()
        try file.set(.then, "breathe 3 breaths")
        var flags = BellRules()
        try flags.set(.then, "box 1 cycles")
        #expect(file.overridden(by: flags, keys: [.then]).then == BellPractice(pattern: "box", cycles: 1))
        #expect(file.overridden(by: flags, keys: [.sound]).then == BellPractice(pattern: "resonant", cycles: 3))
        #expect(throws: BellRuleProblem.self) { try file.set(.then, "box 2 laps") }
    }
}
