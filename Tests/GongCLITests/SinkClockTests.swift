import CPulseTap
import Testing

/// The bells test's witness, on made-up arrivals: a sink of known drift hands over blocks that
/// reach the recorder late by a known least delay plus a busy machine's scatter, and the frame
/// asked about was played a known distance from its second.
@Suite struct SinkClockTests {
    /// Blocks of `blockFrames` from a sink `drift` fast, frame 0 played at `origin` (seconds of
    /// CLOCK_REALTIME); each arrives `leastDelay` after its first frame played, and most of them
    /// later still, by up to `scatter` (a fixed sequence, the same every run).
    static func arrivals(
        origin: Double, drift: Double, seconds: Double = 30, blockFrames: Int = 480, leastDelay: Double = 0.0001,
        scatter: Double = 0.02, earlyEvery: Int = 0, handing: SinkClock.Handing = .fromItsFirstFrame
    ) -> [SinkClock.Arrival] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var result: [SinkClock.Arrival] = []
        var frame = 0
        while Double(frame) < seconds * 48000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let draw = Double(state >> 11) / Double(1 << 53)
            // One block in five prompt; the rest late by up to `scatter`, most by a little.
            let late = draw < 0.2 ? 0 : scatter * draw * draw
            let handed = handing == .fromItsFirstFrame ? frame : frame + blockFrames
            let played = origin + Double(handed) / (48000 * (1 + drift))
            result.append(
                SinkClock.Arrival(firstFrame: frame, frames: blockFrames, seconds: played + leastDelay + late))
            frame += blockFrames
        }
        return result
    }

    /// The frame played `offMs` after a whole second, placed by the arrivals within their least
    /// delay, with the sink's drift measured: a bell 2 ms off its second is seen 2 ms off.
    @Test(arguments: [0.0, 0.3, -0.7, 2.0, -5.0])
    func aFrameIsPlacedOnTheSystemsClockWithTheSinksDriftTakenOut(offMs: Double) throws {
        let origin = 1_800_000_000.25
        let drift = 300e-6
        let arrivals = Self.arrivals(origin: origin, drift: drift)
        // The frame played at origin + 14.75 s + offMs: a whole second, off by offMs.
        let frame = Int(((14.75 + offMs / 1000) * 48000 * (1 + drift)).rounded())
        let played = origin + Double(frame) / (48000 * (1 + drift))
        let placement = try #require(SinkClock.place(frame: frame, in: arrivals))
        // Late by the least delay (0.1 ms) and no more than a frame's rounding besides.
        let error = (placement.seconds - played) * 1000
        #expect(error > 0.09 && error < 0.13, "placed \(error) ms after it was played")
        #expect(abs(placement.offSecondMs - offMs) < 0.15, "\(placement.offSecondMs) ms off its second")
        #expect(abs(placement.drift - drift) < 5e-6, "drift \(placement.drift * 1e6) ppm")
        #expect(placement.bins >= 40)
        // Each bin had a prompt block: its earliest lies on the line.
        #expect(placement.medianLateness < 1e-6, "\(placement.medianLateness) s")
    }

    /// pipewire-pulse hands a block over once all of it has played: placed by the block's last
    /// frame, a bell is where it was played; by its first, one block late.
    @Test func aBlockHandedOverAfterItsLastFrameIsPlacedByIt() throws {
        let origin = 1_800_000_000.25
        let arrivals = Self.arrivals(origin: origin, drift: 0, handing: .afterItsLastFrame)
        let frame = Int(14.75 * 48000)
        let placement = try #require(SinkClock.place(frame: frame, in: arrivals, handing: .afterItsLastFrame))
        #expect(abs(placement.offSecondMs - 0.1) < 0.05, "\(placement.offSecondMs) ms off its second")
        let byFirstFrames = try #require(SinkClock.place(frame: frame, in: arrivals))
        #expect(abs(byFirstFrames.offSecondMs - 10.1) < 0.05, "\(byFirstFrames.offSecondMs) ms off its second")
    }

    /// A sink at the system's rate, blocks all a little late: the line is the earliest of them,
    /// however late the others came.
    @Test func aBusyMachinesLateBlocksDoNotMoveTheLine() throws {
        let arrivals = Self.arrivals(origin: 1_800_000_000, drift: 0, leastDelay: 0.0003, scatter: 0.2)
        let placement = try #require(SinkClock.place(frame: 10 * 48000, in: arrivals))
        #expect(abs(placement.offSecondMs - 0.3) < 0.05, "\(placement.offSecondMs) ms")
        #expect(abs(placement.drift) < 5e-6)
    }

    /// Blocks that arrive ahead of their first frame's time (begun part way into what the sink
    /// played at once), one bin in seven, do not pull the line early.
    @Test func blocksAheadOfTheirTimeNowAndThenDoNotMoveTheLine() throws {
        let arrivals = Self.arrivals(origin: 1_800_000_000, drift: 150e-6, earlyEvery: 70)
        let frame = Int((12 * 48000 * (1 + 150e-6)).rounded())
        let placement = try #require(SinkClock.place(frame: frame, in: arrivals))
        #expect(abs(placement.offSecondMs - 0.1) < 0.05, "\(placement.offSecondMs) ms")
        #expect(abs(placement.drift - 150e-6) < 10e-6, "drift \(placement.drift * 1e6) ppm")
    }

    /// Arrivals that do not reach the frame judge nothing.
    @Test func noArrivalsNearTheFramePlaceNothing() {
        let arrivals = Self.arrivals(origin: 1_800_000_000, drift: 0, seconds: 5)
        #expect(SinkClock.place(frame: 60 * 48000, in: arrivals) == nil)
        #expect(SinkClock.place(frame: 0, in: []) == nil)
    }

    /// A PulseAudio timing reply is the frame the sink was playing at the reply's instant: what
    /// the stream's queue had been given and the source still held, less what the sink had
    /// rendered ahead of its clock.
    @Test func aTimingReplyIsTheFrameTheSinkWasPlaying() {
        let reply = pulse_tap_timing(
            usec: 1_800_000_000_250_000, write_index: 48000 * 4, sink_usec: 5000, source_usec: 1000)
        let point = PulseTap.played(by: reply)
        #expect(point.firstFrame == 48000 + 48 - 240 && point.frames == 0)
        #expect(abs(point.seconds - 1_800_000_000.25) < 1e-6, "\(point.seconds)")
    }

    /// Replies from a sink that renders 4.7 to 5 ms ahead of its clock, some answered late on a
    /// busy machine, place a frame where the sink played it: the render-ahead is taken out, not
    /// mistaken for the frame's time.
    @Test func timingRepliesPlaceAFrameWhereTheSinkPlayedIt() throws {
        let origin = 1_800_000_000.5
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let replies = (0..<400).map { step -> SinkClock.Arrival in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let draw = Double(state >> 11) / Double(1 << 53)
            let instant = Double(step) * 0.01
            let ahead = 0.0047 + 0.0003 * draw
            let rendered = Int(((instant + ahead) * 48000).rounded())
            let reply = pulse_tap_timing(
                usec: Int64(((origin + instant + (draw < 0.3 ? 0.002 * draw : 0)) * 1e6).rounded()),
                write_index: Int64(rendered * 4), sink_usec: UInt64((ahead * 1e6).rounded()), source_usec: 0)
            return PulseTap.played(by: reply)
        }
        // The frame played 0.4 ms after a whole second.
        let frame = Int(((1.5 + 0.0004) * 48000).rounded())
        let placement = try #require(SinkClock.place(frame: frame, in: replies))
        #expect(abs(placement.offSecondMs - 0.4) < 0.05, "\(placement.offSecondMs) ms off its second")
    }
}
