import Testing

/// The long rounds on PulseAudio and PipeWire, which `make test-long` runs alone and `make test`
/// leaves out (docs/testing.md): the bed's ten minutes and the bells a minute apart (in files of
/// their own), and the minute to the frame on the routes `make test` plays only in shorter tests.
@Suite(.serialized) struct LongRoundPulseTests {
    /// `LivePulseTests`' minute, on ALSA's plugin on both servers and gong's own PulseAudio
    /// client through pipewire-pulse.
    @Test(arguments: LiveRoute.timedInTestLong)
    func aMinuteLiveHasEveryIntervalExactToTheFrame(_ live: LiveRoute) throws {
        try LivePulseTests().aMinuteLiveHasEveryIntervalExactToTheFrame(live)
    }
}
