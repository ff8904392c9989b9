import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongAudio

/// A session long enough that its frame count passes what a nanosecond product of it can hold,
/// played through the engine as fast as a device takes it: the arithmetic, not the threads, is
/// what it pins, so it is not among the thread sanitizer's tests (the rest of
/// `PlaybackEngineTests` is), where it was the longest, last in a serialized suite. It computes
/// while its test only waits, on a thread of its own (bench/RESULTS.md, "`make test` shorter").
@Suite(.onThreadsOfItsOwn) struct LongSessionEngineTests {
    /// A bell every hour for 15 hours at 192 kHz: 1.04·10¹⁰ frames, past the 9.2·10⁹ at which
    /// `frames * 1_000_000_000` trapped the audio thread (a 14-hour session died after 16 s).
    /// ALSA's `null` takes them as fast as they come, in the largest periods gong asks for.
    @Test func tenBillionFramesPlayThroughTheEngineOnNullWithEveryCueOnItsFrame() throws {
        let rate = 192_000
        let pattern = Pattern(
            name: "hourly", phases: [Phase("hour", length: 3600, cue: Cue("tick"))],
            length: .duration(Rational(15 * 3600)))
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        #expect(timeline.plannedEndFrame > 10_000_000_000)
        let renderer = SessionRenderer(timeline: timeline, sounds: [[Float](repeating: 0.1, count: 400)], channels: 1)
        let device = try FaultInjectingPCM(rate: rate, channels: 1, periodFrames: 65536)
        let engine = PlaybackEngine(
            renderer: renderer, device: device,
            reopen: { () throws(AudioDeviceError) -> FaultInjectingPCM in
                throw AudioDeviceError(code: -ENODEV, operation: "test", device: "null", message: "gone")
            })
        engine.start()
        let events = PlaybackEngineTests.drive(engine, seconds: 600)
        let cues = PlaybackEngineTests.cueFrames(events)
        #expect(cues.map(\.scheduled) == timeline.cueOnsets.map(\.frame))
        #expect(cues.allSatisfy { $0.session == $0.scheduled })
        #expect(cues.last?.session == 14 * 3600 * Int64(rate))
        #expect(PlaybackEngineTests.renderKinds(events).last == .finished)
        #expect(Int64(device.framesWritten) >= timeline.plannedEndFrame)
    }
}
