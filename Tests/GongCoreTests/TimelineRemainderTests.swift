import Foundation
import Testing

@testable import GongCore

/// What a resumed session plays: the rest of the schedule from its position.
@Suite struct TimelineRemainderTests {
    /// Box breathing, 4 s phases with a cue each, two cycles, at 8 kHz.
    static func box() throws -> Timeline {
        let pattern = Pattern(
            name: "box", phases: ["in", "hold", "out", "rest"].map { Phase($0, length: 4, cue: Cue("click")) },
            length: .cycles(2), endCue: Cue("bowl"))
        return try Timeline(pattern: pattern, sampleRate: 8000)
    }

    @Test func midPhaseTheCurrentPhaseBeginsSilentlyAtZeroAndEverythingLaterMovesBack() throws {
        let whole = try Self.box()
        let rest = try #require(whole.remainder(from: 8000 * 6))  // 2 s into "hold" of cycle 0
        #expect(rest.plannedEndFrame == whole.plannedEndFrame - 48000)
        #expect(rest.phaseBoundaries.first! == (0, 1, 0), "hold, cycle 0, begins at 0")
        #expect(
            rest.phaseBoundaries.dropFirst().map(\.frame) == whole.phaseBoundaries.dropFirst(2).map { $0.frame - 48000 }
        )
        #expect(rest.cueOnsets.first?.frame == 16000, "no cue at 0: hold's was heard before; out's at 8 s")
        #expect(rest.cueOnsets.count == whole.cueOnsets.count - 2)
        #expect(rest.events.last?.kind == .sessionEnd && rest.events.last?.frame == rest.plannedEndFrame)
    }

    @Test func onABoundaryThatPhaseBeginsWithItsCue() throws {
        let whole = try Self.box()
        let rest = try #require(whole.remainder(from: 8000 * 8))  // "out" begins
        #expect(rest.phaseBoundaries.first! == (0, 2, 0))
        #expect(rest.cueOnsets.first?.frame == 0)
        #expect(rest.phaseBoundaries.count == 6)
    }

    @Test func nothingIsLeftAtOrPastTheEndAndAllOfItFromZero() throws {
        let whole = try Self.box()
        #expect(whole.remainder(from: whole.plannedEndFrame) == nil)
        #expect(whole.remainder(from: whole.plannedEndFrame + 1) == nil)
        #expect(whole.remainder(from: 0)?.events == whole.events)
        #expect(whole.remainder(from: whole.plannedEndFrame - 1)?.plannedEndFrame == 1)
    }

    /// A pattern survives a snapshot: encoded and decoded, the same; a fraction that is not one
    /// (a zero denominator) is refused rather than carried into the session.
    @Test func patternsRoundTripThroughJSONAndBadFractionsAreRefused() throws {
        let pattern = try Self.box().pattern
        let data = try JSONEncoder().encode(pattern)
        #expect(try JSONDecoder().decode(Pattern.self, from: data) == pattern)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Rational.self, from: Data(#"{"numerator": 1, "denominator": 0}"#.utf8))
        }
        #expect(
            try JSONDecoder().decode(Rational.self, from: Data(#"{"numerator": 4, "denominator": -8}"#.utf8))
                == Rational(-1, 2))
    }

    /// 4-7-8 breathing (unequal phases) resumed at many points, on boundaries and between them:
    /// at every frame the resumed schedule reaches, the phase playing there has the whole
    /// session's span, moved by where the resume began — also the phase the resume cut into,
    /// which begins before 0. (The live view once read every phase after a resume as the wrong
    /// one's, and past the middle as the rest of the session.)
    @Test func aResumedScheduleGivesEveryPhaseItsWholeLength() throws {
        let pattern = Pattern(
            name: "4-7-8", phases: [Phase("in", length: 4), Phase("hold", length: 7), Phase("out", length: 8)],
            length: .cycles(4))
        let whole = try Timeline(pattern: pattern, sampleRate: 8000)
        for resumeAt: Int64 in [1, 8000 * 4, 8000 * 6, 8000 * 21, 8000 * 30 + 123, whole.plannedEndFrame - 1] {
            let rest = try #require(whole.remainder(from: resumeAt))
            #expect(rest.origin == resumeAt)
            var frame: Int64 = 0
            while frame < rest.plannedEndFrame {
                let resumed = try #require(rest.phaseSpan(containing: frame))
                let original = try #require(whole.phaseSpan(containing: frame + resumeAt))
                #expect(resumed.lowerBound + resumeAt == original.lowerBound && resumed.count == original.count)
                frame += 1000
            }
            #expect(rest.phaseSpan(containing: rest.plannedEndFrame) == nil)
        }
        // Resumed 2 s into cycle 2's hold: the hold lasts 7 s, began 2 s before, and the exhale
        // after it lasts 8 s.
        let rest = try #require(whole.remainder(from: 8000 * (19 + 4 + 2)))
        #expect(rest.phaseSpan(containing: 0) == -16000..<40000)
        #expect(rest.phaseSpan(containing: 40000) == 40000..<104_000)
    }
}
