#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A sound to start: an index into the timeline's sound table and a linear gain.
/// Plain data, so it can cross to the audio thread.
public struct CueTrigger: BitwiseCopyable, Equatable, Sendable {
    public var sound: Int32
    public var gain: Float

    public init(sound: Int32, gain: Float) {
        self.sound = sound
        self.gain = gain
    }
}

/// Something that happens on one frame of the session.
public enum TimelineEventKind: BitwiseCopyable, Equatable, Sendable {
    case phaseBegan(phase: Int32, cycle: Int32)
    case cue(CueTrigger)
    /// The last cycle is over: the end cue (scheduled on the same frame) starts, then tails ring out.
    case sessionEnd
}

public struct TimelineEvent: BitwiseCopyable, Equatable, Sendable {
    public var frame: Int64
    public var kind: TimelineEventKind

    public init(frame: Int64, kind: TimelineEventKind) {
        self.frame = frame
        self.kind = kind
    }
}

/// A pattern laid out on frames at one sample rate: every phase boundary and cue, in order.
///
/// Each frame is `round(rate × t)` of a time `t` measured from the session origin — exactly, as a
/// rational, for fixed and constant-rate patterns; from the closed-form solution of the ramp for
/// ramping rates. No frame is ever derived from the previous one, so nothing accumulates: cue
/// 7 920 of a 24-hour session lands where cue 1 would if it were scheduled alone.
public struct Timeline: Sendable {
    public let pattern: Pattern
    public let sampleRate: Int
    /// In frame order; on one frame: phase begins, then its cues, then the session end.
    public let events: [TimelineEvent]
    /// The sounds cues refer to (`CueTrigger.sound` indexes it): bank names or file paths.
    public let sounds: [String]
    public let cycleCount: Int
    /// The frame the last cycle ends on, where the end cue starts.
    public let plannedEndFrame: Int64
    /// Where this schedule's frame 0 is in the whole session's: 0, or where a `remainder` starts.
    public let origin: Int64
    /// The start delay's frames still ahead at this schedule's frame 0: the silence before the
    /// start cue, which is not time sat.
    public let startDelayFrames: Int64
    /// Every phase's first frame in the whole session (a remainder keeps them all, so a phase it
    /// begins part way through still has its whole length).
    private let phaseStarts: [Int64]

    /// The rates a session (and a sound file) may have, and the one used unless another is asked
    /// for: what devices and sound servers run at by default.
    public static let sampleRates: ClosedRange<Int> = 8000...384_000
    public static let defaultSampleRate = 48000
    /// `sampleRates` in words, for errors and help.
    public static let sampleRatesAllowed = "\(sampleRates.lowerBound) to \(sampleRates.upperBound) Hz"

    public init(pattern: Pattern, sampleRate: Int) throws(PatternError) {
        guard Timeline.sampleRates.contains(sampleRate) else {
            throw PatternError(
                key: "rate", value: "\(sampleRate)", problem: "unsupported sample rate",
                allowed: Timeline.sampleRatesAllowed)
        }
        try pattern.validate()
        let laidOut = pattern.laidOut
        let clock = try BoundaryClock(laidOut)
        let cycles = try clock.cycleCount(pattern.length)
        let end = try clock.time(cycle: cycles, phase: 0)
        guard end.seconds <= PatternLimits.maxSessionSeconds.doubleValue + 1e-9 else {
            throw PatternError(
                key: "length", value: DurationText.format(seconds: end.seconds),
                problem: "the session would be too long",
                allowed: PatternLimits.sessionAllowed)
        }

        var sounds: [String] = []
        func trigger(_ cue: Cue) -> TimelineEventKind {
            let index =
                sounds.firstIndex(of: cue.sound)
                ?? {
                    sounds.append(cue.sound); return sounds.count - 1
                }()
            return .cue(CueTrigger(sound: Int32(index), gain: decibelsToGain(cue.gainDB)))
        }

        var events: [TimelineEvent] = []
        // One draw through the whole session, in time order: the seed decides every random bell.
        var draw = BellDraw(seed: pattern.seed ?? 0)
        let delayFrames = (pattern.startDelay ?? .zero).frame(atRate: sampleRate)
        if let startCue = pattern.startCue { events.append(TimelineEvent(frame: delayFrames, kind: trigger(startCue))) }
        for cycle in 0..<cycles {
            for (index, phase) in laidOut.phases.enumerated() {
                let begins = try clock.time(cycle: cycle, phase: index)
                let beginFrame = begins.frame(atRate: sampleRate)
                events.append(
                    TimelineEvent(frame: beginFrame, kind: .phaseBegan(phase: Int32(index), cycle: Int32(cycle))))
                if let cue = phase.cue { events.append(TimelineEvent(frame: beginFrame, kind: trigger(cue))) }
                if let bell = phase.bell, case .exact(let start) = begins,
                    case .exact(let ends) = try clock.time(cycle: cycle, phase: index + 1)
                {
                    for at in Self.rings(of: bell, from: start, to: ends, draw: &draw) {
                        events.append(TimelineEvent(frame: at.frame(atRate: sampleRate), kind: trigger(bell.cue)))
                    }
                }
            }
        }
        let endFrame = end.frame(atRate: sampleRate)
        if let endCue = pattern.endCue { events.append(TimelineEvent(frame: endFrame, kind: trigger(endCue))) }
        events.append(TimelineEvent(frame: endFrame, kind: .sessionEnd))

        self.pattern = pattern
        self.sampleRate = sampleRate
        self.events = events
        self.sounds = sounds
        self.cycleCount = cycles
        self.plannedEndFrame = endFrame
        startDelayFrames = delayFrames
        origin = 0
        phaseStarts = events.compactMap { event in
            guard case .phaseBegan = event.kind else { return nil }
            return event.frame
        }
    }

    /// When a phase's bell rings between the phase's start and its end, exactly: every so often, or
    /// at gaps drawn from `draw`, each ring's time the exact sum of the gaps so far (rounded once,
    /// by the caller).
    private static func rings(of bell: IntervalBell, from start: Rational, to ends: Rational, draw: inout BellDraw)
        -> [Rational]
    {
        var rings: [Rational] = []
        if let longest = bell.randomUpTo {
            var at = start
            while let gap = draw.gap(from: bell.every, upTo: longest), let next = at.adding(gap), next < ends {
                rings.append(next)
                at = next
            }
        } else {
            var ring = 1 as Int64
            while let offset = bell.every.multiplied(by: Rational(ring)), let at = start.adding(offset), at < ends {
                rings.append(at)
                ring += 1
            }
        }
        return rings
    }

    /// Where the phase playing at `frame` begins and ends, in this schedule's frames: the whole
    /// phase as the session has it, so in a session resumed part way through a phase it begins
    /// before 0. Nil before the first phase and from the planned end on.
    public func phaseSpan(containing frame: Int64) -> Range<Int64>? {
        phase(at: frame)?.span
    }

    /// The phase playing at `frame` (0-based, in its cycle), its cycle (0-based) and its whole
    /// span (as `phaseSpan`): where a session stands, from its frame alone. Nil before the first
    /// phase and from the planned end on.
    public func phase(at frame: Int64) -> (phase: Int, cycle: Int, span: Range<Int64>)? {
        let whole = frame + origin
        guard whole < plannedEndFrame + origin, !pattern.phases.isEmpty else { return nil }
        // The last phase start at or before `whole`, by bisection: a day of breathing has tens of
        // thousands of phases.
        var low = 0, high = phaseStarts.count
        while low < high {
            let middle = (low + high) / 2
            if phaseStarts[middle] <= whole { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let end = low < phaseStarts.count ? phaseStarts[low] : plannedEndFrame + origin
        // Phases begin cycle by cycle, each cycle's in pattern order.
        let index = low - 1
        return (
            index % pattern.phases.count, index / pattern.phases.count, (phaseStarts[index] - origin)..<(end - origin)
        )
    }

    /// Phase starts in order, for displays and tests.
    public var phaseBoundaries: [(frame: Int64, phase: Int, cycle: Int)] {
        events.compactMap { event in
            guard case .phaseBegan(let phase, let cycle) = event.kind else { return nil }
            return (event.frame, Int(phase), Int(cycle))
        }
    }

    /// Every cue's scheduled onset, in order.
    public var cueOnsets: [(frame: Int64, trigger: CueTrigger)] {
        events.compactMap { event in
            guard case .cue(let trigger) = event.kind else { return nil }
            return (event.frame, trigger)
        }
    }

    public var plannedSeconds: Double { Double(plannedEndFrame) / Double(sampleRate) }

    /// What is left of this schedule from `frame` on, as a schedule of its own that starts
    /// at 0: what a session resumed there plays. Cues before `frame` were heard and are gone;
    /// the phase playing at `frame` begins at 0, silently unless it begins exactly there. Nil
    /// when nothing is left (`frame` at or past the planned end).
    public func remainder(from frame: Int64) -> Timeline? {
        guard frame > 0 else { return self }
        guard frame < plannedEndFrame else { return nil }
        var rest = events.filter { $0.frame >= frame }.map { TimelineEvent(frame: $0.frame - frame, kind: $0.kind) }
        let current = events.last { event in
            guard event.frame <= frame, case .phaseBegan = event.kind else { return false }
            return true
        }
        if let current, current.frame < frame { rest.insert(TimelineEvent(frame: 0, kind: current.kind), at: 0) }
        return Timeline(
            pattern: pattern, sampleRate: sampleRate, events: rest, sounds: sounds, cycleCount: cycleCount,
            plannedEndFrame: plannedEndFrame - frame, origin: origin + frame,
            startDelayFrames: max(0, startDelayFrames - frame), phaseStarts: phaseStarts)
    }

    private init(
        pattern: Pattern, sampleRate: Int, events: [TimelineEvent], sounds: [String], cycleCount: Int,
        plannedEndFrame: Int64, origin: Int64, startDelayFrames: Int64, phaseStarts: [Int64]
    ) {
        self.origin = origin
        self.startDelayFrames = startDelayFrames
        self.phaseStarts = phaseStarts
        self.pattern = pattern
        self.sampleRate = sampleRate
        self.events = events
        self.sounds = sounds
        self.cycleCount = cycleCount
        self.plannedEndFrame = plannedEndFrame
    }
}

extension Pattern {
    /// The pattern as the timeline lays it out: in an open pattern whose one cycle would outlast
    /// the longest session, the last phase cut to fit — so an open phase's bells are on their
    /// frames up front like any others (the audio thread only reads them), and a stop ends it
    /// where the person chose.
    ///
    /// A start delay is laid out as warm-up the start cue too waits for: every time after it
    /// moves by exactly the delay, still rounded once from the origin.
    var laidOut: Pattern {
        var pattern = self
        if let startDelay, let total = warmUp.adding(startDelay) { pattern.warmUp = total }
        guard length == .open, pace == nil, let last = phases.indices.last else { return pattern }
        let before = phases.dropLast().reduce(pattern.warmUp) {
            $0.adding($1.length) ?? PatternLimits.maxSessionSeconds
        }
        if let room = PatternLimits.maxSessionSeconds.subtracting(before), room.isPositive, room < phases[last].length {
            pattern.phases[last].length = room
        }
        return pattern
    }
}

/// Linear amplitude for a gain in decibels.
public func decibelsToGain(_ decibels: Double) -> Float {
    Float(pow(10, decibels / 20))
}
