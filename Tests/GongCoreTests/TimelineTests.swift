import GongCore
import Testing

@Suite struct TimelineTests {
    /// Resonant breathing: 5.5 breaths/min, inhale = exhale, so boundary k is at k × 60/11 s.
    /// The expected frame is computed here with plain integers: round(rate × k × 60 / 11).
    static func resonantBoundaryFrame(_ k: Int64, rate: Int64) -> Int64 {
        (2 * rate * k * 60 + 11) / 22
    }

    @Test func aDayOfResonantBreathingAt44100PutsEveryBoundaryAndTheLastCueOnItsExactFrame() throws {
        var pattern = BuiltInPatterns.resonant
        pattern.length = .duration(86400)
        let timeline = try Timeline(pattern: pattern, sampleRate: 44100)
        #expect(timeline.cycleCount == 7920)
        let boundaries = timeline.phaseBoundaries
        #expect(boundaries.count == 15840)
        for (k, boundary) in boundaries.enumerated() {
            #expect(boundary.frame == Self.resonantBoundaryFrame(Int64(k), rate: 44100))
        }
        // The last breath cue (the exhale of cycle 7919) and the end cue.
        let cues = timeline.cueOnsets
        #expect(cues[cues.count - 2].frame == Self.resonantBoundaryFrame(15839, rate: 44100))
        #expect(cues[cues.count - 1].frame == 86400 * 44100)
        #expect(timeline.plannedEndFrame == 3_810_240_000)
    }

    @Test func accumulatingRoundedDeltasWouldHaveDriftedButTheTimelineDoesNot() throws {
        // The naive way: round one breath to frames and add it up. After a day it is far off.
        let rate = 44100
        let roundedBreath = try #require(Rational(120, 11)).frame(atRate: rate)
        let naive = roundedBreath * 7919
        var pattern = BuiltInPatterns.resonant
        pattern.length = .duration(86400)
        let exact = try Timeline(pattern: pattern, sampleRate: rate).phaseBoundaries[15838].frame
        #expect(exact == Self.resonantBoundaryFrame(15838, rate: Int64(rate)))
        #expect(abs(naive - exact) > 100, "per-breath rounding drifts by hundreds of frames over a day")
    }

    @Test(arguments: [44100, 48000, 96000])
    func twoPhasePutsGongsOnTheirFrames(rate: Int) throws {
        let timeline = try Timeline(pattern: BuiltInPatterns.twoPhase, sampleRate: rate)
        let frames = timeline.cueOnsets.map(\.frame)
        let r = Int64(rate)
        #expect(frames == [0, 900 * r, 1080 * r])
        #expect(timeline.sounds == ["gong", "gong-triple", "gong-end"])
        #expect(timeline.plannedEndFrame == 1080 * r)
    }

    @Test func decimalPhaseLengthsStayExactOverManyCycles() throws {
        let pattern = Pattern(
            name: "odd",
            phases: [
                Phase("a", length: Rational(9, 2)!, cue: Cue("click")),
                Phase("b", length: Rational(33, 10)!, cue: Cue("chime"))
            ],
            length: .cycles(10_000))
        let timeline = try Timeline(pattern: pattern, sampleRate: 44100)
        let boundaries = timeline.phaseBoundaries
        // cycle c, phase b begins at c × 7.8 + 4.5 s
        let last = boundaries[boundaries.count - 1]
        #expect(last.frame == (44100 * (9999 * 78 + 45) + 5) / 10)
    }

    @Test func durationsRunWholeCyclesThatFit() throws {
        let timeline = try Timeline(pattern: BuiltInPatterns.box, sampleRate: 48000)
        #expect(timeline.cycleCount == 18)  // 300 s / 16 s = 18.75 → 18 whole breaths
        #expect(timeline.plannedEndFrame == 18 * 16 * 48000)
    }

    @Test func warmUpDelaysTheFirstPhaseButNotTheStartCue() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.warmUp = 10
        pattern.startCue = Cue("bowl")
        let timeline = try Timeline(pattern: pattern, sampleRate: 48000)
        #expect(timeline.cueOnsets.map(\.frame) == [0, 480_000, 910 * 48000, 1090 * 48000])
    }

    @Test func intervalBellsRingInsideThePhaseButNotOnItsEnd() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.phases[0].bell = IntervalBell(every: 300, cue: Cue("bowl", gainDB: -6))
        let timeline = try Timeline(pattern: pattern, sampleRate: 48000)
        let bowl = try #require(timeline.sounds.firstIndex(of: "bowl"))
        let bells = timeline.cueOnsets.filter { $0.trigger.sound == Int32(bowl) }
        #expect(bells.map(\.frame) == [300 * 48000, 600 * 48000])
        #expect(abs(bells[0].trigger.gain - 0.501) < 0.001)
    }

    @Test func aRampSlowsTheBreathAsTheIntegralOfTheRateSays() throws {
        var pattern = BuiltInPatterns.resonant
        pattern.pace = Pace(from: 6, to: Rational(9, 2)!, over: 600)
        pattern.length = .duration(900)
        let rate = 48000
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        let starts = timeline.phaseBoundaries.filter { $0.phase == 0 }.map { Double($0.frame) / Double(rate) }
        // Breaths taken by time t under the ramp: ∫ bpm/60 = (6t − 1.5 t²/1200)/60 while t ≤ 600.
        func breaths(_ t: Double) -> Double {
            t <= 600 ? (6 * t - 1.5 * t * t / 1200) / 60 : 52.5 + (t - 600) * 4.5 / 60
        }
        for (cycle, start) in starts.enumerated() {
            #expect(
                abs(breaths(start) - Double(cycle)) < 1.0 / Double(rate),
                "cycle \(cycle) begins where the integral reaches \(cycle)")
        }
        #expect(abs((starts[1] - starts[0]) - 10) < 0.15)  // ~6 breaths/min at the start
        #expect(abs((starts[starts.count - 1] - starts[starts.count - 2]) - 60 / 4.5) < 0.01)  // 4.5 after the ramp
    }

    @Test func boundariesOfEveryBuiltInStrictlyIncrease() throws {
        for pattern in BuiltInPatterns.all {
            for rate in [8000, 44100, 48000, 96000] {
                let frames = try Timeline(pattern: pattern, sampleRate: rate).phaseBoundaries.map(\.frame)
                #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 < $1 }, "\(pattern.name) at \(rate)")
            }
        }
    }

    /// The renderer walks the events in order: they must come sorted by frame.
    @Test func eventsAreInFrameOrder() throws {
        var pattern = BuiltInPatterns.box
        pattern.length = .cycles(3)
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        let frames = timeline.events.map(\.frame)
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 <= $1 }, "events are in frame order")
    }
}
