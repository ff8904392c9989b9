import GongCore
import Testing

@Suite struct StartDelayTests {
    /// Every event — the start cue included — moves by exactly the delay's frames, and each is
    /// still `round(rate × (delay + t))` of its exact time: a delay of 30.0001 s at 44.1 kHz
    /// moves frames by 1 323 004 or 1 323 005, as each time's own rounding says.
    @Test(arguments: [(48000, Rational(30)), (44100, Rational(300_001, 10000)!)])
    func aStartDelayMovesEveryEventByExactlyTheDelay(rate: Int, delay: Rational) throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.startCue = Cue("bowl")
        pattern.warmUp = Rational(25, 10)!
        pattern.phases[0].bell = IntervalBell(every: Rational(3333, 10)!, cue: Cue("chime"))
        let plain = try Timeline(pattern: pattern, sampleRate: rate)
        pattern.startDelay = delay
        let delayed = try Timeline(pattern: pattern, sampleRate: rate)
        #expect(delayed.events.count == plain.events.count)
        #expect(delayed.startDelayFrames == delay.frame(atRate: rate))
        for (moved, original) in zip(delayed.events, plain.events) {
            #expect(moved.kind == original.kind)
            let exact = Rational(original.frame, Int64(rate))!.adding(delay)!
            if rate == 48000 || original.frame == 0 || original.frame % Int64(rate / 100) == 0 {
                // Times on whole hundredths of a second: recomputed exactly from the frame.
                #expect(moved.frame == exact.frame(atRate: rate))
            }
            #expect(abs(moved.frame - original.frame - delayed.startDelayFrames) <= 1)
        }
        #expect(delayed.plannedEndFrame == plain.plannedEndFrame + (rate == 48000 ? 30 * 48000 : 1_323_004))
    }

    @Test func theSummaryLeavesTheDelayOutOfWhatWasPlanned() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.startDelay = 30
        let machine = SessionMachine(timeline: try Timeline(pattern: pattern, sampleRate: 48000))
        #expect(machine.summary.plannedFrames == 1080 * 48000)
    }

    @Test func aDelayOutOfRangeIsAnErrorNamingIt() {
        var pattern = BuiltInPatterns.twoPhase
        pattern.startDelay = 3601
        #expect(throws: PatternError.self) { try pattern.validate() }
        var overrides = PatternOverrides()
        overrides.startDelay = 7200
        do {
            _ = try BuiltInPatterns.twoPhase.applying(overrides)
            Issue.record("a 2 h delay was taken")
        } catch {
            #expect(error.override == .delay)
            #expect(error.description.contains("is out of range; use a delay from 0s to 1h"), "\(error)")
        }
    }
}
