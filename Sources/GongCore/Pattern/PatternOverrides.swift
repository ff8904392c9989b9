/// The changes a person asks for on the command line, applied on top of any pattern.
///
/// Every override works on every pattern where it means something, and is an error (never
/// silently ignored) where it does not: a breathing rate on `two-phase`, a length for a phase the
/// pattern does not have. Errors name the override as a `Field`; the command line words it as
/// its flag.
public struct PatternOverrides: Sendable, Equatable {
    /// `--set PHASE=DURATION`, in the order given.
    public var phaseLengths: [PhaseLength] = []
    public var cycles: Int?
    public var duration: Rational?
    /// `--bpm R` or `--bpm A->B` with `--ramp`.
    public var pace: Pace?
    /// `--ratio I:E` or one part per phase (`4:7:8`).
    public var ratio: [Rational]?
    /// `--cue TARGET=SOUND`: TARGET is a phase name, `PHASE.bell`, `start` or `end`.
    public var cues: [CueAssignment] = []
    public var warmUp: Rational?
    /// `--delay DURATION`: silence before the start cue.
    public var startDelay: Rational?
    /// `--bed SOUND`: a bed under the session (`none` removes the pattern's).
    public var bed: String?
    /// `--bed-gain DB`: the bed's own gain.
    public var bedGainDB: Double?
    /// `--open`: cycles repeat until the person stops the session.
    public var open = false
    /// `--seed N`: the draw of random bells, to sit the same random sit again.
    public var seed: UInt64?

    public struct PhaseLength: Sendable, Equatable {
        public var phase: String
        public var seconds: Rational
        public init(phase: String, seconds: Rational) { self.phase = phase; self.seconds = seconds }
    }

    public struct CueAssignment: Sendable, Equatable {
        public var target: String
        public var sound: String
        public init(target: String, sound: String) { self.target = target; self.sound = sound }
    }

    public init() {}

    public var isEmpty: Bool { self == PatternOverrides() }

    /// Each kind of override, for errors to say which one was wrong.
    public enum Field: String, Sendable, CaseIterable, CustomStringConvertible {
        case phaseLength, cycles, duration, pace, ramp, ratio, warmUp, cue, seed, open, delay, bed
        /// The phases as a whole: their lengths, ratio or pace together.
        case phases
        /// More than one, or none in particular.
        case overrides

        public var description: String {
            switch self {
            case .phaseLength: "phase length"
            case .pace: "breathing rate"
            case .warmUp: "warm-up"
            default: rawValue
            }
        }

        /// The override that sets a pattern key, for errors the validated result reports by key.
        static func setting(key: String?) -> Field {
            guard let key else { return .overrides }
            if key.hasPrefix("duration") || key == "length" { return .duration }
            if key.hasPrefix("cycles") { return .cycles }
            if key.hasPrefix("pace") { return .pace }
            if key.hasPrefix("warmup") { return .warmUp }
            if key == "delay" { return .delay }
            if key.hasPrefix("bed") { return .bed }
            if key.hasPrefix("phases") { return .phases }
            if key.hasPrefix("start") || key.hasPrefix("end") { return .cue }
            return .overrides
        }
    }
}

extension Pattern {
    /// This pattern with `overrides` applied, validated. Throws naming the override that cannot apply.
    public func applying(_ overrides: PatternOverrides) throws(PatternError) -> Pattern {
        var pattern = self
        for assignment in overrides.phaseLengths {
            try pattern.setLength(of: assignment.phase, to: assignment.seconds)
        }
        if let ratio = overrides.ratio { try pattern.applyRatio(ratio) }
        if let pace = overrides.pace {
            guard pattern.isBreathing else {
                throw PatternError(
                    override: .pace, value: pace.description, problem: "\(name) is not a breathing pattern",
                    allowed: "a breathing pattern such as box, 4-7-8, resonant or coherent")
            }
            pattern.convertToShares()
            pattern.pace = pace
        }
        if let cycles = overrides.cycles {
            guard overrides.duration == nil else {
                throw PatternError(
                    override: .cycles, value: "\(cycles)", problem: "cannot be combined with a duration",
                    allowed: "a number of cycles or a duration, not both")
            }
            pattern.length = .cycles(cycles)
        }
        if let duration = overrides.duration { pattern.length = .duration(duration) }
        if overrides.open {
            guard overrides.cycles == nil, overrides.duration == nil else {
                throw PatternError(
                    override: .open, problem: "an open sit has no number of cycles or duration", remedy: .openAlone)
            }
            pattern.length = .open
        }
        if let warmUp = overrides.warmUp { pattern.warmUp = warmUp }
        if let startDelay = overrides.startDelay { pattern.startDelay = startDelay }
        if let sound = overrides.bed {
            pattern.bed = sound == "none" ? nil : Bed(sound, gainDB: pattern.bed?.gainDB ?? Bed.defaultGainDB)
        }
        if let gain = overrides.bedGainDB {
            guard pattern.bed != nil else {
                throw PatternError(
                    override: .bed, value: formatDecibels(gain) + " dB", problem: "\(name) has no bed",
                    remedy: .bedWithGain)
            }
            pattern.bed?.gainDB = gain
        }
        for assignment in overrides.cues { try pattern.assignCue(assignment) }
        if let seed = overrides.seed, !pattern.hasRandomBells {
            throw PatternError(
                override: .seed, value: "\(seed)", problem: "\(name) has no random bells",
                allowed: "a pattern with bell = { random = [\"3m\", \"8m\"] }")
        }
        pattern = pattern.seeded(overrides.seed)
        do {
            try pattern.validate()
            // Lengths that only the schedule can check (a duration shorter than one breath).
            _ = try Timeline(pattern: pattern, sampleRate: Timeline.defaultSampleRate)
        } catch {
            // The pattern itself was valid, so an override made it invalid: name which.
            throw overrides.isEmpty ? error : error.caused(by: .setting(key: error.key))
        }
        return pattern
    }

    private mutating func phaseIndex(_ name: String, for field: PatternOverrides.Field) throws(PatternError) -> Int {
        guard let index = phases.firstIndex(where: { $0.name == name }) else {
            throw PatternError(
                override: field, value: name, problem: "\(self.name) has no phase of that name",
                allowed: "one of " + phases.map(\.name).joined(separator: ", "))
        }
        return index
    }

    private mutating func setLength(of phaseName: String, to seconds: Rational) throws(PatternError) {
        let index = try phaseIndex(phaseName, for: .phaseLength)
        guard seconds >= PatternLimits.minPhaseSeconds, seconds <= PatternLimits.maxSessionSeconds else {
            throw PatternError(
                override: .phaseLength, key: phaseName, value: DurationText.format(seconds), problem: "is out of range",
                allowed: "a duration from 0.25s to \(PatternLimits.maxSessionText)")
        }
        if let pace {
            guard !pace.isRamp else {
                throw PatternError(
                    override: .phaseLength, key: phaseName,
                    problem: "\(name)'s breathing rate ramps, so its phases have no fixed length",
                    allowed: "a ratio to change proportions, or a constant breathing rate")
            }
            convertToSeconds(bpm: pace.from)
        }
        phases[index].length = seconds
    }

    /// `--ratio` sets proportions; the breath keeps its length unless `--bpm` changes it too.
    private mutating func applyRatio(_ parts: [Rational]) throws(PatternError) {
        let text = parts.map(formatDecimal).joined(separator: ":")
        guard isBreathing else {
            throw PatternError(
                override: .ratio, value: text, problem: "\(name) is not a breathing pattern",
                allowed: "a breathing pattern such as box, 4-7-8, resonant or coherent")
        }
        guard parts.allSatisfy(\.isPositive) else {
            throw PatternError(
                override: .ratio, value: text, problem: "every part must be positive",
                allowed: "a ratio such as 4:6 or 4:7:8")
        }
        let breathSeconds = pace == nil ? phases.reduce(Rational.zero) { $0.adding($1.length) ?? $0 } : nil
        convertToShares()
        if parts.count == phases.count {
            for index in phases.indices { phases[index].length = parts[index] }
        } else if parts.count == 2,
            let inhale = phases.firstIndex(where: { $0.motion == .inhale }),
            let exhale = phases.firstIndex(where: { $0.motion == .exhale })
        {
            // Holds keep their share, in the same units as the breath before the change.
            phases[inhale].length = parts[0]
            phases[exhale].length = parts[1]
        } else {
            throw PatternError(
                override: .ratio, value: text,
                problem: "\(name) has \(phases.count) phases (\(phases.map(\.name).joined(separator: ", ")))",
                allowed: "inhale:exhale, or one part per phase")
        }
        if let breathSeconds, let bpm = Rational(60).divided(by: breathSeconds) {
            pace = Pace(bpm: bpm)
        }
    }

    /// Paced patterns measure phases in shares; a seconds pattern becomes one whose shares are its
    /// seconds, at the rate that keeps its breath the same length.
    mutating func convertToShares() {
        guard pace == nil else { return }
        let total = phases.reduce(Rational.zero) { $0.adding($1.length) ?? $0 }
        if let bpm = Rational(60).divided(by: total) { pace = Pace(bpm: bpm) }
    }

    private mutating func convertToSeconds(bpm: Rational) {
        let totalShares = phases.reduce(Rational.zero) { $0.adding($1.length) ?? $0 }
        guard let breath = Rational(60).divided(by: bpm) else { return }
        for index in phases.indices {
            if let seconds = phases[index].length.divided(by: totalShares)?.multiplied(by: breath) {
                phases[index].length = seconds
            }
        }
        pace = nil
    }

    private mutating func assignCue(_ assignment: PatternOverrides.CueAssignment) throws(PatternError) {
        let gainOf = { (cue: Cue?) in cue?.gainDB ?? 0 }
        switch assignment.target {
        case "start": startCue = Cue(assignment.sound, gainDB: gainOf(startCue))
        case "end": endCue = Cue(assignment.sound, gainDB: gainOf(endCue))
        case let target where target.hasSuffix(".bell"):
            let index = try phaseIndex(String(target.dropLast(5)), for: .cue)
            guard let bell = phases[index].bell else {
                throw PatternError(
                    override: .cue, value: target, problem: "phase \(phases[index].name) has no interval bell",
                    allowed: "a phase, PHASE.bell of a phase with a bell, start or end")
            }
            phases[index].bell = IntervalBell(every: bell.every, cue: Cue(assignment.sound, gainDB: bell.cue.gainDB))
        default:
            let index = try phaseIndex(assignment.target, for: .cue)
            phases[index].cue = Cue(assignment.sound, gainDB: gainOf(phases[index].cue))
        }
    }
}

/// Parsers for the compact forms used on the command line and in pattern files.
public enum PatternText {
    /// `4:6`, `4:7:8`, `1:1` — 2 to 64 positive decimals.
    public static func ratio(_ text: String) throws(PatternError) -> [Rational] {
        let pieces = text.split(separator: ":", omittingEmptySubsequences: false)
        let parts = pieces.compactMap { DurationText.decimal(String($0).trimmingSpaces()) }
        guard pieces.count >= 2, parts.count == pieces.count, parts.allSatisfy(\.isPositive) else {
            throw PatternError(
                value: text, problem: "not a ratio",
                allowed: "positive numbers separated by colons, such as 4:6 or 4:7:8")
        }
        return parts
    }

    /// `5.5` or `6->4.5` breaths per minute; a ramp needs `rampSeconds`.
    public static func pace(_ text: String, rampSeconds: Rational?) throws(PatternError) -> Pace {
        let ends = text.split(separator: "->", omittingEmptySubsequences: false)
        let rates = ends.compactMap { DurationText.decimal(String($0).trimmingSpaces()) }
        guard (1...2).contains(ends.count), rates.count == ends.count else {
            throw PatternError(
                value: text, problem: "not a breathing rate",
                allowed: "breaths per minute such as 5.5, or a ramp such as '6->4.5'")
        }
        for rate in rates { try Pattern.validate(bpm: rate, key: "bpm") }
        if rates.count == 1 || rates[0] == rates[1] { return Pace(bpm: rates[0]) }
        guard let rampSeconds, rampSeconds.isPositive else {
            throw PatternError(
                value: text, problem: "a ramping rate needs to know how long the ramp takes",
                allowed: "a ramp length as well, such as 10m")
        }
        return Pace(from: rates[0], to: rates[1], over: rampSeconds)
    }

    /// `PHASE=DURATION`, a phase's length.
    public static func phaseLength(_ text: String) throws(PatternError) -> PatternOverrides.PhaseLength {
        let pieces = text.split(separator: "=", maxSplits: 1)
        guard pieces.count == 2 else {
            throw PatternError(
                value: text, problem: "not PHASE=DURATION", allowed: "PHASE=DURATION, such as meditation=20m")
        }
        let valueText = String(pieces[1])
        guard let seconds = DurationText.seconds(valueText) else {
            throw PatternError(
                key: String(pieces[0]), value: valueText, problem: "not a duration", allowed: DurationText.allowed)
        }
        return .init(phase: String(pieces[0]), seconds: seconds)
    }

    /// `TARGET=SOUND`, a cue's sound.
    public static func cueAssignment(_ text: String) throws(PatternError) -> PatternOverrides.CueAssignment {
        let pieces = text.split(separator: "=", maxSplits: 1)
        guard pieces.count == 2, !pieces[1].isEmpty else {
            throw PatternError(
                value: text, problem: "not TARGET=SOUND",
                allowed: "TARGET=SOUND, such as meditation=bowl or end=~/sounds/bell.wav")
        }
        return .init(target: String(pieces[0]), sound: String(pieces[1]))
    }
}
