import ArgumentParser
import Foundation
import GongCore
import GongKit

/// sysexits.h: the exit status says what kind of problem it was.
enum ExitStatus {
    static let usage: Int32 = 64        // EX_USAGE: the command line is wrong
    static let dataError: Int32 = 65    // EX_DATAERR: a pattern or sound is wrong
    static let noInput: Int32 = 66      // EX_NOINPUT: a file to read is missing or unreadable
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE: the audio device cannot be used
    static let software: Int32 = 70     // EX_SOFTWARE: a bug
    static let cannotCreate: Int32 = 73 // EX_CANTCREAT: the output cannot be created
}

/// Prints one line to standard error and exits with the status that fits: never a stack trace.
func fail(_ error: GongError) -> ExitCode {
    printError(error.description)
    switch error {
    case .pattern(let patternError):
        if patternError.problem == "file not found" || patternError.problem == "permission denied" { return ExitCode(ExitStatus.noInput) }
        let fromCommandLine = patternError.location?.hasPrefix("--") == true || patternError.problem == "no such pattern"
        return ExitCode(fromCommandLine ? ExitStatus.usage : ExitStatus.dataError)
    case .sound(let soundError):
        return ExitCode(soundError.message.contains("not found") ? ExitStatus.noInput : ExitStatus.dataError)
    case .soundFile:
        return ExitCode(ExitStatus.dataError)
    case .output:
        return ExitCode(ExitStatus.cannotCreate)
    case .usage:
        return ExitCode(ExitStatus.usage)
    case .device:
        return ExitCode(ExitStatus.unavailable)
    case .internalError:
        return ExitCode(ExitStatus.software)
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data(("gong: " + message + "\n").utf8))
}
