import ArgumentParser
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit
import GongPractice
import GongTerminal

struct BellsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bells",
        abstract: "Ring mindfulness bells through the day until stopped.",
        discussion: """
            gong bells runs in the foreground (--install makes it a systemd user service). Bells \
            are due by the wall clock in the local time zone. A time the clocks spring forward \
            over rings when the gap ends; one they fall back over rings once. A bell missed while \
            the machine slept, or jumped over when the clock was set, is skipped and said, never \
            rung late. Between bells gong holds no device and sleeps on one timer; it opens the \
            device a few seconds before each bell and rings it as a one-cue session.

            Every flag has a key of the same name in a [bells] section of config.toml (at is a \
            list; max, seed and gain are numbers); flags override the file key by key.

            Examples:
              gong bells --every 45m --active 09:00-18:00 --quiet 12:00-13:00
              gong bells --at 08:00,12:30,17:00 --days mon-fri --sound chime --gain -6
              gong bells --random 20m-60m --max 12 --seed 7
            """)

    @Option(help: ArgumentHelp("A bell every so often from the start of the active hours, e.g. 45m.", valueName: "GAP"))
    var every: String?

    @Option(help: ArgumentHelp("Bells at these times of day, e.g. 08:00,12:30.", valueName: "TIMES"))
    var at: String?

    @Option(help: ArgumentHelp("Gaps drawn between a least and a most, e.g. 20m-60m.", valueName: "LEAST-MOST"))
    var random: String?

    @Option(help: ArgumentHelp("When bells may ring, e.g. 09:00-18:00 (default: all day).", valueName: "SPAN"))
    var active: String?

    @Option(help: ArgumentHelp("Which days, e.g. mon-fri or sat,sun (default: every day).", valueName: "DAYS"))
    var days: String?

    @Option(help: ArgumentHelp("No bells then, e.g. 12:00-13:00 or 12:00-13:00,22:00-07:00.", valueName: "SPANS"))
    var quiet: String?

    @Option(help: ArgumentHelp("At most this many bells planned a day.", valueName: "COUNT"))
    var max: String?

    @Option(help: ArgumentHelp("Random gaps repeat for the same seed (default: one drawn and said).", valueName: "N"))
    var seed: String?

    @Option(
        help: ArgumentHelp("The bell's sound: a name from gong sounds, or a file (default: bowl).", valueName: "SOUND"))
    var sound: String?

    @Option(help: ArgumentHelp("The bell's gain in dB, from -60 to 12 (default: 0).", valueName: "DB"))
    var gain: String?

    @Option(
        help: ArgumentHelp(
            "A short practice after each bell: breathe 3 breaths, or a pattern such as box 2 cycles.",
            valueName: "PRACTICE"))
    var then: String?

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp("Playback device, as for gong run (default: the config's, else auto).", valueName: "NAME"))
    var deviceFlag: String?

    @Option(help: ArgumentHelp("Output latency in milliseconds (default: the route's).", valueName: "MS"))
    var latency: Double?

    @Flag(help: "Print every bell and its session's events as one JSON object per line (for tools).")
    var json = false

    @OptionGroup var volume: VolumeOption

    @Flag(
        help: ArgumentHelp(
            "Write a systemd user unit that runs gong bells with these flags, and enable and start it.",
            discussion:
                "The unit goes to $XDG_CONFIG_HOME/systemd/user/gong-bells.service; journalctl --user -u gong-bells shows its lines."
        ))
    var install = false

    @Flag(help: "Stop, disable and remove the unit --install wrote.")
    var uninstall = false

    /// How long before its second a bell's device is opened: two seconds for the process to start
    /// and the device to open (the open time is in each bell's JSON line; bench/RESULTS.md has
    /// the figures), then the cue's warm-up.
    static let leadNanoseconds: Int64 = 4_000_000_000
    /// How far ahead a bell must still be when gong wakes for it, or it is skipped as late: the
    /// warm-up and half a second to open the device (a sound server's stream opens in a tenth of
    /// that: bench/RESULTS.md, "Bells through the day"). Rung any later it would be heard late,
    /// and a bell is never rung late.
    static let readyNanoseconds: Int64 = Int64(warmUpSeconds.doubleValue * 1e9) + 500_000_000
    /// Silence the one-cue session plays before the bell, so the cue is scheduled ahead of the
    /// device rather than raced onto it, and is not yet rendered when the device first says when
    /// its frames are heard (the bell is lined up then): longer than any route's buffer, with room
    /// for a stream whose first frame is heard late (`RingBellCommand.movableSeconds`; one
    /// second, half of it the buffer, once rang a PipeWire bell late: bench/RESULTS.md).
    static let warmUpSeconds = Rational(2, 1)!
    /// How long a bell sounds before a practice after it (`--then`) begins.
    static let practiceAfterSeconds = Rational(4, 1)!

    /// Synchronous on purpose: the waiting process never starts a Swift task or a Dispatch queue
    /// (see `BellRinger`); each bell is rung by a process of its own.
    func run() throws {
        do {
            try ringAll()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }

    /// The flags as rules; each bad value is one line naming its flag (exit 65, as a bad key is).
    func flagRules() throws(GongError) -> (rules: BellRules, keys: Set<BellRules.Key>) {
        let given: [(BellRules.Key, String?)] = [
            (.every, every), (.at, at), (.random, random), (.active, active), (.days, days), (.quiet, quiet),
            (.max, max), (.seed, seed), (.sound, sound), (.gain, gain), (.then, then)
        ]
        var rules = BellRules()
        var keys = Set<BellRules.Key>()
        for case (let key, let text?) in given {
            do { try rules.set(key, text) } catch {
                throw .pattern(
                    PatternError(
                        location: "\(flag(for: key)) \(text)", problem: error.problem, allowed: error.allowed,
                        remedy: error.remedy))
            }
            keys.insert(key)
        }
        return (rules, keys)
    }

    private func ringAll() throws {
        if install && uninstall { throw UsageError("bells: --install or --uninstall, not both") }
        if uninstall { return try Self.uninstallUnit() }
        var config = try loadConfig()
        var volume = volume
        volume.adopt(&config)
        try volume.check()
        config.device.override(deviceFlag, from: .flag("--device"))
        if let latency { config.latencyMs.override(.some(latency), from: .flag("--latency")) }
        let flags = try flagRules()
        let rules: BellRules
        do {
            rules = try config.bells.value.overridden(by: flags.rules, keys: flags.keys).checked()
        } catch {
            throw UsageError("bells: \(error.problem); use \(remedy(for: error)), or [bells] in config.toml")
        }
        let seed = rules.seed ?? UInt64.random(in: 0...UInt64(UInt32.max))
        guard let plan = BellPlan(rules: rules, zone: .current, seed: seed) else { return }
        let bank = SoundBank.standard(explicit: nil, extra: config.soundDirectories.value)
        let cue = Cue(rules.sound ?? "bowl", gainDB: rules.gainDB)
        let soundPath: String
        do { soundPath = try bank.resolve(cue.sound, usedBy: "bells") } catch { throw GongError.sound(error) }
        let keeper = BellKeeper(
            plan: plan, start: BellAlarm.clocks(), leadNanoseconds: Self.leadNanoseconds,
            lateToleranceNanoseconds: -Self.readyNanoseconds)
        guard let first = keeper.nextBell else {
            throw UsageError(
                "bells: these rules leave no bell in the next eight days; widen --active, --days or --quiet")
        }
        let practice = try rules.then.map {
            try practicePattern($0, config: config, bank: bank, fromFlag: flags.keys.contains(.then))
        }
        if install { return try Self.installUnit() }
        guard let alarm = BellAlarm() else {
            printError("bells: the kernel refused a timer (timerfd_create): too many open files?")
            throw ExitCode(ExitStatus.unavailable)
        }
        let signals = SignalWatcher()
        defer { signals.uninstall() }
        let ringer = BellRinger(
            soundPath: soundPath, gainDB: cue.gainDB, device: config.device.value, latencyMs: config.latencyMs.value,
            volumeDB: volume.volume, practice: practice, json: json)
        let control = try BellControlSocket()
        say(
            "bells: next at \(first) (\(LocalZone.current.identifier)), seed \(seed); gong ctl at \(control.path); Ctrl-C stops"
        )
        // Bells are kept in the history; one that cannot be opened is said once, and the bells ring on.
        let history: SessionHistory?
        do { history = try openHistory() } catch {
            printError("\(error.description); the bells ring on unrecorded")
            history = nil
        }
        let run = BellsRun(
            command: self, loop: BellsLoop(keeper: keeper), alarm: alarm, signals: signals, control: control,
            ringer: ringer, history: history)
        if run.run() { say("bells: stopped") }
    }

    /// The practice's pattern, found as `gong run` finds one, with its count of cycles and its
    /// sounds as files (the ringing process then needs no bank). A name that is no pattern is
    /// placed at its flag, or at its line of the config file.
    private func practicePattern(_ practice: BellPractice, config: GongConfig, bank: SoundBank, fromFlag: Bool)
        throws(GongError) -> Pattern
    {
        var pattern: Pattern
        do throws(PatternError) {
            pattern = try PatternCatalog(extraDirectories: config.patternDirectories.value)
                .pattern(named: practice.pattern)
            if let cycles = practice.cycles { pattern.length = .cycles(cycles) }
            try pattern.validate()
        } catch {
            var placed = error
            // A bad practice is bad input to the bells, whatever kind the catalog gave it.
            if placed.kind == .unknownPattern { placed.kind = .invalid }
            if fromFlag {
                placed.location = "--then \(then ?? practice.description)"
                placed.value = placed.key == nil ? nil : placed.value
            } else if case .file(let path) = config.bells.source {
                let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
                placed.location = TOMLLines(text).line(of: "bells.then").map { "\(path):\($0)" } ?? path
                if placed.key == nil {
                    placed.key = "bells.then"
                    placed.value = practice.description
                }
            }
            throw .pattern(placed)
        }
        do { return try pattern.withSoundFiles(from: bank) } catch { throw .sound(error) }
    }

    /// Writes the unit with the flags this gong was given (checked above), then enables and starts
    /// it. Without a user manager (a container, no login session) the file stays and it says so.
    static func installUnit() throws {
        let path = BellsUnit.path()
        let executable = RunningExecutable.path()
        let arguments = CommandLine.arguments.dropFirst().drop { $0 != "bells" }.dropFirst().filter {
            $0 != "--install"
        }
        do {
            try FileManager.default.createDirectory(
                atPath: parentDirectory(of: path), withIntermediateDirectories: true)
            try BellsUnit.text(executable: executable, arguments: Array(arguments))
                .write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            printError("\(path): cannot be written (\(fileErrorText(error))); check the directory's permissions")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        print("bells: wrote \(path)")
        for step in [["daemon-reload"], ["enable", "--now", BellsUnit.name]] {
            if let failure = systemctl(step) {
                printError(
                    "systemctl --user \(step.joined(separator: " ")): \(failure); the unit is written, "
                        + "start it with systemctl --user enable --now \(BellsUnit.name) where a user manager runs")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        print("bells: enabled and started \(BellsUnit.name); journalctl --user -u gong-bells shows its lines")
    }

    static func uninstallUnit() throws {
        let path = BellsUnit.path()
        // Stopping and disabling may fail for want of a user manager: the file goes regardless.
        _ = systemctl(["disable", "--now", BellsUnit.name])
        guard FileManager.default.fileExists(atPath: path) else {
            print("bells: no unit at \(path)")
            return
        }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            printError("\(path): cannot be removed (\(fileErrorText(error)))")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        _ = systemctl(["daemon-reload"])
        print("bells: removed \(path)")
    }

    /// Runs `systemctl --user ARGUMENTS`; nil when it succeeded, else what it said.
    private static func systemctl(_ arguments: [String]) -> String? {
        guard let process = try? Subprocess("/usr/bin/env", ["systemctl", "--user"] + arguments, errors: .captured)
        else { return "cannot be run" }
        let said = String(decoding: process.readErrors(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus != 0 else { return nil }
        let line = said.split(separator: "\n").first.map(String.init) ?? "exit \(process.terminationStatus)"
        return line.isEmpty ? "exit \(process.terminationStatus)" : line
    }

    /// A bell as one JSON line: what --json prints and `subscribe`rs are told.
    static func bellLine(_ decision: BellDecision, heard: BellRinger.Heard?) -> String {
        let bell = decision.bell
        var fields: [String: AnyJSON] = [
            "schema": AnyJSON(SessionEvent.schemaVersion), "type": "bell", "bell": .string(bell.description),
            "due": AnyJSON(bell.instant), "number": AnyJSON(bell.number)
        ]
        switch decision.outcome {
        case .ring:
            fields["outcome"] = heard?.failure == nil ? "rung" : "failed"
            fields["openMs"] = heard?.openMs.map(AnyJSON.number)
            fields["offMs"] = heard?.offMs.map(AnyJSON.number)
            fields["failure"] = heard?.failure.map(AnyJSON.string)
        case .skipped(let why):
            fields["outcome"] = "skipped"
            fields["reason"] = .string(why.rawValue)
        }
        return AnyJSON.object(fields).text()
    }

    /// One line a bell: for a person (and journald) or, with --json, for tools.
    func report(_ decision: BellDecision, heard: BellRinger.Heard?) {
        let bell = decision.bell
        if json {
            print(Self.bellLine(decision, heard: heard))
        } else {
            let name = bell.number == 0 ? "bell (gong ctl ring)" : "bell \(bell.number)"
            switch decision.outcome {
            case .ring:
                if let failure = heard?.failure {
                    print("\(name) at \(bell): not rung: \(failure)")
                } else if let off = heard?.offMs {
                    print("\(name) at \(bell): rung, heard \(Figure.fixed(off, 1, signed: true)) ms from its second")
                } else {
                    print("\(name) at \(bell): rung")
                }
            case .skipped(let why):
                print("\(name) at \(bell): skipped: \(Self.words(why))")
            }
        }
        fflush(nil)
    }

    /// User and system CPU time of `who`, in milliseconds (to the microsecond).
    static func cpuMilliseconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(who.rawValue), &usage)
        let microseconds =
            (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + usage.ru_utime.tv_usec
            + usage.ru_stime.tv_usec
        return Double(microseconds) / 1000
    }

    func say(_ line: String) {
        if !json { print(line) }
        fflush(nil)
    }

    private static func words(_ skip: BellSkip) -> String {
        switch skip {
        case .asleep: "the machine was asleep"
        case .clockStepped: "the clock was set forward over it"
        case .late: "gong did not run in time"
        case .paused: "paused"
        case .passed: "passed over"
        }
    }
}
