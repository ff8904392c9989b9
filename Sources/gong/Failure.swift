import ArgumentParser
import FoundationEssentials
import Glibc
import GongBench
import GongCore
import GongKit
import GongPractice

/// sysexits.h: the exit status says what kind of problem it was.
enum ExitStatus {
    static let usage: Int32 = 64  // EX_USAGE: the command line is wrong
    static let dataError: Int32 = 65  // EX_DATAERR: a pattern or sound is wrong
    static let noInput: Int32 = 66  // EX_NOINPUT: a file to read is missing or unreadable
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the audio device cannot be used
    static let software: Int32 = 70  // EX_SOFTWARE: a bug
    static let cannotCreate: Int32 = 73  // EX_CANTCREAT: the output cannot be created
    static let temporaryFailure: Int32 = 75  // EX_TEMPFAIL: try again later (the history is locked)
    static let interrupted: Int32 = 130  // not sysexits: 128 + SIGINT, as a shell reports Ctrl-C
}

/// Something wrong with the command line itself, in its own words (`--rate 7: …`).
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A file the command was given to read cannot be read.
struct UnreadableFile: Error {
    var path: String
}

/// A file a flag names for the command to write cannot be written.
struct UnwritableFile: Error {
    var flag: String
    var path: String
}

/// The flag each of GongKit's settings is given with.
func flag(for setting: SettingError.Setting) -> String {
    switch setting {
    case .rate: "--rate"
    case .channels: "--channels"
    case .latency: "--latency"
    case .period: "--period"
    case .format: "--format"
    case .gain: "--volume"
    case .block: "--block"
    case .start: "position"
    }
}

/// The flag each pattern override is given with.
func flag(for override: PatternOverrides.Field) -> String {
    switch override {
    case .phaseLength: "--set"
    case .cycles: "--cycles"
    case .duration: "--duration"
    case .pace: "--bpm"
    case .ramp: "--ramp"
    case .ratio: "--ratio"
    case .warmUp: "--warmup"
    case .cue: "--cue"
    case .seed: "--seed"
    case .open: "--open"
    case .delay: "--delay"
    case .bed: "--bed/--bed-gain"
    case .phases: "--set/--ratio/--bpm"
    case .overrides: "overrides"
    }
}

/// A pattern error in the command line's words: an override is named by its flag, and so are
/// the overrides that would do.
func describe(_ error: PatternError) -> String {
    var worded = error
    if worded.location == nil, let override = worded.override { worded.location = flag(for: override) }
    if let remedy = worded.remedy { worded.allowed = flags(for: remedy) }
    return worded.description
}

/// The flags that would do, in a sentence.
func flags(for remedy: PatternError.Remedy) -> String {
    switch remedy {
    case .openAlone: "\(flag(for: .open)) alone: it lasts until you stop it"
    case .bedWithGain: "--bed brown-noise (or a file) with --bed-gain"
    case .cyclesOrDuration: "a number of cycles or a duration (\(flag(for: .cycles)), \(flag(for: .duration)))"
    case .soundOfTheBank: "\(remedy) (gong sounds)"
    }
}

/// The flag that sets each key of `[bells]`: the key's own name.
func flag(for key: BellRules.Key) -> String { "--" + key.rawValue }

/// What would make the bell rules do, in the command line's words: flags with a value each
/// (`--every 45m, --at 08:00,12:30 or --random 20m-60m`) for keys that are missing.
func remedy(for problem: BellRuleProblem) -> String {
    if let remedy = problem.remedy { return flags(for: remedy) }
    let given = problem.missing.map { "\(flag(for: $0)) \(sampleValue(for: $0))" }
    guard let last = given.last else { return problem.allowed }
    return given.count == 1 ? last : given.dropLast().joined(separator: ", ") + " or " + last
}

/// A value each bell flag takes, as a person types it.
private func sampleValue(for key: BellRules.Key) -> String {
    switch key {
    case .every: "45m"
    case .at: "08:00,12:30"
    case .random: "20m-60m"
    case .active: "09:00-18:00"
    case .days: "mon-fri"
    case .quiet: "12:00-13:00"
    case .max: "12"
    case .seed: "7"
    case .sound: "bowl"
    case .gain: "-6"
    case .then: "\"breathe 3 breaths\""
    }
}

/// A sound the bank does not have, in the command line's words: with no bank at all, the flag
/// that gives one.
func describe(_ error: SoundBankError) -> String {
    error.description + (error.kind == .unknownSound && error.available.isEmpty ? "; pass --sounds DIR" : "")
}

/// A directory of the sound bank's search path with why it was searched: `/usr/share/gong/sounds
/// ($XDG_DATA_DIRS)`.
func describe(_ place: SoundBank.Place) -> String {
    let why =
        switch place.origin {
        case .given: "--sounds"
        case .environment: "GONG_SOUNDS"
        case .config: "the config's sounds"
        case .user: "your own"
        case .installed: "installed beside gong"
        case .dataDirs: "$XDG_DATA_DIRS"
        case .sourceTree: "the source tree gong was built from"
        }
    return "\(place.path) (\(why))"
}

/// A history CSV that cannot be read; a wrong header is named by the command that writes a right one.
func describe(_ error: HistoryCSVError) -> String {
    var worded = error
    if error.expectedColumns != nil { worded.allowed = "the columns gong history --csv writes" }
    return worded.description
}

/// Runs a command whose body ends with an exit status: an error becomes one line and the status
/// that fits (`fail`), a status other than 0 the command's exit code.
func exiting(_ body: () async throws -> Int32) async throws {
    let status: Int32
    do {
        status = try await body()
    } catch {
        throw fail(error)
    }
    if status != 0 { throw ExitCode(status) }
}

/// Prints one line to standard error and exits with the status that fits: never a stack trace.
/// The status comes from what kind of error it is, never from its words.
func fail(_ error: any Error) -> ExitCode {
    switch error {
    case let usage as UsageError:
        printError(usage.message)
        return ExitCode(ExitStatus.usage)
    case let gong as GongError:
        return fail(gong)
    case let unreadable as UnreadableFile:
        printError("\(unreadable.path): cannot be read; use a readable file")
        return ExitCode(ExitStatus.noInput)
    case let unwritable as UnwritableFile:
        printError("\(unwritable.flag) \(unwritable.path): cannot be written; use a writable path")
        return ExitCode(ExitStatus.cannotCreate)
    case let history as HistoryError:
        printError(history.description)
        switch history.kind {
        case .locked: return ExitCode(ExitStatus.temporaryFailure)
        case .cannotCreate: return ExitCode(ExitStatus.cannotCreate)
        case .damaged, .newerVersion: return ExitCode(ExitStatus.dataError)
        }
    case let csv as HistoryCSVError:
        printError(describe(csv))
        return ExitCode(ExitStatus.dataError)
    case let socket as ControlSocketError:
        // The session's socket could not be made (--control socket) or reached (gong ctl).
        printError(socket.description)
        return ExitCode(socket.operation == "connect" ? ExitStatus.unavailable : ExitStatus.cannotCreate)
    case let bench as BenchError:
        printError(bench.description)
        // Ctrl-C: the shell's status for SIGINT. Else a tool or sound server the benchmark
        // needs is missing or failed.
        return ExitCode(bench.kind == .interrupted ? ExitStatus.interrupted : ExitStatus.unavailable)
    default:
        printError("internal error: \(error) (please report this)")
        return ExitCode(ExitStatus.software)
    }
}

func fail(_ error: GongError) -> ExitCode {
    switch error {
    case .setting(let setting):
        printError("\(flag(for: setting.setting)) \(setting.value): out of range; use \(setting.allowed)")
        return ExitCode(ExitStatus.usage)
    case .pattern(let patternError):
        printError(describe(patternError))
    case .device(let deviceError):
        printError(describe(deviceError))
    case .sound(let soundError):
        printError(describe(soundError))
    default:
        printError(error.description)
    }
    switch error {
    case .pattern(let patternError):
        switch patternError.kind {
        case .unreadableFile: return ExitCode(ExitStatus.noInput)
        case .unknownPattern: return ExitCode(ExitStatus.usage)
        case .invalid: return ExitCode(ExitStatus.dataError)
        }
    case .sound(let soundError):
        return ExitCode(soundError.kind == .fileNotFound ? ExitStatus.noInput : ExitStatus.dataError)
    case .soundFile:
        return ExitCode(ExitStatus.dataError)
    case .output:
        return ExitCode(ExitStatus.cannotCreate)
    case .setting:
        return ExitCode(ExitStatus.usage)
    case .device:
        return ExitCode(ExitStatus.unavailable)
    case .internalError:
        return ExitCode(ExitStatus.software)
    }
}

func printError(_ message: String) {
    writeToStandardError("gong: " + message + "\n")
}

/// Why a file operation of FileManager's failed, in the C library's words (`Permission denied`).
func fileErrorText(_ error: any Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError {
        return String(cString: strerror(posix.code.rawValue))
    }
    return "\(error)"
}

/// Writes `text` to standard error at once, unbuffered.
func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        if written > 0 {
            bytes = bytes.dropFirst(written)
        } else if written < 0 && errno == EINTR {
            continue
        } else {
            return
        }
    }
}
