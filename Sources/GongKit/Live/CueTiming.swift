/// How exactly cues were heard, measured from the device's own timestamps: for consecutive cues
/// with no pause, skip or underrun between them, the heard interval (CLOCK_MONOTONIC) against
/// the scheduled one (frames ÷ rate).
///
/// Two things are told apart. A device's clock runs at its own rate — a sound card's crystal is
/// off by tens of ppm, PulseAudio's null sink here by a few hundred — so frame-exact cues drift
/// against the system's clock by that much, evenly. What is left once that rate is allowed for
/// is jitter: cues landing unevenly. Both are worth knowing, and neither hides the other.
public struct CueTiming: Sendable, Equatable {
    public let sampleRate: Int
    private var scheduledFrames: [Int64] = []
    private var heardSeconds: [Double] = []

    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
    }

    /// One interval between consecutive cues: `scheduledFrames` apart, heard `heardSeconds` apart.
    public mutating func record(scheduledFrames frames: Int64, heardSeconds heard: Double) {
        scheduledFrames.append(frames)
        heardSeconds.append(heard)
    }

    public var intervalsMeasured: Int { scheduledFrames.count }

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
        let heard = heardSeconds.reduce(0, +)
        guard intervalsMeasured >= 2, heard > 0 else { return nil }
        return Double(scheduledFrames.reduce(0, +)) / heard
    }

    private func deviations(rate: Double) -> [Double] {
        zip(scheduledFrames, heardSeconds).map { abs($1 - Double($0) / rate) }
    }
}
