/// The bounds a playable pattern stays within, in one place so that errors, docs and tests agree.
///
/// They are generous for any real practice and tight enough that a typo (`cycles = 1000000000`,
/// `length = "0.0001s"`) becomes a clear error instead of hours of rendering or gigabytes of events.
public enum PatternLimits {
    /// The longest session: a day.
    public static let maxSessionSeconds = Rational(24 * 3600)
    public static let maxCycles = 100_000
    public static let maxPhases = 64
    /// Shorter phases would be inaudible as separate cues.
    public static let minPhaseSeconds = Rational(1, 4)!
    public static let minBellSeconds: Rational = 1
    /// The longest start delay: time to sit down, not a timer for later in the day.
    public static let maxDelaySeconds: Rational = 3600
    /// The longest fade of a bed: long enough for any taste, short enough to finish in a ring-out.
    public static let maxBedFadeSeconds: Rational = 120
    public static let bpmRange: ClosedRange<Double> = 0.5...60
    public static let gainRangeDB: ClosedRange<Double> = -60...12
    public static let maxNameLength = 64

    /// `maxSessionSeconds` as a duration is written ("24h"), for the sentences that name it.
    public static let maxSessionText = "\(Int(maxSessionSeconds.doubleValue) / 3600)h"
    public static let sessionAllowed = "a total length up to \(maxSessionText)"
    public static let cyclesAllowed = "a whole number of cycles from 1 to 100000"
    public static let phaseAllowed = "a duration of at least 0.25s"
    public static let bpmAllowed = "a rate from 0.5 to 60 breaths per minute"
    public static let gainAllowed = "a gain from -60 to 12 dB"
}

extension Pattern {
    /// Checks everything that does not depend on the sound bank; the first problem found is thrown.
    /// The timeline checks what depends on the schedule itself (phase lengths after pacing, session
    /// length).
    public func validate() throws(PatternError) {
        try validateName(name, key: "name")
        try validatePhaseCount()
        try validateSilences()
        if let bed { try Pattern.validate(bed) }
        var seen = Set<String>()
        for (index, phase) in phases.enumerated() {
            let key = "phases[\(index)]"
            try validateName(phase.name, key: "\(key).name")
            guard seen.insert(phase.name).inserted else {
                throw PatternError(
                    key: "\(key).name", value: phase.name, problem: "another phase has this name",
                    allowed: "a unique name for each phase")
            }
            try validateLength(of: phase, key: key)
            if let cue = phase.cue { try Pattern.validate(cue, key: "\(key).cue") }
            if let bell = phase.bell { try validate(bell, key: "\(key).bell") }
        }
        if let startCue { try Pattern.validate(startCue, key: "start") }
        if let endCue { try Pattern.validate(endCue, key: "end") }
        if let pace { try Pattern.validate(pace) }
        try Pattern.validate(length)
    }

    /// A pattern's or a phase's name: something to call it by, short enough for a status line.
    private func validateName(_ name: String, key: String) throws(PatternError) {
        guard !name.isEmpty, name.count <= PatternLimits.maxNameLength else {
            throw PatternError(key: key, value: name, problem: "must be 1 to \(PatternLimits.maxNameLength) characters")
        }
    }

    private func validatePhaseCount() throws(PatternError) {
        guard !phases.isEmpty else {
            throw PatternError(
                key: "phases", problem: "a pattern needs at least one phase",
                allowed: "one or more [[phases]] with a name and a length")
        }
        guard phases.count <= PatternLimits.maxPhases else {
            throw PatternError(
                key: "phases", value: "\(phases.count)", problem: "too many phases",
                allowed: "at most \(PatternLimits.maxPhases)")
        }
    }

    /// The warm-up and the start delay: silence before the session, within its own bounds.
    private func validateSilences() throws(PatternError) {
        guard warmUp >= .zero else {
            throw Pattern.lengthError("warmup", warmUp, "must not be negative", allowed: DurationText.allowed)
        }
        guard warmUp <= PatternLimits.maxSessionSeconds else {
            throw Pattern.lengthError(
                "warmup", warmUp, "is longer than a session may be", allowed: PatternLimits.sessionAllowed)
        }
        if let startDelay, startDelay < .zero || startDelay > PatternLimits.maxDelaySeconds {
            throw Pattern.lengthError(
                "delay", startDelay, "is out of range",
                allowed: "a delay from 0s to \(DurationText.format(PatternLimits.maxDelaySeconds))")
        }
    }

    private static func validate(_ bed: Bed) throws(PatternError) {
        try validate(Cue(bed.sound, gainDB: bed.gainDB), key: "bed")
        for (key, fade) in [("bed.fade_in", bed.fadeIn), ("bed.fade_out", bed.fadeOut)]
        where fade < .zero || fade > PatternLimits.maxBedFadeSeconds {
            throw lengthError(
                key, fade, "is out of range",
                allowed: "a fade from 0s to \(DurationText.format(PatternLimits.maxBedFadeSeconds))")
        }
    }

    /// A phase's length: a positive share of the breath in a paced pattern, else seconds within
    /// a cue's hearing and a session's length.
    private func validateLength(of phase: Phase, key: String) throws(PatternError) {
        let lengthKey = "\(key).length"
        guard phase.length.isPositive else {
            throw Pattern.lengthError(
                lengthKey, phase.length, "must be positive",
                allowed: pace == nil ? PatternLimits.phaseAllowed : "a positive share of the breath")
        }
        guard pace == nil else { return }
        guard phase.length >= PatternLimits.minPhaseSeconds else {
            throw Pattern.lengthError(lengthKey, phase.length, "is too short", allowed: PatternLimits.phaseAllowed)
        }
        guard phase.length <= PatternLimits.maxSessionSeconds else {
            throw Pattern.lengthError(
                lengthKey, phase.length, "is longer than a session may be", allowed: PatternLimits.sessionAllowed)
        }
    }

    /// An interval bell: only where phases have a fixed length, its gaps from 1s to a session.
    private func validate(_ bell: IntervalBell, key: String) throws(PatternError) {
        guard pace == nil else {
            throw PatternError(
                key: key, problem: "interval bells need phases of fixed length",
                allowed: "bells in patterns without a breathing rate")
        }
        // A random bell's shortest gap is `every` in the pattern but `random` in its file.
        let gapKey = bell.isRandom ? "\(key).random" : "\(key).every"
        for gap in [bell.every] + (bell.randomUpTo.map { [$0] } ?? []) {
            guard gap >= PatternLimits.minBellSeconds, gap <= PatternLimits.maxSessionSeconds else {
                throw Pattern.lengthError(
                    gapKey, gap, "is out of range", allowed: "a duration from 1s to \(PatternLimits.maxSessionText)")
            }
        }
        if let longest = bell.randomUpTo, longest < bell.every {
            throw PatternError(
                key: gapKey, value: "\(DurationText.format(bell.every)) to \(DurationText.format(longest))",
                problem: "the shortest gap is longer than the longest",
                allowed: "[shortest, longest], such as [\"3m\", \"8m\"]")
        }
        try Pattern.validate(bell.cue, key: "\(key).cue")
    }

    private static func validate(_ pace: Pace) throws(PatternError) {
        try validate(bpm: pace.from, key: "pace.bpm")
        try validate(bpm: pace.to, key: "pace.to")
        guard pace.rampSeconds >= .zero, pace.rampSeconds <= PatternLimits.maxSessionSeconds else {
            throw Pattern.lengthError(
                "pace.over", pace.rampSeconds, "is out of range",
                allowed: "a ramp up to \(PatternLimits.maxSessionText)")
        }
    }

    private static func validate(_ length: SessionLength) throws(PatternError) {
        switch length {
        case .open:
            break
        case .cycles(let count):
            guard (1...PatternLimits.maxCycles).contains(count) else {
                throw PatternError(
                    key: "cycles", value: "\(count)", problem: "is out of range", allowed: PatternLimits.cyclesAllowed)
            }
        case .duration(let seconds):
            guard seconds.isPositive else {
                throw Pattern.lengthError(
                    "duration", seconds, "must be positive", allowed: PatternLimits.sessionAllowed)
            }
            guard seconds <= PatternLimits.maxSessionSeconds else {
                throw Pattern.lengthError("duration", seconds, "is too long", allowed: PatternLimits.sessionAllowed)
            }
        }
    }

    /// A length in seconds that is out of bounds, written as a person writes a duration.
    private static func lengthError(_ key: String, _ seconds: Rational, _ problem: String, allowed: String)
        -> PatternError
    {
        PatternError(key: key, value: DurationText.format(seconds), problem: problem, allowed: allowed)
    }

    static func validate(_ cue: Cue, key: String) throws(PatternError) {
        guard !cue.sound.isEmpty else {
            throw PatternError(
                key: key, value: "", problem: "names no sound",
                allowed: "a sound name such as gong, or a path to a sound file")
        }
        guard cue.gainDB.isFinite, PatternLimits.gainRangeDB.contains(cue.gainDB) else {
            throw PatternError(
                key: key + ".gain", value: "\(cue.gainDB)", problem: "is out of range",
                allowed: PatternLimits.gainAllowed)
        }
    }

    static func validate(bpm: Rational, key: String) throws(PatternError) {
        guard PatternLimits.bpmRange.contains(bpm.doubleValue) else {
            throw PatternError(
                key: key, value: formatDecimal(bpm), problem: "is out of range", allowed: PatternLimits.bpmAllowed)
        }
    }
}
