import ArgumentParser

@main
struct Gong: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gong",
        abstract: "Frame-exact gongs and breathing cues for meditation, from the terminal.",
        discussion: """
            Every cue starts on the exact audio frame its phase begins on: the audio clock is the
            session clock. Patterns are built in (gong patterns list) or TOML files of your own.
            """,
        subcommands: [
            RunCommand.self, BreatheCommand.self, ResumeCommand.self, RenderCommand.self, CtlCommand.self,
            HistoryCommand.self, BenchCommand.self,
            StatsCommand.self, ConfigCommand.self, PatternsCommand.self, SoundsCommand.self, DevicesCommand.self
        ]
    )
}
