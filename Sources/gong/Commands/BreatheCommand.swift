import ArgumentParser
import GongCore
import GongKit
import GongPractice

struct BreatheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breathe",
        abstract: "Breathe at a pace, live: a pattern, or just a rate.",
        discussion: """
            Examples:
              gong breathe box
              gong breathe --bpm 5.5 --ratio 4:6 --duration 10m
              gong breathe resonant --bpm '6->4.5' --ramp 10m --duration 15m
            """)

    @Argument(
        help: "A breathing pattern (box, 4-7-8, resonant, coherent, sigh, or your own); default: resonant with --bpm.")
    var pattern: String?

    @OptionGroup var live: LiveOptions
    @OptionGroup var patternOptions: PatternOptions
    @OptionGroup var volume: VolumeOption

    func run() async throws { try await exiting { try await breathe() } }

    private func breathe() async throws -> Int32 {
        let settings = try PlaySettings(live: live, volume: volume)
        let config = settings.config
        guard pattern != nil || patternOptions.bpm != nil else {
            throw UsageError("breathe: name a pattern (box, 4-7-8, resonant, coherent, sigh) or give --bpm RATE")
        }
        let resolved = try patternOptions.resolvePattern(pattern ?? "resonant", config: config)
        guard resolved.isBreathing else {
            throw UsageError("breathe: \(resolved.name) is not a breathing pattern; use 'gong run \(resolved.name)'")
        }
        return try await LivePlayer.play(
            resolved, options: settings.live, bank: patternOptions.soundBank(config), volume: settings.volume,
            parameters: patternOptions.given, boundary: config.dayStartsAt.value)
    }
}
