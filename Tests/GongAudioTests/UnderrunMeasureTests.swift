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

    /// When the underrun was told (system clock): the anchor was asked for then.
    static let told = 1000 * second + 5_019_000_000

    static func take(_ reports: [PulseTimingReport], into measure: inout UnderrunMeasure) {
        for report in reports { measure.take(report, frameBytes: Self.frameBytes, rate: 48000) }
    }

    /// A report measured `lateBy` microseconds after the server's sink thread answered, as a
    /// main thread woken late on a busy machine stamps it: the same counts, a later moment.
    static func stampedLate(_ report: PulseTimingReport, byMicroseconds lateBy: Int64) -> PulseTimingReport {
        var late = report
        late.measuredWallNanoseconds += lateBy * 1000
        return late
    }

    /// The anchor moved on by `frames` of silence, stamped as many frames' time later.
    static func anchor(movedOn frames: Int64) -> PulseTimingReport {
        var later = anchor
        later.sinceUnderrunBytes += frames * 4
        later.measuredWallNanoseconds += frames * second / 48000
        return later
    }

    @Test func theSilenceTheServerCountedAndTheFramesItDroppedAreMeasuredToTheFrame() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        Self.take([Self.anchor], into: &measure)
        // One anchor of the three wanted: writes are held until the hold is over.
        let heldBefore = measure.holdsWrites(atWallNanoseconds: Self.told + 19_000_000)
        let heldAfter = measure.holdsWrites(atWallNanoseconds: Self.told + 20_000_000)
        #expect(heldBefore && !heldAfter)
        let lostYet = measure.takeLostFrames()
        #expect(measure.awaitsPlay && !measure.wantsMorePlays && lostYet == nil)
        // A report of the stream not yet playing again (after the server's rewind) is passed over.
        Self.take(
            [
                Self.report(
                    read: 210_000, sinceUnderrun: 31_680, sinkMicroseconds: 2, playing: false,
                    atMicroseconds: 5_031_000)
            ], into: &measure)
        Self.take([Self.playing], into: &measure)
        let lostAfterOne = measure.takeLostFrames()
        #expect(measure.wantsMorePlays && lostAfterOne == nil)
        Self.take([Self.playing, Self.playing], into: &measure)
        // 210 000 + 31 200 + 48 × (5 049.509 − 5 024.109 ms) = 242 419, heard as 210 960: the
        // 31 459 frames the recording showed.
        #expect(measure.takeLostFrames() == 31_459)
        #expect(measure.takeLostFrames() == nil && !measure.isMeasuring)
    }

    /// Three anchors end the hold before its time; of them, the one stamped on time anchors
    /// the measure, whichever of the three it is: the others, stamped 3 ms late, would have
    /// measured the loss 144 frames short.
    @Test(arguments: 0..<3) func anAnchorStampedLateIsOutdoneByOneStampedOnTime(onTime: Int) {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        for index in 0..<3 {
            let anchor = Self.anchor(movedOn: Int64(index) * 48)
            Self.take([index == onTime ? anchor : Self.stampedLate(anchor, byMicroseconds: 3_000)], into: &measure)
            let held = measure.holdsWrites(atWallNanoseconds: Self.told + 1_000_000)
            #expect(held == (index < 2))
        }
        Self.take([Self.playing, Self.playing, Self.playing], into: &measure)
        #expect(measure.takeLostFrames() == 31_459)
    }

    /// Of the reports of the stream playing, the one stamped on time measures it: one stamped
    /// 3 ms late alone would have measured the loss 144 frames long.
    @Test func aReportOfTheStreamPlayingStampedLateIsOutdoneByOneStampedOnTime() {
        var late = UnderrunMeasure()
        late.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        Self.take([Self.anchor, Self.anchor, Self.anchor], into: &late)
        let playingLate = Self.stampedLate(Self.playing, byMicroseconds: 3_000)
        Self.take([playingLate, playingLate, playingLate], into: &late)
        let lostLate = late.takeLostFrames()
        #expect(lostLate == 31_603)

        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        Self.take([Self.anchor, Self.anchor, Self.anchor], into: &measure)
        Self.take([playingLate, Self.playing, playingLate], into: &measure)
        #expect(measure.takeLostFrames() == 31_459)
    }

    /// No anchor came during the hold: the answer to the request sent during it, before any
    /// write, anchors the measure when it comes.
    @Test func anAnchorAnsweredAfterTheHoldStillAnchors() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        let held = measure.holdsWrites(atWallNanoseconds: Self.told + 25_000_000)
        #expect(!held && !measure.awaitsPlay)
        Self.take([Self.anchor], into: &measure)
        #expect(measure.awaitsPlay)
        Self.take([Self.playing, Self.playing, Self.playing], into: &measure)
        #expect(measure.takeLostFrames() == 31_459)
    }

    @Test func anAnchorTakenAfterTheServerMovedOnGivesTheMeasureUp() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: 210_000, toldWallNanoseconds: Self.told)
        // Already playing again: the silence it counted is gone from the report.
        Self.take([Self.playing], into: &measure)
        let held = measure.holdsWrites(atWallNanoseconds: Self.told)
        #expect(!measure.isMeasuring && !held)
        Self.take([Self.playing, Self.playing, Self.playing], into: &measure)
        #expect(measure.takeLostFrames() == nil)
    }

    @Test func anUnderrunWithoutItsIndexIsNotMeasured() {
        var measure = UnderrunMeasure()
        measure.begin(underflowFrame: -1, toldWallNanoseconds: Self.told)
        Self.take([Self.anchor], into: &measure)
        let held = measure.holdsWrites(atWallNanoseconds: Self.told)
        let lost = measure.takeLostFrames()
        #expect(!measure.isMeasuring && !held && lost == nil)
    }
}
