import GongCore
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

    /// The allowance is the reports' jitter and 1 000 ppm of the interval: a cue 3 s after the
    /// one before, on reports good to 1 ms, is on its frame up to 4 ms off and no further.
    @Test func theAllowanceIsTheReportsJitterAndAPlausibleDriftOverTheInterval() {
        let allowance = CueTiming.allowanceSeconds(reportJitterSeconds: 0.001, overSeconds: 3)
        #expect(abs(allowance - 0.004) < 1e-12, "\(allowance)")
        var timing = CueTiming(sampleRate: 48000)
        let within = timing.record(scheduledFrames: Self.interval, heardSeconds: 3 + 0.0039)
        let beyond = timing.record(scheduledFrames: Self.interval, heardSeconds: 3 + 0.0041)
        #expect(within == nil && beyond != nil, "\(String(describing: within)) \(String(describing: beyond))")
    }

    /// A cue heard 768 frames (16 ms) late — PipeWire played a stretch without our audio and
    /// said nothing — is reported with how far off it was, and the summary may not claim every
    /// cue on its frame; the device's drift alone is not taken for that.
    @Test func aCueHeard768FramesLateIsReportedAndTheSummaryDoesNotClaimOnFrame() {
        var timing = CueTiming(sampleRate: 48000)
        let rate = 48000 * (1 + 400 / 1_000_000.0)
        var offs: [Int64?] = []
        for index in 0..<9 {
            let late = index == 4 ? 768.0 / 48000 : 0
            offs.append(
                timing.record(scheduledFrames: Self.interval, heardSeconds: Double(Self.interval) / rate + late))
        }
        #expect(
            offs.enumerated().allSatisfy { $0.offset == 4 ? abs(($0.element ?? 0) - 768) < 10 : $0.element == nil },
            "\(offs)")
        #expect(timing.cuesOffTheirFrames == 1)
        let summary = SessionSummary(
            patternName: "ticks", sampleRate: 48000, plannedFrames: 10 * Self.interval, plannedCycles: 10)
        guard case .offTheirFrames(let count, let worst, _) = HeardVerdict(summary: summary, timing: timing) else {
            Issue.record("the verdict must say cues were heard off their frames")
            return
        }
        #expect(count == 1 && abs(worst - 768) < 10)
    }

    /// What the summary may say, case by case: on its frame only with no audio lost and every
    /// interval within the tolerance at the device's rate; an implausible device clock is audio
    /// lost unreported; no timing at all confirms nothing.
    @Test func theVerdictClaimsOnlyWhatTheTimingShows() {
        var summary = SessionSummary(
            patternName: "ticks", sampleRate: 48000, plannedFrames: 10 * Self.interval, plannedCycles: 10)
        let steady = Self.timing(ppm: 400, jitter: [0.000_020, -0.000_030, 0.000_010])
        #expect(
            HeardVerdict(summary: summary, timing: steady)
                == .everyCueOnItsFrame(jitterSeconds: steady.maxJitterSeconds ?? -1))
        #expect(
            HeardVerdict(summary: summary, timing: CueTiming(sampleRate: 48000)) == .unconfirmed(deviceTimed: false))
        var placedApart = CueTiming(sampleRate: 48000)
        placedApart.cuePlaced()
        placedApart.cuePlaced()
        #expect(
            HeardVerdict(summary: summary, timing: placedApart) == .unconfirmed(deviceTimed: true),
            "two cues placed with a skip between")
        let rough = Self.timing(ppm: 0, jitter: [0.002, -0.0025, 0.0015, -0.002])
        if case .roughReports = HeardVerdict(summary: summary, timing: rough) {
        } else {
            Issue.record("rough reports confirm no frame")
        }
        // pipewire-pulse's reports, however closely they agree, speak of the graph's last cycle.
        var unconfirming = CueTiming(sampleRate: 48000, confirmsFrames: false)
        for offset in [0.000_020, -0.000_030, 0.000_010] {
            unconfirming.record(scheduledFrames: Self.interval, heardSeconds: Double(Self.interval) / 48000 + offset)
        }
        #expect(
            HeardVerdict(summary: summary, timing: unconfirming)
                == .roughReports(jitterSeconds: unconfirming.maxJitterSeconds ?? -1))
        // Intervals 1.5 ms long each: within the per-interval bound, but −1 500 ppm is no device.
        let slow = Self.timing(ppm: -1500, jitter: [0, 0, 0, 0])
        if case .offTheirFrames(_, _, let ppm) = HeardVerdict(summary: summary, timing: slow) {
            #expect(abs((ppm ?? 0) + 1500) < 5)
        } else {
            Issue.record("an implausible device clock means audio lost unreported")
        }
        summary.xruns = 1
        summary.framesLost = 512
        #expect(
            HeardVerdict(summary: summary, timing: steady)
                == .audioLost(xruns: 1, frames: 512, suspends: 0, deviceLosses: 0))
    }

    /// Through ALSA's plugin, whose reports may be 30 ms apart, a cue 5.7 ms off its place by
    /// the reports is no evidence: the recording had it exact. 16 ms is still too much for
    /// gong's own client (8 ms).
    @Test func aCueIsOffOnlyBeyondWhatTheRoutesReportsCanTell() {
        var plugin = CueTiming(sampleRate: 48000, reportJitterSeconds: 0.030)
        var client = CueTiming(sampleRate: 48000, reportJitterSeconds: 0.008)
        for index in 0..<6 {
            let heard = Double(Self.interval) / 48000 + (index == 5 ? 0.0057 : index == 3 ? 0.016 : 0)
            plugin.record(scheduledFrames: Self.interval, heardSeconds: heard)
            client.record(scheduledFrames: Self.interval, heardSeconds: heard)
        }
        #expect(plugin.cuesOffTheirFrames == 0)
        #expect(client.cuesOffTheirFrames == 1 && abs(client.worstOffFrames - 768) < 5)
    }
}
