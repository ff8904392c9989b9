import GongCore

/// How exactly cues were heard, measured from the device's own timestamps: for consecutive cues
/// with no pause, skip or underrun between them, the heard interval (CLOCK_MONOTONIC) against
/// the scheduled one (frames ÷ rate).
///
/// Two things are told apart. A device's clock runs at its own rate — a sound card's crystal is
/// off by tens of ppm, a sound server's null sink by as much as a few hundred — so frame-exact
/// cues drift against the system's clock by that much, evenly. What is left once that rate is
/// allowed for is jitter: cues landing unevenly. Both are worth knowing, and neither hides the
/// other.
public struct CueTiming: Sendable, Equatable {
    public let sampleRate: Int
    private var scheduledFrames: [Int64] = []
    private var heardSeconds: [Double] = []

    /// How far apart the device's own reports may place a frame: a cue further off than that
    /// (and any plausible drift) was heard off its frame; nearer, the reports cannot tell.
    public let reportJitterSeconds: Double
    /// False when the route's reports cannot confirm a frame however closely they agree
    /// (`PCMConfiguration.confirmsFrames`): the verdict is then at best `roughReports`.
    public let confirmsFrames: Bool

    /// - Parameters:
    ///   - reportJitterSeconds: the route's bound (`PCMConfiguration.reportJitterNanoseconds`);
    ///     at least the tolerance.
    ///   - confirmsFrames: whether the route's reports can confirm a frame.
    public init(sampleRate: Int, reportJitterSeconds: Double = 0, confirmsFrames: Bool = true) {
        self.sampleRate = sampleRate
        self.reportJitterSeconds = max(CueTiming.toleranceSeconds, reportJitterSeconds)
        self.confirmsFrames = confirmsFrames
    }

    /// How far from its frame a cue may be heard and still count as on it: on PulseAudio the
    /// device's own reports place frames within about 0.1 ms of each other on gong's client, and
    /// within 0.7 ms through ALSA's plugin. PipeWire's vary by more (below: `roughReports`).
    public static let toleranceSeconds = 0.001
    /// No real device's clock is this far from its nominal rate (a sound card's crystal is within
    /// about 100 ppm, a null sink's timer a few hundred: bench/RESULTS.md, "gong bench jitter"):
    /// a measured rate beyond it means audio was lost that no report owned up to.
    public static let plausiblePPM = 1000.0

    /// How far from its place a cue heard `seconds` after the one before may be and still be on
    /// its frame as far as the reports can tell: their jitter, and the drift of any plausible
    /// device clock over that time. The one statement of the rule, for `record` and for the
    /// tests that hold gong's verdict to it.
    public static func allowanceSeconds(reportJitterSeconds: Double, overSeconds seconds: Double) -> Double {
        reportJitterSeconds + seconds * plausiblePPM / 1_000_000
    }

    /// One interval between consecutive cues: `scheduledFrames` apart, heard `heardSeconds` apart.
    /// Returns how many frames off its place the later cue was heard when that is more than the
    /// reports' jitter and any plausible drift of the device's clock can explain (through ALSA's
    /// plugin under load, reports 5.5 ms apart put an exactly recorded cue "272 frames off" when
    /// judged by 1 ms); nil when on its frame as far as the reports can tell.
    @discardableResult
    public mutating func record(scheduledFrames frames: Int64, heardSeconds heard: Double) -> Int64? {
        // Off when no plausible drift of the device's clock explains it; how far off, at the
        // device's rate as measured before it (its drift is no fault of the cue's).
        let rate = deviceRate(over: scheduledFrames.count) ?? Double(sampleRate)
        scheduledFrames.append(frames)
        heardSeconds.append(heard)
        let scheduled = Double(frames) / Double(sampleRate)
        guard
            abs(heard - scheduled)
                > Self.allowanceSeconds(reportJitterSeconds: reportJitterSeconds, overSeconds: scheduled)
        else {
            return nil
        }
        let off = Int64(((heard - Double(frames) / rate) * rate).rounded())
        cuesOffTheirFrames += 1
        worstOffFrames = max(worstOffFrames, abs(off))
        return off
    }

    /// Cues heard off their frames by more than the tolerance and plausible drift, and the worst.
    public private(set) var cuesOffTheirFrames = 0
    public private(set) var worstOffFrames: Int64 = 0

    public var intervalsMeasured: Int { scheduledFrames.count }

    /// Cues the device's clock placed, whether or not an interval could be measured to them (a
    /// pause, skip or stop between two cues leaves no interval).
    public private(set) var cuesPlaced = 0

    public mutating func cuePlaced() { cuesPlaced += 1 }

    /// The largest difference between a heard interval and its schedule at the nominal rate.
    public var maxDeviationSeconds: Double { deviations(rate: Double(sampleRate)).max() ?? 0 }

    public var meanAbsoluteDeviationSeconds: Double {
        intervalsMeasured == 0 ? 0 : deviations(rate: Double(sampleRate)).reduce(0, +) / Double(intervalsMeasured)
    }

    /// How fast the device's clock runs against CLOCK_MONOTONIC, in parts per million (positive:
    /// it plays more frames a second than its nominal rate), from every measured interval.
    /// Nil until two intervals are measured.
    public var deviceClockPPM: Double? {
        deviceRate.map { ($0 / Double(sampleRate) - 1) * 1_000_000 }
    }

    /// The largest difference between a heard interval and its schedule at the device's own
    /// measured rate: the jitter. Nil until two intervals are measured.
    public var maxJitterSeconds: Double? {
        deviceRate.map { deviations(rate: $0).max() ?? 0 }
    }

    /// Frames the device plays per second of CLOCK_MONOTONIC, over all measured intervals.
    private var deviceRate: Double? {
        intervalsMeasured >= 2 ? deviceRate(over: intervalsMeasured) : nil
    }

    /// The same over the first `count` intervals; nil without any.
    private func deviceRate(over count: Int) -> Double? {
        let heard = heardSeconds.prefix(count).reduce(0, +)
        guard count >= 1, heard > 0 else { return nil }
        return Double(scheduledFrames.prefix(count).reduce(0, +)) / heard
    }

    private func deviations(rate: Double) -> [Double] {
        zip(scheduledFrames, heardSeconds).map { abs($1 - Double($0) / rate) }
    }
}

/// What can truthfully be said of when a session's cues were heard: the one place that decides
/// whether "every one on its frame" may be claimed.
public enum HeardVerdict: Equatable, Sendable {
    /// Every interval between cues heard in a row matched its schedule at the device's own rate
    /// within the tolerance, and no audio was lost.
    case everyCueOnItsFrame(jitterSeconds: Double)
    /// Some cues were heard off their frames (the worst by `worstFrames`), or the device's clock
    /// ran at a rate no device has: audio was lost unseen.
    case offTheirFrames(count: Int, worstFrames: Int64, deviceClockPPM: Double?)
    /// No cue was heard further off than the device's reports vary, but they vary by more than
    /// the tolerance (PipeWire's: about 2.5 ms on gong's own client, 7 ms through ALSA's plugin),
    /// or the route's reports cannot confirm a frame at all (pipewire-pulse's), so the frame
    /// cannot be confirmed.
    case roughReports(jitterSeconds: Double)
    /// Audio was lost and recovered: cues after each loss stay on schedule; one sounding across
    /// it was cut or heard late.
    case audioLost(xruns: Int, frames: Int64, suspends: Int, deviceLosses: Int)
    /// Rendered on their frames, but the device gave no timing to confirm when they were heard
    /// (ALSA's `null`; `deviceTimed` false), or it did but fewer than two intervals were heard
    /// in a row (a short or stopped session).
    case unconfirmed(deviceTimed: Bool)

    public init(summary: SessionSummary, timing: CueTiming) {
        if summary.xruns > 0 || summary.suspends > 0 || summary.deviceLosses > 0 || summary.maxCueLatenessFrames > 0 {
            self = .audioLost(
                xruns: summary.xruns, frames: summary.framesLost, suspends: summary.suspends,
                deviceLosses: summary.deviceLosses)
        } else if let ppm = timing.deviceClockPPM, abs(ppm) > CueTiming.plausiblePPM {
            self = .offTheirFrames(
                count: timing.cuesOffTheirFrames, worstFrames: timing.worstOffFrames, deviceClockPPM: ppm)
        } else if timing.cuesOffTheirFrames > 0 {
            self = .offTheirFrames(
                count: timing.cuesOffTheirFrames, worstFrames: timing.worstOffFrames,
                deviceClockPPM: timing.deviceClockPPM)
        } else if let jitter = timing.maxJitterSeconds {
            self =
                jitter <= CueTiming.toleranceSeconds && timing.confirmsFrames
                ? .everyCueOnItsFrame(jitterSeconds: jitter) : .roughReports(jitterSeconds: jitter)
        } else {
            self = .unconfirmed(deviceTimed: timing.cuesPlaced > 0)
        }
    }
}
