import GongCore

/// How a live session went, as it ends: what was played, and what can truthfully be said of when
/// its cues were heard. The `finished` event carries it; `GongSession.report()` returns it.
public struct SessionReport: Sendable, Equatable {
    public var pattern: String
    public var rate: Int
    public var plannedSeconds: Double
    /// The session clock at the end, less what was skipped: the ring-out after the planned end
    /// included.
    public var playedSeconds: Double
    public var plannedCycles: Int
    public var cycles: Int
    public var phases: Int
    public var pauses: Int
    public var skips: Int
    public var stoppedEarly: Bool
    public var xruns: Int
    public var lostFrames: Int64
    public var suspends: Int
    public var deviceLosses: Int
    public var cues: Int
    /// The latest any cue started after its scheduled frame (non-zero only after lost audio).
    public var maxCueLatenessFrames: Int64
    public var heard: Heard
    /// Intervals between cues heard in a row, by the device's clock (nil: none was measured).
    public var timing: Timing?
    /// An open sit (`--open`): it lasted until it was stopped, and `plannedSeconds` is what was
    /// sat before the end cue.
    public var open: Bool
    /// The seed of the pattern's random bells (`--seed` sits them again); nil without any.
    public var seed: UInt64?
    /// Why the session ended before its end, when it could not go on (its device never came
    /// back, its audio stopped).
    public var failure: String?

    /// What may be claimed about when the cues were heard: `HeardVerdict`, as data.
    public enum Heard: Sendable, Equatable {
        /// Every interval matched its schedule at the device's rate within 1 ms; the device's
        /// reports varied by `jitterMs`.
        case onFrame(jitterMs: Double)
        /// `count` cues were heard off their frames, the worst by `worstFrames`.
        case offFrame(count: Int, worstFrames: Int64)
        /// The device's reports vary by `jitterMs`, too much to confirm the frame.
        case roughReports(jitterMs: Double)
        /// Audio was lost (see `xruns`, `lostFrames`, `suspends`, `deviceLosses`).
        case audioLost
        /// Rendered on their frames but not confirmed: the device gives no time
        /// (`deviceTimed` false), or too few cues were heard in a row.
        case unconfirmed(deviceTimed: Bool)
    }

    public struct Timing: Sendable, Equatable, Codable {
        public var intervals: Int
        public var maxDeviationMs: Double
        public var meanDeviationMs: Double
        /// How fast the device runs against CLOCK_MONOTONIC, and how far its reports stray from
        /// that rate (nil with fewer than three cues in a row).
        public var deviceClockPPM: Double?
        public var maxJitterMs: Double?
    }

    public var ringOutSeconds: Double { stoppedEarly ? 0 : max(0, playedSeconds - plannedSeconds) }

    init(summary: SessionSummary, timing cueTiming: CueTiming) {
        pattern = summary.patternName
        rate = summary.sampleRate
        plannedSeconds = summary.plannedSeconds
        playedSeconds = summary.playedSeconds
        plannedCycles = summary.plannedCycles
        cycles = summary.cyclesCompleted
        phases = summary.phasesCompleted
        pauses = summary.pauses
        skips = summary.skips
        stoppedEarly = summary.stoppedEarly
        xruns = summary.xruns
        lostFrames = summary.framesLost
        suspends = summary.suspends
        deviceLosses = summary.deviceLosses
        cues = summary.cuesPlayed
        maxCueLatenessFrames = summary.maxCueLatenessFrames
        seed = summary.seed
        open = summary.openEnded
        heard =
            switch HeardVerdict(summary: summary, timing: cueTiming) {
            case .everyCueOnItsFrame(let jitter): .onFrame(jitterMs: jitter * 1000)
            case .offTheirFrames(let count, let worst, _): .offFrame(count: count, worstFrames: worst)
            case .roughReports(let jitter): .roughReports(jitterMs: jitter * 1000)
            case .audioLost: .audioLost
            case .unconfirmed(let deviceTimed): .unconfirmed(deviceTimed: deviceTimed)
            }
        timing =
            cueTiming.intervalsMeasured == 0
            ? nil
            : Timing(
                intervals: cueTiming.intervalsMeasured, maxDeviationMs: cueTiming.maxDeviationSeconds * 1000,
                meanDeviationMs: cueTiming.meanAbsoluteDeviationSeconds * 1000,
                deviceClockPPM: cueTiming.deviceClockPPM,
                maxJitterMs: cueTiming.maxJitterSeconds.map { $0 * 1000 })
    }
}

extension SessionReport: Codable {
    enum Key: String, CodingKey {
        case pattern, rate, plannedSeconds, playedSeconds, plannedCycles, cycles, phases, pauses, skips, stoppedEarly
        case xruns, lostFrames, suspends, deviceLosses, cues, maxCueLatenessFrames
        case heard, jitterMs, cuesOffFrame, worstOffFrames, deviceTimed, timing, failure, seed, open
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(pattern, forKey: .pattern); try c.encode(rate, forKey: .rate)
        try c.encode(plannedSeconds, forKey: .plannedSeconds); try c.encode(playedSeconds, forKey: .playedSeconds)
        try c.encode(plannedCycles, forKey: .plannedCycles); try c.encode(cycles, forKey: .cycles);
        try c.encode(phases, forKey: .phases)
        try c.encode(pauses, forKey: .pauses); try c.encode(skips, forKey: .skips);
        try c.encode(stoppedEarly, forKey: .stoppedEarly)
        try c.encode(xruns, forKey: .xruns); try c.encode(lostFrames, forKey: .lostFrames);
        try c.encode(suspends, forKey: .suspends)
        try c.encode(deviceLosses, forKey: .deviceLosses); try c.encode(cues, forKey: .cues)
        try c.encode(maxCueLatenessFrames, forKey: .maxCueLatenessFrames)
        try c.encodeIfPresent(timing, forKey: .timing)
        try c.encodeIfPresent(failure, forKey: .failure)
        try c.encodeIfPresent(seed, forKey: .seed)
        if open { try c.encode(open, forKey: .open) }
        try c.encode(heard.word, forKey: .heard)
        switch heard {
        case .onFrame(let jitter), .roughReports(let jitter): try c.encode(jitter, forKey: .jitterMs)
        case .offFrame(let count, let worst):
            try c.encode(count, forKey: .cuesOffFrame)
            try c.encode(worst, forKey: .worstOffFrames)
        case .audioLost: break
        case .unconfirmed(let deviceTimed): try c.encode(deviceTimed, forKey: .deviceTimed)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        pattern = try c.decode(String.self, forKey: .pattern); rate = try c.decode(Int.self, forKey: .rate)
        plannedSeconds = try c.decode(Double.self, forKey: .plannedSeconds);
        playedSeconds = try c.decode(Double.self, forKey: .playedSeconds)
        plannedCycles = try c.decode(Int.self, forKey: .plannedCycles); cycles = try c.decode(Int.self, forKey: .cycles)
        phases = try c.decode(Int.self, forKey: .phases); pauses = try c.decode(Int.self, forKey: .pauses)
        skips = try c.decode(Int.self, forKey: .skips); stoppedEarly = try c.decode(Bool.self, forKey: .stoppedEarly)
        xruns = try c.decode(Int.self, forKey: .xruns); lostFrames = try c.decode(Int64.self, forKey: .lostFrames)
        suspends = try c.decode(Int.self, forKey: .suspends);
        deviceLosses = try c.decode(Int.self, forKey: .deviceLosses)
        cues = try c.decode(Int.self, forKey: .cues);
        maxCueLatenessFrames = try c.decode(Int64.self, forKey: .maxCueLatenessFrames)
        timing = try c.decodeIfPresent(Timing.self, forKey: .timing)
        failure = try c.decodeIfPresent(String.self, forKey: .failure)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed)
        open = try c.decodeIfPresent(Bool.self, forKey: .open) ?? false
        let verdict = try c.decode(String.self, forKey: .heard)
        switch verdict {
        case "onFrame": heard = .onFrame(jitterMs: try c.decode(Double.self, forKey: .jitterMs))
        case "offFrame":
            heard = .offFrame(
                count: try c.decode(Int.self, forKey: .cuesOffFrame),
                worstFrames: try c.decode(Int64.self, forKey: .worstOffFrames))
        case "roughReports": heard = .roughReports(jitterMs: try c.decode(Double.self, forKey: .jitterMs))
        case "audioLost": heard = .audioLost
        case "unconfirmed": heard = .unconfirmed(deviceTimed: try c.decode(Bool.self, forKey: .deviceTimed))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .heard, in: c, debugDescription: "unknown verdict \(verdict)")
        }
    }
}

extension SessionReport.Heard {
    /// The verdict's name, as the `finished` event's `heard` and the history give it.
    public var word: String {
        switch self {
        case .onFrame: "onFrame"
        case .offFrame: "offFrame"
        case .roughReports: "roughReports"
        case .audioLost: "audioLost"
        case .unconfirmed: "unconfirmed"
        }
    }
}
