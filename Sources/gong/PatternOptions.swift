import ArgumentParser
import FoundationEssentials
import GongCore
import GongKit
import GongPractice

/// The overrides every pattern takes, shared by every command that plays or shows a pattern.
struct PatternOptions: ParsableArguments {
    @Option(
        name: .customLong("set"),
        help: ArgumentHelp("Set a phase's length, e.g. --set meditation=20m (repeatable).", valueName: "PHASE=DURATION")
    )
    var phaseLengths: [String] = []

    @Option(help: ArgumentHelp("Number of cycles (1-100000).", valueName: "N"))
    var cycles: Int?

    @Option(help: ArgumentHelp("Total length: whole cycles that fit, e.g. 10m or 1h30m.", valueName: "DURATION"))
    var duration: String?

    @Option(help: ArgumentHelp("Breaths per minute, e.g. 5.5, or a ramp '6->4.5' (with --ramp).", valueName: "RATE"))
    var bpm: String?

    @Option(help: ArgumentHelp("How long a --bpm ramp takes (default: the whole --duration).", valueName: "DURATION"))
    var ramp: String?

    @Option(help: ArgumentHelp("Breath proportions: inhale:exhale, or one part per phase (4:7:8).", valueName: "I:E"))
    var ratio: String?

    @Option(help: ArgumentHelp("Silence before the first phase, e.g. 10s.", valueName: "DURATION"))
    var warmup: String?

    @Option(
        name: .customLong("cue"),
        help: ArgumentHelp(
            "Play another sound or file: a phase, PHASE.bell, start or end (repeatable).", valueName: "TARGET=SOUND"))
    var cues: [String] = []

    @Option(
        help: ArgumentHelp(
            "Wait this long before the start cue, counting down on the terminal, e.g. 30s.", valueName: "DURATION"))
    var delay: String?

    @Option(
        help: ArgumentHelp(
            "Loop a sound under the session: brown-noise, a file of your own, or none.", valueName: "SOUND"))
    var bed: String?

    @Option(
        name: .customLong("bed-gain"),
        help: ArgumentHelp("The bed's gain, -60 to 12 dB (default: -18).", valueName: "DB"))
    var bedGain: Double?

    @Flag(help: "Repeat the cycles until you stop (q, gong ctl stop, Ctrl-C); then the end cue.")
    var open = false

    @Option(
        help: ArgumentHelp(
            "Draw a pattern's random bells from this seed (the summary prints the one drawn otherwise).",
            valueName: "N"))
    var seed: UInt64?

    @Option(help: ArgumentHelp("Directory of sounds searched before the built-in bank.", valueName: "DIR"))
    var sounds: String?

    /// Turns the flags into overrides; each bad value names its override, which `describe` words
    /// as the flag.
    func overrides() throws(PatternError) -> PatternOverrides {
        var overrides = PatternOverrides()
        for text in phaseLengths {
            do { overrides.phaseLengths.append(try PatternText.phaseLength(text)) } catch {
                throw error.caused(by: .phaseLength)
            }
        }
        if let cycles {
            guard (1...PatternLimits.maxCycles).contains(cycles) else {
                throw PatternError(
                    override: .cycles, value: "\(cycles)", problem: "out of range", allowed: PatternLimits.cyclesAllowed
                )
            }
            overrides.cycles = cycles
        }
        if let duration { overrides.duration = try Self.duration(duration, for: .duration) }
        let rampSeconds =
            try ramp.map { text throws(PatternError) in try Self.duration(text, for: .ramp) } ?? overrides.duration
        if let bpm {
            do { overrides.pace = try PatternText.pace(bpm, rampSeconds: rampSeconds) } catch {
                throw error.caused(by: .pace)
            }
        } else if ramp != nil {
            throw PatternError(
                override: .ramp, value: ramp, problem: "only applies to a ramping --bpm",
                allowed: "--bpm '6->4.5' --ramp 10m")
        }
        if let ratio {
            do { overrides.ratio = try PatternText.ratio(ratio) } catch { throw error.caused(by: .ratio) }
        }
        if let warmup { overrides.warmUp = try Self.duration(warmup, for: .warmUp, allowZero: true) }
        overrides.seed = seed
        overrides.open = open
        overrides.bed = bed
        overrides.bedGainDB = bedGain
        if let delay { overrides.startDelay = try Self.duration(delay, for: .delay, allowZero: true) }
        for text in cues {
            do { overrides.cues.append(try PatternText.cueAssignment(text)) } catch { throw error.caused(by: .cue) }
        }
        return overrides
    }

    /// Looks the pattern up and applies the overrides. A problem with the pattern itself is
    /// the pattern's (`GongError`); one with what the flags make of it is the command line's.
    func resolvePattern(_ reference: String, config: GongConfig) throws -> Pattern {
        let pattern: Pattern
        do {
            pattern = try PatternCatalog(extraDirectories: config.patternDirectories.value).pattern(named: reference)
        } catch {
            throw GongError.pattern(error)
        }
        do {
            return try pattern.applying(overrides())
        } catch {
            throw UsageError(describe(error))
        }
    }

    /// The overrides as they were given, for the history: `--set meditation=20m --cycles 3`.
    var given: String {
        var words: [String] = []
        func add(_ flag: String, _ value: String?) { if let value { words.append("\(flag) \(value)") } }
        for text in phaseLengths { add("--set", text) }
        add("--cycles", cycles.map(String.init))
        add("--duration", duration)
        add("--bpm", bpm)
        add("--ramp", ramp)
        add("--ratio", ratio)
        add("--warmup", warmup)
        for text in cues { add("--cue", text) }
        add("--seed", seed.map(String.init))
        if open { words.append("--open") }
        add("--delay", delay)
        add("--bed", bed)
        add("--bed-gain", bedGain.map { "\($0)" })
        return words.joined(separator: " ")
    }

    func soundBank(_ config: GongConfig) -> SoundBank {
        SoundBank.standard(explicit: sounds, extra: config.soundDirectories.value)
    }

    static func duration(_ text: String, for field: PatternOverrides.Field, allowZero: Bool = false)
        throws(PatternError) -> Rational
    {
        guard let seconds = DurationText.seconds(text) else {
            throw PatternError(
                override: field, value: text, problem: text.hasPrefix("-") ? "must be positive" : "not a duration",
                allowed: DurationText.allowed)
        }
        guard allowZero || seconds.isPositive else {
            throw PatternError(override: field, value: text, problem: "must be positive", allowed: DurationText.allowed)
        }
        return seconds
    }
}

/// Master volume, shared by render and live playback.
struct VolumeOption: ParsableArguments {
    @Option(
        name: .customLong("volume"),
        help: ArgumentHelp(
            "Master volume in dB, from -60 to 12 (the output never clips; default: the config's, else 0).",
            valueName: "DB"))
    var volumeFlag: Double?

    var volume: Double { volumeFlag ?? 0 }

    /// Takes the config's volume where no flag gave one.
    mutating func adopt(_ config: inout GongConfig) {
        config.volumeDB.override(volumeFlag, from: .flag("--volume"))
        volumeFlag = config.volumeDB.value
    }

    func check() throws(GongError) {
        do { try SessionLimits.check(gainDB: volume) } catch { throw .setting(error) }
    }
}
