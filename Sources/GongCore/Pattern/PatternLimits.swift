/// The bounds a playable pattern stays within, in one place so that errors, docs and tests agree.
///
/// They are generous for any real practice and tight enough that a typo (`cycles = 1000000000`,
/// `length = "0.0001s"`) becomes a clear error instead of hours of rendering or gigabytes of events.
public enum PatternLimits {
    /// The longest session: a day.
    public static let maxSessionSeconds: Rational = 86400
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
        guard !name.isEmpty, name.count <= PatternLimits.maxNameLength else {
            throw PatternError(
                key: "name", value: name, problem: "must be 1 to \(PatternLimits.maxNameLength) characters")
        }
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
        guard warmUp >= .zero else {
            throw PatternError(
                key: "warmup", value: DurationText.format(warmUp), problem: "must not be negative",
                allowed: DurationText.allowed)
        }
        guard warmUp <= PatternLimits.maxSessionSeconds else {
            throw PatternError(
                key: "warmup", value: DurationText.format(warmUp), problem: "is longer than a session may be",
                allowed: PatternLimits.sessionAllowed)
        }
        if let startDelay, startDelay < .zero || startDelay > PatternLimits.maxDelaySeconds {
            throw PatternError(
                key: "delay", value: DurationText.format(startDelay), problem: "is out of range",
                allowed: "a delay from 0s to \(DurationText.format(PatternLimits.maxDelaySeconds))")
        }
        if let bed {
            try Pattern.validate(Cue(bed.sound, gainDB: bed.gainDB), key: "bed")
            for (key, fade) in [("bed.fade_in", bed.fadeIn), ("bed.fade_out", bed.fadeOut)]
            where fade < .zero || fade > PatternLimits.maxBedFadeSeconds {
                throw PatternError(
                    key: key, value: DurationText.format(fade), problem: "is out of range",
                    allowed: "a fade from 0s to \(DurationText.format(PatternLimits.maxBedFadeSeconds))")
            }
        }
        var seen = Set<String>()
        for (index, phase) in phases.enumerated() {
            let key = "phases[\(index)]"
            guard !phase.name.isEmpty, phase.name.count <= PatternLimits.maxNameLength else {
                throw PatternError(
                    key: "\(key).name", value: phase.name,
                    problem: "must be 1 to \(PatternLimits.maxNameLength) characters")
            }
            guard seen.insert(phase.name).inserted else {
                throw PatternError(
                    key: "\(key).name", value: phase.name, problem: "another phase has this name",
                    allowed: "a unique name for each phase")
            }
            guard phase.length.isPositive else {
                throw PatternError(
                    key: "\(key).length", value: DurationText.format(phase.length), problem: "must be positive",
                    allowed: pace == nil ? PatternLimits.phaseAllowed : "a positive share of the breath")
            }
            if pace == nil, phase.length < PatternLimits.minPhaseSeconds {
                throw PatternError(
                    key: "\(key).length", value: DurationText.format(phase.length), problem: "is too short",
                    allowed: PatternLimits.phaseAllowed)
            }
            if pace == nil, phase.length > PatternLimits.maxSessionSeconds {
                throw PatternError(
                    key: "\(key).length", value: DurationText.format(phase.length),
                    problem: "is longer than a session may be", allowed: PatternLimits.sessionAllowed)
            }
            if let cue = phase.cue { try Pattern.validate(cue, key: "\(key).cue") }
            if let bell = phase.bell {
                guard pace == nil else {
                    throw PatternError(
                        key: "\(key).bell", problem: "interval bells need phases of fixed length",
                        allowed: "bells in patterns without a breathing rate")
                }
                // A random bell's shortest gap is `every` in the pattern but `random` in its file.
                let gapKey = bell.isRandom ? "\(key).bell.random" : "\(key).bell.every"
                for gap in [bell.every] + (bell.randomUpTo.map { [$0] } ?? []) {
                    guard gap >= PatternLimits.minBellSeconds, gap <= PatternLimits.maxSessionSeconds else {
                        throw PatternError(
                            key: gapKey, value: DurationText.format(gap), problem: "is out of range",
                            allowed: "a duration from 1s to \(PatternLimits.maxSessionText)")
                    }
                }
                if let longest = bell.randomUpTo, longest < bell.every {
                    throw PatternError(
                        key: gapKey, value: "\(DurationText.format(bell.every)) to \(DurationText.format(longest))",
                        problem: "the shortest gap is longer than the longest",
                        allowed: "[shortest, longest], such as [\"3m\", \"8m\"]")
                }
                try Pattern.validate(bell.cue, key: "\(key).bell.cue")
            }
        }
        if let startCue { try Pattern.validate(startCue, key: "start") }
        if let endCue { try Pattern.validate(endCue, key: "end") }
        if let pace {
            try Pattern.validate(bpm: pace.from, key: "pace.bpm")
            try Pattern.validate(bpm: pace.to, key: "pace.to")
            guard pace.rampSeconds >= .zero, pace.rampSeconds <= PatternLimits.maxSessionSeconds else {
                throw PatternError(
                    key: "pace.over", value: DurationText.format(pace.rampSeconds), problem: "is out of range",
                    allowed: "a ramp up to \(PatternLimits.maxSessionText)")
            }
        }
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
                throw PatternError(
                    key: "duration", value: DurationText.format(seconds), problem: "must be positive",
                    allowed: PatternLimits.sessionAllowed)
            }
            guard seconds <= PatternLimits.maxSessionSeconds else {
                throw PatternError(
                    key: "duration", value: DurationText.format(seconds), problem: "is too long",
                    allowed: PatternLimits.sessionAllowed)
            }
        }
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
