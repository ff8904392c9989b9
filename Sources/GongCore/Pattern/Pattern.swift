/// A sound played at an instant of the session: a name from the sound bank (`gong`, `bowl`, …)
/// or a path to a sound file of the person's own, with a gain relative to the sound's level.
public struct Cue: Hashable, Sendable, Codable, CustomStringConvertible {
    public var sound: String
    public var gainDB: Double

    public init(_ sound: String, gainDB: Double = 0) {
        self.sound = sound
        self.gainDB = gainDB
    }

    /// A cue names a file when it looks like a path; otherwise it names a sound in the bank.
    public var isFile: Bool {
        sound.contains("/") || sound.hasPrefix("~") || sound.contains(".")
    }

    public var description: String {
        gainDB == 0 ? sound : "\(sound) (\(gainDB > 0 ? "+" : "")\(formatDecibels(gainDB)) dB)"
    }
}

/// A sound looped under the whole session (`brown-noise` from the bank, or a file), faded in
/// from the first frame and out from the end cue, at its own gain. It never moves a cue: cues
/// are scheduled on their frames whatever plays under them.
public struct Bed: Hashable, Sendable, Codable {
    public var sound: String
    public var gainDB: Double
    public var fadeIn: Rational
    public var fadeOut: Rational

    /// Quiet enough to sit under the bells, and slow fades, unless the pattern says otherwise.
    public static let defaultGainDB = -18.0
    public static let defaultFadeIn: Rational = 10
    public static let defaultFadeOut: Rational = 20

    public init(
        _ sound: String, gainDB: Double = Bed.defaultGainDB, fadeIn: Rational = Bed.defaultFadeIn,
        fadeOut: Rational = Bed.defaultFadeOut
    ) {
        self.sound = sound
        self.gainDB = gainDB
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
    }
}

/// Which way the breath moves during a phase; drives the breathing bar and nothing else.
public enum BreathMotion: String, Hashable, Sendable, CaseIterable, Codable {
    case inhale, hold, exhale, still
}

/// A bell repeated inside a phase: it rings every `every` seconds after the phase begins, as long
/// as it falls before the phase ends (a bell on the boundary belongs to the next phase).
///
/// A random bell (`randomUpTo` set) waits a fresh gap before each ring instead, drawn between
/// `every` and `randomUpTo` from the pattern's `seed`, so a seed replays the same sit.
public struct IntervalBell: Hashable, Sendable, Codable {
    /// The gap before each ring; for a random bell, the shortest.
    public var every: Rational
    /// The longest gap of a random bell; nil for a fixed interval. (Optional so snapshots written
    /// before random bells existed still read.)
    public var randomUpTo: Rational?
    public var cue: Cue

    public init(every: Rational, cue: Cue) {
        self.every = every
        self.cue = cue
    }

    public init(randomFrom shortest: Rational, upTo longest: Rational, cue: Cue) {
        every = shortest
        randomUpTo = longest
        self.cue = cue
    }

    public var isRandom: Bool { randomUpTo != nil }

    /// The bell in words, as `patterns show` and the summary put it.
    public var spacing: String {
        guard let randomUpTo else { return "every \(DurationText.format(every))" }
        return "at random every \(DurationText.format(every)) to \(DurationText.format(randomUpTo))"
    }
}

/// One named stretch of a cycle.
public struct Phase: Hashable, Sendable, Codable {
    public var name: String
    /// Seconds — or, in a paced pattern, this phase's share of one breath (`4:6` → 4 and 6).
    public var length: Rational
    /// Played on the phase's first frame.
    public var cue: Cue?
    public var bell: IntervalBell?
    public var motion: BreathMotion

    public init(
        _ name: String, length: Rational, cue: Cue? = nil, bell: IntervalBell? = nil, motion: BreathMotion = .still
    ) {
        self.name = name
        self.length = length
        self.cue = cue
        self.bell = bell
        self.motion = motion
    }
}

/// A breathing rate in breaths per minute, constant or ramping linearly from `from` to `to`
/// over `rampSeconds` (and holding `to` afterwards).
public struct Pace: Hashable, Sendable, Codable, CustomStringConvertible {
    public var from: Rational
    public var to: Rational
    public var rampSeconds: Rational

    public init(bpm: Rational) {
        from = bpm
        to = bpm
        rampSeconds = .zero
    }

    public init(from: Rational, to: Rational, over seconds: Rational) {
        self.from = from
        self.to = to
        rampSeconds = from == to ? .zero : seconds
    }

    public var isRamp: Bool { from != to && rampSeconds.isPositive }

    public var description: String {
        isRamp
            ? "\(formatDecimal(from)) -> \(formatDecimal(to)) breaths/min over \(DurationText.format(rampSeconds))"
            : "\(formatDecimal(from)) breaths/min"
    }
}

/// How long the session runs: a number of cycles, or whole cycles that fit in a duration — or
/// open, until the person stops it.
public enum SessionLength: Hashable, Sendable, Codable {
    case cycles(Int)
    case duration(Rational)
    /// Cycles repeat until a stop, then the end cue plays; a stop is how it ends, not early.
    /// The timeline lays them out up front for the longest a session may run
    /// (`PatternLimits.maxSessionSeconds`, which also ends a sit nobody stopped), cutting the
    /// last phase to fit when one cycle is longer: a phase written `length = "open"` is one
    /// that long, so its interval bells ring until the stop.
    case open
}

/// A session's shape: named phases repeated for a number of cycles, with cues at phase starts,
/// interval bells, a silent warm-up and start and end cues.
///
/// A pattern is a plain description; `Pattern.validate()` says whether it can be played and
/// `Timeline(pattern:…)` turns it into frames.
public struct Pattern: Hashable, Sendable, Codable {
    public var name: String
    public var summary: String
    /// Silence between the start cue (at frame 0) and the first phase.
    public var warmUp: Rational
    public var startCue: Cue?
    public var phases: [Phase]
    public var length: SessionLength
    /// Set for paced breathing: phase lengths are then shares of one breath at this rate.
    public var pace: Pace?
    /// Played when the last cycle ends; the session ends once it has rung out.
    public var endCue: Cue?
    /// Silence before everything, the start cue included (`--delay`): time to sit down, counted
    /// down on the terminal. On the session's clock (every frame after it moves by exactly
    /// this), but not part of the time sat. Optional so older snapshots still read.
    public var startDelay: Rational?
    /// Looped under the session; nil for none.
    public var bed: Bed?
    /// Draws the gaps of random bells. Fixed before a session plays (`applying(_:)` draws one
    /// when none was asked for) and kept with the pattern, so a snapshot resumes the same bells.
    public var seed: UInt64?

    public init(
        name: String, summary: String = "", warmUp: Rational = .zero, startCue: Cue? = nil,
        phases: [Phase], length: SessionLength = .cycles(1), pace: Pace? = nil, endCue: Cue? = nil
    ) {
        self.name = name
        self.summary = summary
        self.warmUp = warmUp
        self.startCue = startCue
        self.phases = phases
        self.length = length
        self.pace = pace
        self.endCue = endCue
    }

    /// Breathing patterns have inhale/exhale phases; only they take `--bpm` and `--ratio`.
    public var isBreathing: Bool {
        pace != nil || phases.contains { $0.motion == .inhale || $0.motion == .exhale }
    }

    public var hasRandomBells: Bool { phases.contains { $0.bell?.isRandom == true } }

    /// This pattern with the seed of its random bells fixed: `seed`, else the one it has, else
    /// one drawn now — the one place a seed is drawn. From then on it plays the same bells
    /// wherever it goes (a render, a snapshot resumed). Nine digits at most: short enough to
    /// type back as `--seed`, and exact in every JSON reader. A pattern without random bells
    /// keeps no seed.
    public func seeded(_ seed: UInt64? = nil) -> Pattern {
        var pattern = self
        pattern.seed = hasRandomBells ? seed ?? self.seed ?? .random(in: 0..<1_000_000_000) : nil
        return pattern
    }

    /// Every cue the pattern can play, in a stable order (start, phases, bells, end).
    public var allCues: [Cue] {
        var cues: [Cue] = []
        if let startCue { cues.append(startCue) }
        for phase in phases {
            if let cue = phase.cue { cues.append(cue) }
            if let bell = phase.bell { cues.append(bell.cue) }
        }
        if let endCue { cues.append(endCue) }
        return cues
    }
}

func formatDecimal(_ value: Rational) -> String {
    if value.denominator == 1 { return "\(value.numerator)" }
    let scaled = (value.doubleValue * 1000).rounded() / 1000
    var text = "\(scaled)"
    while text.hasSuffix("0") { text.removeLast() }
    if text.hasSuffix(".") { text.removeLast() }
    return text
}

func formatDecibels(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return rounded == rounded.rounded() ? "\(Int(rounded))" : "\(rounded)"
}
