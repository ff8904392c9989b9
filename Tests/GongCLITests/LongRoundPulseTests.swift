import Testing

/// The long rounds on PulseAudio and PipeWire, which `make test-long` runs alone and `make test`
/// leaves out (docs/testing.md). Here, the rounds of `LivePulseTests`, `PulseClientTests` and
/// `BenchPulseTests` that repeat on a route what `make test` already plays there: the minute to
/// the frame, a stopped process and a restarted server on the ways in that are not the server's
/// own (ALSA's plugin, pipewire-pulse), the minutes on PipeWire at rest and a pause there, the PipeWire tap proved against a late call
/// of its own, gong's own PipeWire stream with the daemon stood still, the
/// automatic device's two sessions a server, and `gong bench compare`'s four ways. The bed's ten
/// minutes and the bells a minute apart are in files of their own (LiveBedTests.swift,
/// LiveBellsTests.swift).
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

    /// The same on gong's own PipeWire stream: the rule that counts what the graph ran without
    /// gong is the same (`gong_cycle_skips`), and so is the graph's stall. Added while tracing
    /// clean run ci73's failure of the minute on this stream (bench/RESULTS.md, stop 58): 13 of
    /// 13 passed then, gong's count held. A long round until its one failure is traced: clean run
    /// ci74 heard a sixth onset on the graph's clock, at the session's end, and a cue gong said
    /// 512 frames late on its frame; gong's own calls played neither so.
    @Test func pipeWireKeepsItsCuesWhenTheDaemonStandsStill() throws {
        try LiveJackTests.playOnPipeWiresGraph(throughItsJack: false, seconds: 15, stallingTheDaemon: true)
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
