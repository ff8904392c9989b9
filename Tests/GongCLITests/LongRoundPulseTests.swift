import Testing

/// The long rounds on PulseAudio and PipeWire, which `make test-long` runs alone and `make test`
/// leaves out (docs/testing.md). Here, the rounds of `LivePulseTests`, `PulseClientTests` and
/// `BenchPulseTests` that repeat on a route what `make test` already plays there: the minute to the
/// frame, a stopped process and a restarted server on the ways in that are not the server's own
/// (ALSA's plugin, pipewire-pulse), the minutes on PipeWire at rest and a pause there, the PipeWire
/// tap proved against a late call of its own, gong's own PipeWire stream with the daemon stood
/// still (woodblocks, and ramps that name every frame), the automatic device's two sessions a
/// server, and `gong bench compare`'s four ways. The bed's ten minutes and the bells a minute apart
/// are in files of their own (LiveBedTests.swift, LiveBellsTests.swift).
@Suite(.serialized) struct LongRoundPulseTests {
    @Test(arguments: LiveRoute.otherWays)
    func aMinuteLiveHasEveryIntervalExactToTheFrame(_ live: LiveRoute) throws {
        try LivePulseTests().aMinuteLiveHasEveryIntervalExactToTheFrame(live)
    }

    @Test func aMinuteOnPipeWireAtRestIsExactAndConfirmed() throws {
        try LivePulseTests().aMinuteOnPipeWireAtRestIsExactAndConfirmed()
    }

    @Test func thePipeWireTapLateForACueNeverPlacesItOffItsFrame() throws {
        try LivePulseTests().thePipeWireTapLateForACueNeverPlacesItOffItsFrame()
    }

    /// `LiveJackTests.pipeWiresJackKeepsItsCuesWhenTheDaemonStandsStill` on gong's own PipeWire
    /// stream: the rule that counts what the graph ran without gong is the same
    /// (`gong_cycle_skips`), and so is the graph's stall. A long round until the failure a clean
    /// run once showed, on the graph's clock alone, is traced (bench/RESULTS.md, stop 58).
    @Test func pipeWireKeepsItsCuesWhenTheDaemonStandsStill() throws {
        try LiveJackTests.playOnPipeWiresGraph(throughItsJack: false, seconds: 15, stallingTheDaemon: true)
    }

    /// The same stall, every frame of every cue named (`RampCue`): 40 cues, each begun on the
    /// graph's clock exactly where gong says, whatever buffers the graph dropped meanwhile.
    @Test func pipeWireBeginsEveryCueWhereGongSaysWhileTheGraphDropsBuffers() throws {
        try RampCue.playThroughPipeWireWithTheDaemonStandingStill()
    }

    @Test func aMinuteThroughPipeWirePulseAtRestLosesNothing() throws {
        try LivePulseTests().aMinuteThroughPipeWirePulseAtRestLosesNothing()
    }

    @Test(arguments: LiveRoute.otherWays)
    func aStoppedProcessRecoversCountsTheXrunAndCompletes(_ live: LiveRoute) throws {
        try LivePulseTests().aStoppedProcessRecoversCountsTheXrunAndCompletes(live)
    }

    @Test(arguments: LiveRoute.otherWays)
    func aSoundServerThatRestartsIsALostDeviceThatComesBack(_ live: LiveRoute) throws {
        try LivePulseTests().aSoundServerThatRestartsIsALostDeviceThatComesBack(live)
    }

    @Test func throughPipeWirePulseAtRestAPauseJustBeforeACueTakesItBack() throws {
        try LivePulseTests().throughPipeWirePulseAtRestAPauseJustBeforeACueTakesItBack()
    }

    @Test(arguments: SoundServer.allCases)
    func theAutomaticDeviceIsTheServerWhenOneAnswersElseALSAsDefault(server: SoundServer) throws {
        try PulseClientTests().theAutomaticDeviceIsTheServerWhenOneAnswersElseALSAsDefault(server: server)
    }

    @Test(arguments: SoundServer.allCases)
    func compareFindsEveryCueAndGongsAreExact(server: SoundServer) throws {
        try BenchPulseTests().compareFindsEveryCueAndGongsAreExact(server: server)
    }
}
