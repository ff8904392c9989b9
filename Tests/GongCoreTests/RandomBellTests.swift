import GongCore
import Testing

@Suite struct RandomBellTests {
    /// Two-phase with random bells between 3 and 8 minutes in its 15-minute meditation, seeded.
    static func pattern(seed: UInt64?) -> Pattern {
        var pattern = BuiltInPatterns.twoPhase
        pattern.phases[0].bell = IntervalBell(randomFrom: 180, upTo: 480, cue: Cue("bowl"))
        pattern.length = .cycles(40)
        pattern.seed = seed
        return pattern
    }

    static func bellFrames(_ timeline: Timeline) throws -> [Int64] {
        let bowl = try #require(timeline.sounds.firstIndex(of: "bowl"))
        return timeline.cueOnsets.filter { $0.trigger.sound == Int32(bowl) }.map(\.frame)
    }

    @Test func theSameSeedRingsTheSameFramesAndAnotherSeedOthers() throws {
        let first = try Self.bellFrames(Timeline(pattern: Self.pattern(seed: 20_261_126), sampleRate: 48000))
        let again = try Self.bellFrames(Timeline(pattern: Self.pattern(seed: 20_261_126), sampleRate: 48000))
        let other = try Self.bellFrames(Timeline(pattern: Self.pattern(seed: 7), sampleRate: 48000))
        #expect(first.count >= 40, "at least one bell in each 15-minute meditation")
        #expect(first == again)
        #expect(first != other)
    }

    /// Every gap (from the phase's start or the previous bell) lies within the bounds, in whole
    /// milliseconds — 48 frames at 48 kHz, so each bell sits on an exact frame — and the last bell of a
    /// phase leaves less than the longest gap before the phase ends (no bell is lost).
    @Test func everyGapIsWithinItsBoundsOnWholeMillisecondsAndNoBellFallsOnTheBoundary() throws {
        let timeline = try Timeline(pattern: Self.pattern(seed: 99), sampleRate: 48000)
        let bells = try Self.bellFrames(timeline)
        let meditations = timeline.phaseBoundaries.filter { $0.phase == 0 }.map(\.frame)
        var gaps: [Int64] = []
        for start in meditations {
            let end = start + 900 * 48000
            var previous = start
            for bell in bells where bell > start && bell < end + 1 {
                #expect(bell < end, "a bell on the boundary belongs to the next phase")
                gaps.append(bell - previous)
                previous = bell
            }
            #expect(end - previous <= 480 * 48000)
        }
        #expect(gaps.count == bells.count)
        for gap in gaps {
            #expect((180 * 48000...480 * 48000).contains(gap), "gap \(gap)")
            #expect(gap % 48 == 0, "gap \(gap) is whole milliseconds")
        }
        #expect(Set(gaps).count > gaps.count / 2, "the gaps vary")
        #expect(gaps.min()! < 240 * 48000 && gaps.max()! > 420 * 48000, "the draw covers the range")
    }

    @Test func bellsAreRoundedOnceFromTheOriginAt44100() throws {
        let at48 = try Self.bellFrames(Timeline(pattern: Self.pattern(seed: 5), sampleRate: 48000))
        let at44 = try Self.bellFrames(Timeline(pattern: Self.pattern(seed: 5), sampleRate: 44100))
        // The same times at both rates: each 44.1 kHz frame is round(t × 44100) of the exact time
        // t = frame48 / 48000, never a sum of rounded gaps.
        #expect(at44 == at48.map { ($0 * 44100 * 2 + 48000) / (48000 * 2) })
    }

    @Test func overridesDrawASeedOnceAndKeepAGivenOne() throws {
        let drawn = try Self.pattern(seed: nil).applying(PatternOverrides())
        #expect(drawn.seed != nil)
        #expect(try drawn.applying(PatternOverrides()).seed == drawn.seed, "a pattern keeps its seed")
        var overrides = PatternOverrides()
        overrides.seed = 42
        #expect(try Self.pattern(seed: nil).applying(overrides).seed == 42)
        #expect(try BuiltInPatterns.twoPhase.applying(PatternOverrides()).seed == nil)
        #expect(throws: PatternError.self) { try BuiltInPatterns.twoPhase.applying(overrides) }
    }

    @Test func theSummaryCarriesTheSeed() throws {
        let machine = SessionMachine(timeline: try Timeline(pattern: Self.pattern(seed: 31), sampleRate: 48000))
        #expect(machine.summary.seed == 31)
    }
}
