import ArgumentParser
import GongAudio
import GongKit

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the devices gong can play on.",
        discussion: "ALSA's, as aplay -L lists them; sound servers' sinks and ports; and a snapserver's streams.")

    @Option(
        name: .customLong("snapserver"),
        help: ArgumentHelp(
            "The snapserver whose streams to list, by its JSON-RPC control (HOST:PORT, or HOST for port 1705).",
            valueName: "HOST:PORT"))
    var snapserver = "127.0.0.1:\(SnapcastAddress.defaultControlPort)"

    func validate() throws {
        guard controlAddress != nil else {
            throw ValidationError("--snapserver takes HOST:PORT or HOST (port 1-65535), not '\(snapserver)'")
        }
    }

    private var controlAddress: (host: String, port: Int)? { SnapcastAddress.control(snapserver) }

    func run() throws {
        let devices = PlaybackDevices.list(
            snapserver: controlAddress ?? ("127.0.0.1", SnapcastAddress.defaultControlPort))
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
