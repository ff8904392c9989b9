import ArgumentParser
import FoundationEssentials
import GongAudio
import GongCore
import GongKit
import GongPractice

/// Options for playing on an audio device, shared by `run` and `breathe`.
struct LiveOptions: ParsableArguments {
    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            "Playback device: auto (a running PipeWire or PulseAudio server, played by gong's own client; else ALSA's default), an ALSA PCM (default, hw:0,0, plughw:1, null, …), or a sound server played directly: pipewire (the default sink) or pipewire:NODE; pulse (the server's default sink) or pulse:SINK; jack (a JACK client connected to the physical playback ports) or jack:PORT,PORT (to the ports named, e.g. jack:system:playback_1,system:playback_2); snapcast:FIFO or snapcast:tcp://HOST:PORT (a snapserver's pipe or tcp source, heard in every room it serves; ?control=HOST:PORT for its JSON-RPC control, 127.0.0.1:1705 by default). See gong devices (default: the config's, else auto).",
            valueName: "NAME"))
    var deviceFlag: String?

    /// The device to play on: the flag's, else (after `adopt`) the config's, else `auto`.
    var device: String {
        get { deviceFlag ?? SessionOptions().device }
        set { deviceFlag = newValue }
    }

    /// Takes the config's device and latency where no flag gave one, and tells the config the
    /// flags that did (for `gong config`).
    mutating func adopt(_ config: inout GongConfig) {
        config.device.override(deviceFlag, from: .flag("--device"))
        if let latency { config.latencyMs.override(.some(latency), from: .flag("--latency")) }
        deviceFlag = config.device.value
        latency = config.latencyMs.value
    }

    @Option(help: ArgumentHelp("Sample rate in Hz (the device may grant a nearby one).", valueName: "HZ"))
    var rate = Timeline.defaultSampleRate

    @Option(help: ArgumentHelp("Channels: 1 or 2.", valueName: "N"))
    var channels = 2

    @Option(
        help: ArgumentHelp(
            "Output latency in milliseconds (default: \(SessionLimits.latencyDefaults)). Cues land on their frame at any latency; a longer buffer costs fewer wake-ups and survives a busier machine.",
            valueName: "MS"))
    var latency: Double?

    @Option(
        help: ArgumentHelp(
            "Frames per period (default: the latency over its periods; \(SessionLimits.periodDefaults)).",
            valueName: "FRAMES"))
    var period: Int?

    @Option(
        help: ArgumentHelp(
            "Sample format: float32, int32 or int16 (default: the best the device takes).", valueName: "FORMAT"))
    var format: String?

    @Flag(help: "Print nothing but errors and the summary.")
    var quiet = false

    @Flag(help: "Print every event as one JSON object per line (for tools).")
    var json = false

    @Flag(help: "Do not record this session in the history (gong history).")
    var noHistory = false

    @Option(
        help: ArgumentHelp(
            "Take commands as JSON lines: stdin (replies on stdout; keys then come from the terminal, if there is one), or socket (at $XDG_RUNTIME_DIR/gong/PID.sock, for gong ctl). See docs/embedding.md.",
            valueName: "stdin|socket"))
    var control: ControlMode?

    enum ControlMode: String, ExpressibleByArgument {
        case stdin, socket
    }

    /// The session's settings; GongKit checks them against its limits.
    func sessionOptions(volume: Double, interactive: Bool) throws -> SessionOptions {
        var sampleFormat: SampleFormat?
        if let format {
            guard let parsed = SampleFormat(rawValue: format) else {
                throw UsageError("--format \(format): unsupported; use \(SessionLimits.formatsAllowed)")
            }
            sampleFormat = parsed
        }
        return SessionOptions(
            device: device, rate: rate, channels: channels, format: sampleFormat, latencyMs: latency,
            periodFrames: period, gainDB: volume, interactive: interactive)
    }
}
