import ArgumentParser
import GongKit

struct SoundsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds",
        abstract: "List the sounds cues can name, and where each comes from.",
        discussion: "Put NAME.wav/.flac in ~/.local/share/gong/sounds to add a sound or replace a built-in one.")

    @Option(help: ArgumentHelp("Directory of sounds searched first.", valueName: "DIR"))
    var sounds: String?

    func run() throws {
        let bank = SoundBank.standard(explicit: sounds)
        let available = bank.availableSounds()
        guard !available.isEmpty else {
            printError("no sounds found; searched \(bank.directories.joined(separator: ", "))")
            throw ExitCode(ExitStatus.noInput)
        }
        let width = available.map(\.name.count).max() ?? 8
        for sound in available {
            print(sound.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + sound.path)
        }
    }
}
