import Testing

@testable import GongAudio

/// An underrun of a PulseAudio stream measured from the server's own count of the silence, with
/// the reports PulseAudio 16.1 gave around a 1 s stop of a client playing 500 ms (float32 mono,
/// 48 kHz), whose recording showed 31 680 frames of silence and the first 221 frames written
/// after the stop dropped: every later frame heard 31 459 frames late.
@Suite struct UnderrunMeasureTests {
    static let frameBytes = 4
    static let second: Int64 = 1_000_000_000

    static func report(
        read: Int64, sinceUnderrun: Int64, sinkMicroseconds: UInt64, playing: Bool, atMicroseconds: Int64
    ) -> PulseTimingReport {
        PulseTimingReport(
            writeIndex: read * 4, readIndex: read * 4, sinkMicroseconds: sinkMicroseconds, playing: playing,
            sinceUnderrunBytes: sinceUnderrun * 4, measuredWallNanoseconds: 1000 * second + atMicroseconds * 1000)
    }

    /// The anchor: dry at 210 000, 31 200 frames of silence rendered, the last heard 4.349 ms
    /// after the report; the stream playing again 28 ms later, frame 210 960 then heard 1.706 ms
    /// on.
    static let anchor = report(
        read: 210_000, sinceUnderrun: 31_200, sinkMicroseconds: 4_349, playing: false, atMicroseconds: 5_019_760)
    static let playing = report(
        read: 210_960, sinceUnderrun: 960, sinkMicroseconds: 1_706, playing: true, atMicroseconds: 5_047_803)

    @Test func theSilenceTheServerCountedAndTheFramesItDroppedAreMeasuredToTheFrame() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000)
        measure.take(Self.anchor, frameBytes: Self.frameBytes, rate: 48000)
        #expect(measure.awaitsPlay && measure.takeLostFrames() == nil)
        // A report of the stream not yet playing again (after the server's rewind) is passed over.
        measure.take(
            Self.report(
                read: 210_000, sinceUnderrun: 31_680, sinkMicroseconds: 2, playing: false, atMicroseconds: 5_031_000),
            frameBytes: Self.frameBytes, rate: 48000)
        measure.take(Self.playing, frameBytes: Self.frameBytes, rate: 48000)
        // 210 000 + 31 200 + 48 × (5 049.509 − 5 024.109 ms) = 242 419, heard as 210 960: the
        // 31 459 frames the recording showed.
        #expect(measure.takeLostFrames() == 31_459)
        #expect(measure.takeLostFrames() == nil && !measure.isMeasuring)
    }

    @Test func anAnchorTakenAfterTheServerMovedOnGivesTheMeasureUp() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000)
        // Already playing again: the silence it counted is gone from the report.
        measure.take(Self.playing, frameBytes: Self.frameBytes, rate: 48000)
        #expect(!measure.isMeasuring)
        measure.take(Self.playing, frameBytes: Self.frameBytes, rate: 48000)
        #expect(measure.takeLostFrames() == nil)
    }

    @Test func anUnderrunWithoutItsIndexIsNotMeasured() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: -1)
        measure.take(Self.anchor, frameBytes: Self.frameBytes, rate: 48000)
        #expect(!measure.isMeasuring && measure.takeLostFrames() == nil)
    }
}
