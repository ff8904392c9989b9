import Testing

/// The JACK tap (Tests/CJackTap), the witness the JACK tests judge by, fed cycles by hand as its
/// process callback would be. A call that begins late, after the server moved on, reads the next
/// cycle's frame time and gong's port buffer as gong rewrote it for that cycle (traced with a
/// late call injected into the tap: `LiveJackTests.theTapLateForACueNeverPlacesItOffItsFrame`);
/// the server then runs the tap for that cycle again. Those frames belong where the call read
/// them, and the cycle it was late for is a hole.
struct JackTapTests {
    /// The server's clock as the tap notes it: 200 cycles of 256 frames, woken up to 2.4 ms late
    /// (every seventh on time), and from the hundredth on 60 ms later than their frames say
    /// (jack2's dummy driver woken late starts its timeline again). A frame is placed by the
    /// earliest wake-ups from its cycle on, so two clicks either side are 60 ms further apart in
    /// time than in frames, not more for the late wake-ups, and the stop is found there and
    /// nowhere else. Fails if the clock is read from frames, or from each call's own wake-up.
    @Test func theServersClockIsPlacedByEarliestWakeUpsAndAStopIsFoundWhereItStood() throws {
        let tap = JackTap(unconnectedFrames: 200 * 256)
        for index in 0..<200 {
            let frameTime = 50_000 + UInt32(index) * 256
            let late = Int64(index % 7) * 400 + (index >= 100 ? 60_000 : 0)
            tap.note(cycleAt: frameTime, usecs: 1_000_000 + Int64(index) * 256 * 1_000_000 / 48000 + late)
            tap.record(
                cycleAt: frameTime, channel: TapRecording.cycle(click: index == 12 ? 10 : index == 150 ? 20 : nil))
        }
        let recording = tap.finish()
        #expect(recording.cycleTimes.count == 200 && recording.cycleTimes[1].frame == 256)
        let first = try #require(recording.serverSeconds(atFrame: 12 * 256 + 10))
        let second = try #require(recording.serverSeconds(atFrame: 150 * 256 + 20))
        let frames = Double(138 * 256 + 10)
        #expect(abs(second - first - (frames / 48000 + 0.060)) < 0.000_03, "\(second - first) s")
        let stops = recording.clockStops()
        #expect(stops.count == 1 && stops[0].frame == 36000 && abs(stops[0].seconds - 0.060) < 0.000_03, "\(stops)")
        #expect(recording.serverSeconds(atFrame: -1) == nil)
    }

    @Test func cyclesOneAfterAnotherAreRecordedWhole() {
        let tap = JackTap(unconnectedFrames: 4096)
        for index in 0..<4 { tap.record(cycleAt: 10_000 + UInt32(index) * 256, channel: TapRecording.cycle()) }
        let recording = tap.finish()
        #expect(recording.samples.count == 1024 && !recording.samples.contains { $0.isNaN })
        #expect(recording.holes.isEmpty && recording.missedFrames == 0 && recording.rereadCycles == 0)
    }

    /// The call for the cycle at 256 began late and read 512, with 512's frames (a click at 7);
    /// the server then ran the tap for 512 again, the same frames. The click is placed at 519,
    /// where it was played, the cycle at 256 is a hole, missed, and the second click's interval
    /// from the first is what the server's clock says. (Moved back to 256, as the tap once did,
    /// the click read 263: a cycle early.)
    @Test func aCycleReadLateIsPlacedWhereItWasReadAndTheCycleItWasLateForIsAHole() {
        let tap = JackTap(unconnectedFrames: 4096)
        tap.record(cycleAt: 0, channel: TapRecording.cycle(click: 3))
        tap.record(cycleAt: 512, channel: TapRecording.cycle(click: 7))
        tap.record(cycleAt: 512, channel: TapRecording.cycle(click: 7))
        tap.record(cycleAt: 768, channel: TapRecording.cycle())
        let recording = tap.finish()
        #expect(recording.holes.map { [$0.frame, $0.frames] } == [[256, 256]])
        #expect(recording.missedFrames == 256 && recording.rereadCycles == 1)
        #expect(recording.placedOnsets(quietFrames: 100).map(\.frame) == [3, 519])
    }

    /// A late call of a tap that is itself two cycles late: the frame time jumps by two, comes
    /// again, and both cycles it skipped are holes.
    @Test func aCallTwoCyclesLateLeavesTwoCyclesHoles() {
        let tap = JackTap(unconnectedFrames: 4096)
        tap.record(cycleAt: 0, channel: TapRecording.cycle())
        tap.record(cycleAt: 768, channel: TapRecording.cycle(click: 0))
        tap.record(cycleAt: 768, channel: TapRecording.cycle(click: 0))
        tap.record(cycleAt: 1024, channel: TapRecording.cycle())
        let recording = tap.finish()
        #expect(recording.holes.map { [$0.frame, $0.frames] } == [[256, 512]])
        #expect(recording.missedFrames == 512 && recording.rereadCycles == 1)
        // The click came on the first frame after the hole: it may have begun inside it, and is
        // not placed.
        let onsets = recording.placedOnsets(quietFrames: 100)
        #expect(onsets.map(\.frame) == [768] && onsets.map(\.placed) == [false])
    }

    /// A cycle copied while the server moved on may hold the next cycle's frames: left out, a
    /// hole, counted; the cycles around it stay.
    @Test func aCycleCopiedWhileTheServerMovedOnIsLeftOut() {
        let tap = JackTap(unconnectedFrames: 4096)
        tap.record(cycleAt: 0, channel: TapRecording.cycle())
        tap.record(cycleAt: 256, channel: TapRecording.cycle(click: 9))
        tap.leaveOut(cycleAt: 256, frames: 256)
        tap.record(cycleAt: 512, channel: TapRecording.cycle())
        let recording = tap.finish()
        #expect(recording.holes.map { [$0.frame, $0.frames] } == [[256, 256]])
        #expect(recording.missedFrames == 0 && recording.rereadCycles == 1)
        #expect(recording.placedOnsets(quietFrames: 100).isEmpty)
    }
}
