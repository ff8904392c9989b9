import GongKit
import Testing

/// Drift and jitter told apart: cues 3 s apart on a device whose clock runs 400 ppm fast, heard
/// with a few tens of microseconds of jitter.
@Suite struct CueTimingTests {
    static let interval: Int64 = 144_000  // 3 s at 48 kHz

    static func timing(ppm: Double, jitter: [Double]) -> CueTiming {
        var timing = CueTiming(sampleRate: 48000)
        let rate = 48000 * (1 + ppm / 1_000_000)
        for offset in jitter {
            timing.record(scheduledFrames: interval, heardSeconds: Double(interval) / rate + offset)
        }
        return timing
    }

    @Test func aFastDeviceClockIsReportedAsDriftAndTheRestAsJitter() throws {
        let jitter = [0.000_020, -0.000_030, 0.000_010, 0, -0.000_020, 0.000_040, -0.000_010, 0.000_005, -0.000_015]
        let timing = Self.timing(ppm: 400, jitter: jitter)
        #expect(timing.intervalsMeasured == 9)
        // Against the nominal rate every interval is about 1.2 ms short.
        #expect(abs(timing.maxDeviationSeconds - 0.001_24) < 0.000_05, "\(timing.maxDeviationSeconds)")
        #expect(abs(timing.meanAbsoluteDeviationSeconds - 0.001_2) < 0.000_05)
        let ppm = try #require(timing.deviceClockPPM)
        #expect(abs(ppm - 400) < 2, "\(ppm)")
        // At the device's own rate only the jitter is left: its largest swing, 40 µs.
        let left = try #require(timing.maxJitterSeconds)
        #expect(abs(left - 0.000_040) < 0.000_001, "\(left)")
    }

    @Test func anExactDeviceHasNoDriftAndNoJitter() throws {
        let timing = Self.timing(ppm: 0, jitter: [0, 0, 0])
        #expect(timing.maxDeviationSeconds < 1e-9)
        #expect(abs(try #require(timing.deviceClockPPM)) < 1e-6)
        #expect(try #require(timing.maxJitterSeconds) < 1e-9)
    }

    @Test func oneIntervalGivesNoRate() {
        let timing = Self.timing(ppm: 400, jitter: [0])
        #expect(timing.intervalsMeasured == 1)
        #expect(timing.deviceClockPPM == nil && timing.maxJitterSeconds == nil)
        #expect(CueTiming(sampleRate: 48000).maxDeviationSeconds == 0)
    }
}
