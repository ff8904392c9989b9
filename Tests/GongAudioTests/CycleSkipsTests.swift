import CGongStreams
import Testing

/// The cycles gong's JACK and PipeWire callbacks tell as missed, from the server's clock position
/// each call reads and when it woke (gong_handoff.h; JACK's frame time here): a position is
/// believed only in a calm call, one that woke between half a period and a period and a half
/// after the last, as the last did after the one before; there, the position less the frames
/// handed over is what the server ran without the client, and what it adds is told. (So the
/// first calm call is the third: the calls below begin with three regular ones.)
struct CycleSkipsTests {
    /// A call: the position it read and how long after the last call it woke, in periods.
    typealias Call = (position: UInt32, after: Double)

    /// The calls at these positions, each a period after the last unless `after` says otherwise.
    static func regular(_ positions: [UInt32]) -> [Call] { positions.map { ($0, 1) } }

    /// Feeds calls of 256 frames at 48 kHz; what each told, whether each was in doubt and whether
    /// each read the last call's position again after one in doubt (`repeated`). `replays`: the
    /// callback plays a late call's frames again then (JACK's).
    static func run(_ calls: [Call], replays: Bool = false) -> (told: [UInt32], inDoubt: [Bool], repeated: [Bool]) {
        var skips = gong_cycle_skips()
        var woke: Int64 = 1_000_000_000
        var result: (told: [UInt32], inDoubt: [Bool], repeated: [Bool]) = ([], [], [])
        for call in calls {
            woke += Int64(call.after * 256 * 1e9 / 48000)
            skips.replays = replays ? 1 : 0
            result.told.append(gong_cycle_skips_step(&skips, call.position, 256, woke, 48000))
            result.inDoubt.append(skips.in_doubt != 0)
            result.repeated.append(skips.repeated != 0)
        }
        return result
    }

    static func told(_ calls: [Call], replays: Bool = false) -> [UInt32] { run(calls, replays: replays).told }

    @Test func cyclesEndToEndTellNothing() {
        #expect(Self.told(Self.regular([1000, 1256, 1512, 1768])) == [0, 0, 0, 0])
    }

    @Test func cyclesTheServerRanWithoutTheClientAreToldAtTheNextCalmCall() {
        // Two cycles (1768 and 2024, 512 frames) missed: the call at 2280 woke three periods after
        // the last, and is not believed, nor 2536, the first on its period after it; 2792 is, and
        // shows the 512 frames.
        #expect(
            Self.told([(1000, 1), (1256, 1), (1512, 1), (2280, 3), (2536, 1), (2792, 1), (3048, 1)])
                == [0, 0, 0, 0, 0, 512, 0])
        // A stop of 14 080 frames, then the cycles after it.
        #expect(
            Self.told([(0, 1), (256, 1), (512, 1), (14_848, 56), (15_104, 1), (15_360, 1)]) == [0, 0, 0, 0, 0, 14_080])
    }

    @Test func aCallThatBeganLateAndReadTheNextCyclesPositionTellsNothing() {
        // The call serving 1512 began two periods after the last, after the server moved to
        // 1768, and read that; the server then ran 1768 at once, and the next cycle on time.
        #expect(
            Self.told([(744, 1), (1000, 1), (1256, 1), (1768, 2), (1768, 0.01), (2024, 0.99), (2280, 1), (2536, 1)])
                == [0, 0, 0, 0, 0, 0, 0, 0])
        // A late start on top of a real miss: 1512 was missed, and the call serving 1768 began
        // late and read 2024. Only the miss is told.
        #expect(
            Self.told([(744, 1), (1000, 1), (1256, 1), (2024, 3), (2024, 0.01), (2280, 0.99), (2536, 1), (2792, 1)])
                == [0, 0, 0, 0, 0, 0, 256, 0])
    }

    /// A call that woke on its period after a late one was late itself, read the next cycle's
    /// position, and the server ran it again at once for that cycle (clean run ci89's traces,
    /// bench/RESULTS.md, stop 60). Believed, it told 256 frames the graph never ran without gong
    /// and put every later cue a cycle early.
    @Test func aCallOnItsPeriodAfterALateOneMayBeLateItself() {
        let calls: [Call] = [
            (744, 1), (1000, 1), (1256, 1), (1512, 1.9), (2024, 1.32), (2024, 0.0073), (2280, 0.68), (2536, 1),
            (2792, 1)
        ]
        let run = Self.run(calls)
        #expect(run.told == [0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(run.inDoubt == [true, true, false, true, true, true, true, false, false])
        // Through PipeWire's JACK (ci89's other trace) the same three calls after a cycle truly
        // missed (1512): the repeat plays the frames of the call late for 2024 again at 2280,
        // where they count, so both cycles are told.
        let throughJack: [Call] = [
            (744, 1), (1000, 1), (1256, 1), (1768, 1.94), (2280, 1.41), (2280, 0.002), (2536, 0.6), (2792, 1),
            (3048, 1)
        ]
        let jack = Self.run(throughJack, replays: true)
        #expect(jack.told == [0, 0, 0, 0, 0, 0, 0, 512, 0])
        #expect(jack.repeated == [false, false, false, false, false, true, false, false, false])
    }

    /// After PipeWire's daemon stood still, the cycles it owed were run back to back and gong's
    /// calls read a cycle ahead twice before one read its own (traced with the graph's recording,
    /// bench/RESULTS.md, stop 54): the position was believed on the second call, 256 frames were
    /// told that the server never ran without gong, and every later cue came a cycle early.
    @Test func aStringOfCallsReadingAheadAfterAServerStallTellsNothing() {
        let calls: [Call] = [
            (114_432, 1), (114_688, 1), (114_944, 1), (115_456, 4.2), (115_712, 0.013),
            (115_712, 0.001), (115_968, 0.01), (116_224, 0.73), (116_480, 1.05), (116_736, 1)
        ]
        #expect(Self.told(calls) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(Self.run(calls).inDoubt == [true, true, false, true, true, true, true, true, false, false])
        // A callback that plays the late call's frames again when the position comes twice has
        // them heard a cycle late, and tells that cycle.
        #expect(Self.told(calls, replays: true) == [0, 0, 0, 0, 0, 0, 0, 0, 256, 0])
        #expect(
            Self.run(calls, replays: true).repeated
                == [false, false, false, false, false, true, false, false, false, false])
    }

    /// A longer catch-up from the same trace, cycles missed among the calls read ahead: what the
    /// server ran without gong is the position less the frames gong handed over, at the first
    /// calm call after (5 120 frames in 14 calls of 256: 1 792), however the calls between read.
    @Test func aCatchUpWithCyclesMissedTellsWhatTheFirstCalmCallShows() {
        let calls: [Call] = [
            (140_032, 1), (140_288, 1), (140_544, 1), (141_312, 17.4), (141_568, 0.003), (141_568, 0.001),
            (142_080, 0.003), (142_592, 0.017), (142_592, 0.001), (142_848, 0.003), (144_128, 0.017),
            (144_640, 0.007), (144_896, 0.004), (145_152, 0.54), (145_408, 0.99), (145_664, 1)
        ]
        let told = Self.told(calls)
        #expect(told.reduce(0, +) == 1792 && told[14] == 1792, "\(told)")
    }

    /// JACK's callback plays the late call's frames again in the cycle whose position it read
    /// early, so they are heard there, a cycle late: the whole jump before them is told.
    @Test func aLateCallWhoseFramesArePlayedAgainTellsTheWholeJump() {
        // The call serving 1512 began after the server moved to 1768: 1512 ran without gong.
        let late: [Call] = [(744, 1), (1000, 1), (1256, 1), (1768, 2), (1768, 0.01), (2024, 0.99), (2280, 1), (2536, 1)]
        #expect(Self.told(late, replays: true) == [0, 0, 0, 0, 0, 0, 256, 0])
        // A miss besides: 1512 and 1768 ran without gong, its frames heard from 2024 on.
        let missed: [Call] = [
            (744, 1), (1000, 1), (1256, 1), (2024, 3), (2024, 0.01), (2280, 0.99), (2536, 1), (2792, 1)
        ]
        #expect(Self.told(missed, replays: true) == [0, 0, 0, 0, 0, 0, 512, 0])
        // A jump followed by the next cycles is told as before.
        #expect(
            Self.told([(744, 1), (1000, 1), (1256, 1), (2024, 3), (2280, 1), (2536, 1), (2792, 1)], replays: true)
                == [0, 0, 0, 0, 0, 512, 0])
        // Only a position read twice after a call in doubt is a late call's repeat: read twice
        // after a calm one, nothing is played again.
        #expect(Self.run(late).repeated == [false, false, false, false, true, false, false, false])
        #expect(Self.run(Self.regular([744, 1000, 1256, 1256, 1512])).repeated == [false, false, false, false, false])
    }

    /// A call is in doubt (its timing is not reported) unless it and the call before it each woke
    /// a period after the last, give or take half: the first two, a late one, the one right after
    /// it and the next, and on a busy machine one that woke late by more than half a period while
    /// reading its own cycle, and the two after it.
    @Test func aCallIsInDoubtUnlessItWasCalm() {
        let doubts = Self.run([(744, 1), (1000, 1), (1256, 1), (1768, 2), (1768, 0.01), (2024, 0.99), (2280, 1)])
        #expect(doubts.inDoubt == [true, true, false, true, true, true, false])
        // Waking 0.6 of a period late, then on time: three in doubt, nothing told.
        let jittery = Self.run([
            (744, 1), (1000, 1), (1256, 1), (1512, 1.6), (1768, 0.4), (2024, 1), (2280, 1), (2536, 1)
        ])
        #expect(
            jittery.inDoubt == [true, true, false, true, true, true, false, false]
                && jittery.told == [0, 0, 0, 0, 0, 0, 0, 0])
    }

    /// Whatever the calls in doubt read (here a position that steps back, as PipeWire's JACK's
    /// may when the graph's quantum changes), a calm call's position less the frames handed over
    /// is what is told.
    @Test func whatCallsInDoubtReadIsNotBelieved() {
        #expect(
            Self.told([(744, 1), (1000, 1), (1256, 1), (2024, 3), (1900, 0.01), (2156, 0.99), (2412, 1), (2668, 1)])
                == [0, 0, 0, 0, 0, 0, 132, 0])
    }

    @Test func positionsThatWrapAroundAreStillCycles() {
        let last = UInt32.max - 255
        #expect(
            Self.told([(last - 512, 1), (last - 256, 1), (last, 1), (0, 1), (256, 1), (768, 2), (1024, 1), (1280, 1)])
                == [0, 0, 0, 0, 0, 0, 0, 256])
    }
}
