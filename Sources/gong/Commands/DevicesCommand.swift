import ArgumentParser
import GongKit

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
