import ArgumentParser
import GongAudio
import GongCore
import GongKit
import GongPractice

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show every setting in effect and where it came from.",
        discussion: """
            Settings come from gong's defaults, then $XDG_CONFIG_HOME/gong/config.toml, then the \
            environment (GONG_DEVICE, GONG_LATENCY, GONG_VOLUME, GONG_PATTERN), then flags. The \
            file's keys: device, latency (ms), volume (dB), pattern, patterns and sounds (lists of \
            directories), day-starts ("4:00"), streak-minimum ("1m"), streaks (true or false). \
            The flags below show what a command given them would use.
            """)

    @Option(help: ArgumentHelp("A playback device, as gong run takes it.", valueName: "NAME"))
    var device: String?

    @Option(help: ArgumentHelp("An output latency in milliseconds, as gong run takes it.", valueName: "MS"))
    var latency: Double?

    @OptionGroup var volume: VolumeOption

    @Flag(help: "One JSON object: each setting's value and source.")
    var json = false

    func run() throws {
        do {
            var live = LiveOptions()
            live.deviceFlag = device
            live.latency = latency
            let listing = try PlaySettings(live: live, volume: volume).config.listing
            if json {
                var object: [String: AnyJSON] = [:]
                for entry in listing {
                    // A string's value without the quotes it has in the file.
                    let value = entry.value.hasPrefix("\"") ? String(entry.value.dropFirst().dropLast()) : entry.value
                    object[entry.key] = ["value": .string(value), "source": .string(entry.source.description)]
                }
                print(AnyJSON.object(object).text())
                return
            }
            print("# \(GongConfig.path())")
            let width = listing.map { $0.key.count + $0.value.count }.max() ?? 0
            for entry in listing {
                let line = "\(entry.key) = \(entry.value)"
                print(line.padded(to: width + 5) + "# \(entry.source)")
            }
        } catch {
            throw fail(error)
        }
    }
}
