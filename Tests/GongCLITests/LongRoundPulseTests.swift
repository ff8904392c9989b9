import Testing

/// The long rounds on PulseAudio and PipeWire, which `make test-long` runs alone and `make test`
/// leaves out (docs/testing.md). Here, the rounds of `LivePulseTests` and `BenchPulseTests` that
/// repeat on a route what `make test` already plays there: the minute to the frame on ALSA's
/// plugin and through pipewire-pulse, the minutes on PipeWire at rest, a stopped process and a
/// restarted server through ALSA's plugin, and `gong bench compare`'s four ways. The bed's ten
/// minutes and the bells a minute apart are in files of their own (LiveBedTests.swift,
/// LiveBellsTests.swift).
@Suite(.serialized) struct LongRoundPulseTests {
    @Test(arguments: LiveRoute.timedInTestLong)
    func aMinuteLiveHasEveryIntervalExactToTheFrame(_ live: LiveRoute) throws {
        try LivePulseTests().aMinuteLiveHasEveryIntervalExactToTheFrame(live)
    }

    @Test func aMinuteOnPipeWireAtRestIsExactAndConfirmed() throws {
        try LivePulseTests().aMinuteOnPipeWireAtRestIsExactAndConfirmed()
    }

    @Test func aMinuteThroughPipeWirePulseAtRestLosesNothing() throws {
        try LivePulseTests().aMinuteThroughPipeWirePulseAtRestLosesNothing()
    }

    @Test(arguments: LiveRoute.alsaPlugin)
    func aStoppedProcessRecoversCountsTheXrunAndCompletes(_ live: LiveRoute) throws {
        try LivePulseTests().aStoppedProcessRecoversCountsTheXrunAndCompletes(live)
    }

    @Test(arguments: LiveRoute.alsaPlugin)
    func aSoundServerThatRestartsIsALostDeviceThatComesBack(_ live: LiveRoute) throws {
        try LivePulseTests().aSoundServerThatRestartsIsALostDeviceThatComesBack(live)
    }

    @Test(arguments: SoundServer.allCases)
    func compareFindsEveryCueAndGongsAreExact(server: SoundServer) throws {
        try BenchPulseTests().compareFindsEveryCueAndGongsAreExact(server: server)
    }
}
