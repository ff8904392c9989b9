import ArgumentParser
import GongCore
import GongKit

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Play a session live on an audio device.",
        discussion: """
        Keys: space pause/resume, s skip the phase, q stop (the end cue rings out).
        Ctrl-C stops the same way; a second Ctrl-C stops at once. Ctrl-Z pauses; after fg the
        session stays paused until you resume it. Without a terminal, one line per event.
        Examples:
          gong run two-phase
          gong run two-phase --set meditation=20m --device pulse
          gong run interval --set bell=10m --duration 1h --quiet
        """)

    @Argument(help: "A built-in pattern (gong patterns list), a name from ~/.config/gong/patterns, or a .toml file.")
    var pattern: String

    @OptionGroup var live: LiveOptions
    @OptionGroup var patternOptions: PatternOptions
    @OptionGroup var volume: VolumeOption

    func run() async throws {
        let status: Int32
        do {
            try volume.check()
            status = try await LivePlayer.play(try patternOptions.resolvePattern(pattern), options: live,
                                               bank: patternOptions.soundBank(), volume: volume.volume)
        } catch {
            throw fail(error)
        }
        if status != 0 { throw ExitCode(status) }
    }
}

struct BreatheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "breathe",
        abstract: "Paced breathing, live: a pattern, or just a rate.",
        discussion: """
        Examples:
          gong breathe box
          gong breathe --bpm 5.5 --ratio 4:6 --duration 10m
          gong breathe resonant --bpm 6->4.5 --ramp 10m --duration 15m
        """)

    @Argument(help: "A breathing pattern (box, 4-7-8, resonant, coherent, sigh, or your own); default: resonant with --bpm.")
    var pattern: String?

    @OptionGroup var live: LiveOptions
    @OptionGroup var patternOptions: PatternOptions
    @OptionGroup var volume: VolumeOption

    func run() async throws {
        let status: Int32
        do {
            status = try await breathe()
        } catch {
            throw fail(error)
        }
        if status != 0 { throw ExitCode(status) }
    }

    private func breathe() async throws -> Int32 {
        try volume.check()
        guard pattern != nil || patternOptions.bpm != nil else {
            throw UsageError("breathe: name a pattern (box, 4-7-8, resonant, coherent, sigh) or give --bpm RATE")
        }
        let resolved = try patternOptions.resolvePattern(pattern ?? "resonant")
        guard resolved.isBreathing else {
            throw UsageError("breathe: \(resolved.name) is not a breathing pattern; use 'gong run \(resolved.name)'")
        }
        return try await LivePlayer.play(resolved, options: live, bank: patternOptions.soundBank(), volume: volume.volume)
    }
}

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the devices gong can play on: ALSA's, like aplay -L, and PulseAudio's sinks.")

    func run() throws {
        let devices = PlaybackDevices.list()
        guard !devices.isEmpty else {
            printError("no playback devices found")
            throw ExitCode(ExitStatus.unavailable)
        }
        for device in devices {
            print(device.name)
            if !device.description.isEmpty { print("    " + device.description) }
        }
    }
}
