import ArgumentParser
import GongCore
import GongKit
import GongPractice

/// The flags a built-in pattern is meant to be changed with, by its name: said after its summary
/// in the list (GongCore's summaries name no flags).
let builtInPatternFlags = ["interval": "--set bell=N --duration M"]

/// A built-in pattern's summary as the list shows it, with the flags it is meant to be changed with.
func listed(_ pattern: Pattern) -> String {
    pattern.summary + (builtInPatternFlags[pattern.name].map { " (\($0))" } ?? "")
}

struct PatternsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patterns",
        abstract: "List the patterns, or show one in detail.",
        subcommands: [List.self, Show.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List built-in and user patterns.")

        func run() throws {
            let catalog = PatternCatalog(extraDirectories: (try? loadConfig())?.patternDirectories.value ?? [])
            let width = (BuiltInPatterns.all.map(\.name) + catalog.userPatternNames()).map(\.count).max() ?? 10
            for pattern in BuiltInPatterns.all {
                print(pattern.name.padded(to: width + 2) + listed(pattern))
            }
            let user = catalog.userPatternNames()
            if !user.isEmpty {
                print("\nyours (\(catalog.directories.userPatterns)):")
                for name in user {
                    let summary =
                        (try? catalog.pattern(named: name).summary)
                        ?? "(cannot be read: run gong patterns show \(name))"
                    print(name.padded(to: width + 2) + summary)
                }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show a pattern's phases, cues and timing.",
            discussion: """
                The options below change the pattern as they would a session's.

                Example:
                  gong patterns show two-phase --set meditation=20m
                """)

        @Argument(help: "A pattern name or a .toml file.")
        var pattern: String

        @OptionGroup var options: PatternOptions

        func run() throws {
            do {
                print(try describe())
            } catch {
                throw fail(error)
            }
        }

        private func describe() throws -> String {
            let resolved = try options.resolvePattern(pattern, config: try loadConfig())
            do {
                return PatternDescription.describe(
                    resolved, timeline: try Timeline(pattern: resolved, sampleRate: Timeline.defaultSampleRate))
            } catch {
                throw GongError.pattern(error)
            }
        }
    }
}

/// The human description of a pattern used by `patterns show`.
enum PatternDescription {
    static func describe(_ pattern: Pattern, timeline: Timeline) -> String {
        var lines = ["\(pattern.name): \(pattern.summary)"]
        if let pace = pattern.pace { lines.append("  pace: \(pace)") }
        if let delay = pattern.startDelay, delay.isPositive {
            lines.append("  delay: \(DurationText.format(delay)) before the start cue, counted down")
        }
        if pattern.warmUp.isPositive { lines.append("  warm-up: \(DurationText.format(pattern.warmUp))") }
        if let start = pattern.startCue { lines.append("  start: \(start)") }
        let totalShares = pattern.phases.reduce(0.0) { $0 + $1.length.doubleValue }
        lines.append("  phases:")
        for phase in pattern.phases {
            var text = "    \(phase.name)".padded(to: 18)
            if let pace = pattern.pace, !pace.isRamp {
                text +=
                    "\(DurationText.format(seconds: phase.length.doubleValue / totalShares * 60 / pace.from.doubleValue)) (share \(DurationText.format(phase.length).dropLast()))"
            } else if pattern.pace != nil {
                text += "share \(DurationText.format(phase.length).dropLast())"
            } else {
                text += DurationText.format(phase.length)
            }
            if let cue = phase.cue { text += ", cue \(cue)" }
            if let bell = phase.bell { text += ", bell \(bell.cue) \(bell.spacing)" }
            if phase.motion != .still { text += ", \(phase.motion.rawValue)" }
            lines.append(text)
        }
        if let end = pattern.endCue { lines.append("  end: \(end) (rings out fully)") }
        if let bed = pattern.bed {
            lines.append(
                "  bed: \(Cue(bed.sound, gainDB: bed.gainDB)), fading in over \(DurationText.format(bed.fadeIn)) "
                    + "and out over \(DurationText.format(bed.fadeOut)) from the end cue")
        }
        switch pattern.length {
        case .cycles(let count): lines.append("  length: \(count) cycle\(count == 1 ? "" : "s")")
        case .duration(let seconds):
            lines.append("  length: \(DurationText.format(seconds)) → \(timeline.cycleCount) whole cycles")
        case .open:
            lines.append("  length: open — cycles repeat until you stop, at most \(PatternLimits.maxSessionText)")
        }
        if pattern.length != .open {
            lines.append(
                "  session: \(DurationText.format(seconds: timeline.plannedSeconds)) until the end cue, \(timeline.cueOnsets.count) cues"
            )
        }
        return lines.joined(separator: "\n")
    }
}
