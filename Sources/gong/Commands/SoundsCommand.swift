import ArgumentParser
import GongCore
import GongKit

struct SoundsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sounds",
        abstract: "List the sounds cues can name, and where each is from.",
        discussion: """
            The first lines name each directory sounds were taken from and why it was searched \
            (the bank installed beside gong, $XDG_DATA_DIRS, the source tree, your own). Put \
            NAME.wav/.flac in ~/.local/share/gong/sounds to add a sound or replace a built-in one.
            """)

    @Option(help: ArgumentHelp("Directory of sounds searched first.", valueName: "DIR"))
    var sounds: String?

    func run() throws {
        let bank = SoundBank.standard(explicit: sounds)
        let available = bank.availableSounds()
        guard !available.isEmpty else {
            printError("no sound bank found; looked in " + bank.places.map(describe).joined(separator: ", "))
            throw ExitCode(ExitStatus.noInput)
        }
        var used: [SoundBank.Place] = []
        for sound in available where !used.contains(sound.place) { used.append(sound.place) }
        for place in used { print("from " + describe(place)) }
        let width = available.map(\.name.count).max() ?? 8
        for sound in available {
            print(sound.name.padded(to: width + 2) + sound.path)
        }
    }
}
