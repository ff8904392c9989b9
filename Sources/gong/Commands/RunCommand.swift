import ArgumentParser
import GongCore
import GongKit
import GongPractice

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a session live on an audio device.",
        discussion: """
            Keys: space pause/resume, s skip the phase, q stop (the end cue rings out). Ctrl-C \
            stops the same way; a second Ctrl-C stops at once. Ctrl-Z pauses; after fg the \
            session stays paused until you resume it. Without a terminal, one line per event.

            --open repeats the cycles until you stop (q, gong ctl stop, Ctrl-C), then the end \
            cue plays; the history keeps what you sat. --delay counts down before the start cue. \
            --bed loops a sound under the session (fading in, and out from the end cue).

            Examples:
              gong run two-phase
              gong run two-phase --set meditation=20m --device pulse
              gong run interval --set bell=10m --duration 1h --quiet
              gong run interval --open --delay 30s --bed brown-noise --bed-gain=-20
            """)

    @Argument(
        help:
            "A built-in pattern (gong patterns list), a name from ~/.config/gong/patterns, or a .toml file (default: the config's pattern, else two-phase)."
    )
    var pattern: String?

    @OptionGroup var live: LiveOptions
    @OptionGroup var patternOptions: PatternOptions
    @OptionGroup var volume: VolumeOption

    func run() async throws {
        try await exiting {
            let settings = try PlaySettings(live: live, volume: volume)
            let config = settings.config
            return try await LivePlayer.play(
                try patternOptions.resolvePattern(pattern ?? config.pattern.value, config: config),
                options: settings.live, bank: patternOptions.soundBank(config), volume: settings.volume,
                parameters: patternOptions.given, boundary: config.dayStartsAt.value)
        }
    }
}
