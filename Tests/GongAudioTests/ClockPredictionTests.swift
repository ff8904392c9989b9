import CGongStreams
import Testing

/// Whether JACK's clock restarted before a cycle (gong_clock_prediction, gong_handoff.h): the
/// cycle's start against where the server predicted its next cycle, carried on by the frames
/// between. jack2's dummy driver woken over a period late starts its timeline again; a client
/// that missed cycles, or read the next cycle's times early, moves nothing.
struct ClockPredictionTests {
    /// 256-frame cycles at 48 kHz, as the server times them: frame time and start (µs) of each
    /// call, and when the client woke for it; the next cycle predicted a period on. Which calls
    /// saw a restart to measure.
    func restarts(_ cycles: [(frames: UInt32, usecs: UInt64, woke: Int64)]) -> [Bool] {
        var prediction = gong_clock_prediction()
        return cycles.map { cycle in
            gong_clock_prediction_step(
                &prediction, cycle.frames, cycle.usecs, cycle.usecs + 5333, 256, 48000, cycle.woke) != 0
        }
    }

    static let start: UInt64 = 1_000_000_000
    /// The client's clock against jack2's: the two need not share an origin (they did not where
    /// this was traced: bench/RESULTS.md, stop 56), so only differences may be judged; a client
    /// wakes a little after its cycle's start.
    static let wokeBehind: Int64 = 223_600 + 50

    /// Cycle `n` of an undisturbed server, `late` µs after its time; the client woke `wokeLate` µs
    /// later than usual after the cycle's start.
    func cycle(_ n: Int, late: UInt64 = 0, wokeLate: Int64 = 0, from frames: UInt32 = 1000) -> (
        frames: UInt32, usecs: UInt64, woke: Int64
    ) {
        let usecs = Self.start + UInt64(n) * 5333 + late
        return (frames &+ UInt32(256 * n), usecs, Int64(usecs) + Self.wokeBehind + wokeLate)
    }

    @Test func cyclesWhereTheServerPredictedThemAreNoRestart() {
        #expect(restarts((0..<5).map { cycle($0) }) == [false, false, false, false, false])
    }

    /// gong stopped 300 ms: the server ran 56 cycles without it, on its time.
    @Test func cyclesTheServerRanWithoutTheClientAreNoRestart() {
        #expect(restarts([cycle(0), cycle(1), cycle(58), cycle(59)]) == [false, false, false, false])
    }

    /// Carried over 56 cycles (300 ms) the prediction has a 64th of that as slack: a server's
    /// filter a few microseconds a cycle off the nominal period is no restart; a driver's stop is.
    @Test func aPredictionCarriedOverManyCyclesHasSlackInProportion() {
        #expect(restarts([cycle(0), cycle(1), cycle(58, late: 4000)]) == [false, false, false])
        #expect(restarts([cycle(0), cycle(1), cycle(58, late: 60000)]) == [false, false, true])
    }

    /// A call that began late reads the next cycle's times, and the next call the same again.
    @Test func aCallThatReadTheNextCyclesTimesIsNoRestart() {
        #expect(restarts([cycle(0), cycle(1), cycle(3), cycle(3), cycle(4)]) == [false, false, false, false, false])
    }

    /// The driver woke 60 ms late and counted its cycles afresh: the next cycle, where predicted
    /// by frames, began 60 ms late.
    @Test func aDriverThatStartedItsTimelineAgainIsARestart() {
        #expect(
            restarts([cycle(0), cycle(1), cycle(2, late: 60000), cycle(3, late: 60000)]) == [false, false, true, false])
        // As jack2 times it: the late start is there for a client that reads it after the driver
        // reset it; the next cycle, begun at once, starts where the filter put it, and the client
        // wakes as late behind that. One restart.
        #expect(
            restarts([cycle(0), cycle(1), cycle(2, late: 60000), cycle(3, wokeLate: 60000 - 5333 + 100)])
                == [false, false, true, false])
    }

    /// The gap issue 38 named: the first cycle after the driver's stop also ran without the
    /// client, so its frame time jumped a cycle as well. Judged against the prediction carried
    /// on by that cycle, the restart is seen.
    @Test func aRestartThatComesWithASkippedCycleIsStillARestart() {
        #expect(
            restarts([cycle(0), cycle(1), cycle(3, late: 60000), cycle(4, late: 60000)]) == [false, false, true, false])
        // And with the jump read a cycle early, then read again.
        #expect(
            restarts([cycle(0), cycle(1), cycle(3, late: 60000), cycle(3, late: 60000), cycle(4, late: 60000)])
                == [false, false, true, false, false])
    }

    /// jackd stopped 60 ms while its driver slept, or while it ran its clients: the cycle after
    /// starts where jack2's filter predicted it (the driver's reset of the start came after this
    /// client read it, or not before the next cycle), but the client wakes 54.6 ms later behind
    /// it than the cycle before. The filter then comes back towards the real starts a few hundred
    /// microseconds a cycle, and nothing more is a restart. (As a client of jackd's traced it
    /// through hundreds of stops: bench/RESULTS.md, stop 56.)
    @Test func aRestartJacksFilterHidesIsSeenInTheClientsWakeUp() {
        #expect(
            restarts([
                cycle(0), cycle(1), cycle(2, wokeLate: 54_600), cycle(3, wokeLate: 54_300),
                cycle(4, wokeLate: 54_000), cycle(5, wokeLate: 53_700)
            ]) == [false, false, true, false, false, false])
    }

    /// A client woken late behind its cycle by less than a period more than the last time (a busy
    /// machine) is no restart; by more, it is measured as one (gong_clock_origin then tells no stop
    /// for it: its next cycles' wake-ups are on time).
    @Test func aClientWokenLateIsMeasuredOnlyWhenLaterByAPeriod() {
        #expect(restarts([cycle(0), cycle(1), cycle(2, wokeLate: 4000), cycle(3)]) == [false, false, false, false])
        #expect(restarts([cycle(0), cycle(1), cycle(2, wokeLate: 7000), cycle(3)]) == [false, false, true, false])
    }

    /// A late start shorter than the floor (a millisecond) is the device clock's to follow.
    @Test func aLatenessUnderTheFloorIsNoRestart() {
        #expect(restarts([cycle(0), cycle(1), cycle(2, late: 900)]) == [false, false, false])
    }

    @Test func frameTimesThatWrapAroundAreStillJudged() {
        let from = UInt32.max - 600
        #expect(
            restarts([
                cycle(0, from: from), cycle(1, from: from), cycle(2, from: from), cycle(4, late: 60000, from: from)
            ])
                == [false, false, false, true])
    }

    /// Frames between beyond GONG_CLOCK_PREDICTION_REACH_SECONDS are not judged: a sound card's
    /// rate off the nominal would carry the prediction past the floor.
    @Test func aGapBeyondTheReachIsNotJudged() {
        let cycles = 48000 * 20 / 256
        #expect(restarts([cycle(0), cycle(1), cycle(cycles, late: 60000)]) == [false, false, false])
    }
}
