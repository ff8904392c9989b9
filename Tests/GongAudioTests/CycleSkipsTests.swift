import CGongStreams
import Testing

/// The cycles gong's JACK and PipeWire callbacks tell as missed, from the server's clock position
/// each call reads (gong_handoff.h; JACK's frame time here): a jump is told a cycle later; when it
/// was a call that began late and read the next cycle's position, PipeWire's callback tells it
/// less that call's cycle, JACK's (which plays that call's frames again) whole.
struct CycleSkipsTests {
    /// Feeds cycles of 256 frames at these frame times; what each call told. `replays`: the
    /// callback plays a late call's frames again when its frame time comes twice (JACK's).
    func told(_ frameTimes: [UInt32], replays: Bool = false) -> [UInt32] {
        var skips = gong_cycle_skips()
        return frameTimes.map {
            skips.replays = replays ? 1 : 0
            return gong_cycle_skips_step(&skips, $0, 256)
        }
    }

    @Test func cyclesEndToEndTellNothing() {
        #expect(told([1000, 1256, 1512, 1768]) == [0, 0, 0, 0])
    }

    @Test func cyclesTheServerRanWithoutTheClientAreToldOnTheNextCycle() {
        // Two cycles (1768 and 2024, 512 frames) missed; told when 2536 shows no step back.
        #expect(told([1000, 1256, 1512, 2280, 2536, 2792]) == [0, 0, 0, 0, 512, 0])
        // A stop of 14 080 frames, then the cycles after it.
        #expect(told([0, 256, 14_592, 14_848]) == [0, 0, 0, 14_080])
    }

    @Test func aCallThatBeganLateAndReadTheNextCyclesFrameTimeTellsNothing() {
        // The call serving 1512 began after the server moved to 1768 and read that; the server
        // then ran 1768 as well.
        #expect(told([1000, 1256, 1768, 1768, 2024, 2280]) == [0, 0, 0, 0, 0, 0])
        // A late start on top of a real miss: 1512 was missed, and the call serving 1768 began
        // late and read 2024. Only the miss is told.
        #expect(told([1000, 1256, 2024, 2024, 2280, 2536]) == [0, 0, 0, 0, 256, 0])
    }

    /// JACK's callback plays the late call's frames again in the cycle whose frame time it read
    /// early, so they are heard there, a cycle late: the whole jump before them is told.
    @Test func aLateCallWhoseFramesArePlayedAgainTellsTheWholeJump() {
        // The call serving 1512 began after the server moved to 1768: 1512 ran without gong.
        #expect(told([1000, 1256, 1768, 1768, 2024, 2280], replays: true) == [0, 0, 0, 256, 0, 0])
        // A miss besides: 1512 and 1768 ran without gong, its frames heard from 2024 on.
        #expect(told([1000, 1256, 2024, 2024, 2280, 2536], replays: true) == [0, 0, 0, 512, 0, 0])
        // A jump followed by the next cycle is told as before.
        #expect(told([1000, 1256, 2024, 2280, 2536], replays: true) == [0, 0, 0, 512, 0])
        // Only a frame time read twice after a jump is a late call's repeat: read twice without
        // one, nothing is played again.
        func repeats(_ frameTimes: [UInt32]) -> [Bool] {
            var skips = gong_cycle_skips()
            return frameTimes.map {
                _ = gong_cycle_skips_step(&skips, $0, 256)
                return skips.repeated != 0
            }
        }
        #expect(repeats([1000, 1256, 1768, 1768, 2024]) == [false, false, false, true, false])
        #expect(repeats([1000, 1256, 1256, 1512]) == [false, false, false, false])
    }

    /// A cycle whose frame time jumped is in doubt (its timing is not reported) until the next
    /// one; the others are not.
    @Test func aCycleIsInDoubtWhenItsFrameTimeJumped() {
        var skips = gong_cycle_skips()
        let doubts = [1000, 1256, 1768, 1768, 2024].map { (frameTime: UInt32) -> Bool in
            _ = gong_cycle_skips_step(&skips, frameTime, 256)
            return skips.in_doubt != 0
        }
        #expect(doubts == [false, false, true, false, false])
    }

    /// A step back that is not the same frame time read twice (PipeWire's JACK, as the graph's
    /// quantum changes) takes nothing back from a jump held.
    @Test func onlyTheSameFrameTimeReadTwiceTakesAJumpBack() {
        #expect(told([1000, 1256, 2024, 1900, 2156, 2412]) == [0, 0, 0, 0, 512, 0])
    }

    @Test func frameTimesThatWrapAroundAreStillCycles() {
        let last = UInt32.max - 255
        #expect(told([last - 256, last, 0, 256, 768, 1024]) == [0, 0, 0, 0, 0, 256])
    }
}
