import ArgumentParser
import GongKit

@main
struct Gong: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gong",
        abstract: "Frame-exact gongs and breathing cues for meditation.",
        discussion: """
            Every cue starts on the exact audio frame its phase begins on: the audio clock is the \
            session clock. Patterns are built in (gong patterns list) or TOML files of your own.

            Examples:
              gong breathe box --cycles 2
              gong run two-phase --set meditation=20m --device pulse
              gong render two-phase --set meditation=20m --set reflection=5m -o sit.flac
              gong patterns show resonant
              gong history --since 7d

            \(exitStatuses)
            """,
        version: GongVersion.description,
        subcommands: [
            RunCommand.self, BreatheCommand.self, BellsCommand.self, ResumeCommand.self, RenderCommand.self,
            CtlCommand.self, RingBellCommand.self, RemoteCommand.self,
            HistoryCommand.self, BenchCommand.self,
            StatsCommand.self, ConfigCommand.self, PatternsCommand.self, SoundsCommand.self, DevicesCommand.self
        ]
    )

    /// ArgumentParser's own entry point, less its hop to the global executor before parsing. A
    /// command whose `run` is synchronous (`gong bells`) then runs on the main thread, and the
    /// process never starts libdispatch's worker pool, whose one-second timer would wake it for
    /// the rest of its life; every other command runs as before.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// The exit statuses (sysexits.h), listed from ExitStatus so the page and the code agree;
    /// `gong --help` and the man page (generated from this text) both show them.
    static let exitStatuses = """
        Exit status:
          0   done: the session finished, or was stopped (q, Ctrl-C)
          \(ExitStatus.usage)  the command line is wrong (an unknown pattern, an option out of range)
          \(ExitStatus.dataError)  a pattern, sound or history file is wrong
          \(ExitStatus.noInput)  a file to read is missing, or no sound bank was found
          \(ExitStatus.unavailable)  the audio device or a tool a benchmark needs cannot be used
          \(ExitStatus.software)  a bug in gong (please report it with its message)
          \(ExitStatus.cannotCreate)  an output file or the control socket cannot be created
          \(ExitStatus.temporaryFailure)  the history is locked by another gong: try again
          \(ExitStatus.interrupted) gong bench was interrupted with Ctrl-C
        """
}
