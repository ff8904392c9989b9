import GongCore
import Testing

@Suite struct FrameTimeTests {
    /// Where `frames * 1_000_000_000` would trap (past 9.2·10¹⁸), the split arithmetic gives the
    /// exact answer: a day at 384 kHz, a year at 48 kHz, and the round trip back to frames.
    @Test(arguments: [
        (Int64(384_000), Int64(86_400)), (Int64(48_000), Int64(365 * 86_400)), (Int64(44_100), Int64(1_000 * 86_400))
    ])
    func longSessionsConvertExactlyWithoutOverflow(rate: Int64, seconds: Int64) {
        let frames = rate * seconds + rate / 3
        let nanoseconds = FrameTime.nanoseconds(ofFrames: frames, rate: rate)
        #expect(nanoseconds == seconds * 1_000_000_000 + (rate / 3) * 1_000_000_000 / rate)
        #expect(
            FrameTime.frames(inNanoseconds: nanoseconds, rate: rate) == frames - 1
                || FrameTime.frames(inNanoseconds: nanoseconds, rate: rate) == frames)
    }

    /// Small values agree with the single division they replace, negative ones included.
    @Test func smallValuesMatchThePlainDivision() {
        for frames in [Int64(-96_001), -1, 0, 1, 255, 47_999, 48_000, 1_234_567] {
            #expect(FrameTime.nanoseconds(ofFrames: frames, rate: 48_000) == frames * 1_000_000_000 / 48_000)
        }
        for nanoseconds in [Int64(-2_500_000_001), -1, 0, 20_833, 999_999_999, 1_000_000_000, 3_700_000_123] {
            #expect(FrameTime.frames(inNanoseconds: nanoseconds, rate: 44_100) == nanoseconds * 44_100 / 1_000_000_000)
        }
    }
}
