import GongAudio

/// The devices a session can be opened on, by the names `SessionOptions.device` takes.
public enum PlaybackDevices {
    public struct Device: Sendable, Equatable, Codable {
        public var name: String
        public var description: String
    }

    /// ALSA's playback devices, as `aplay -L` lists them, then a running PulseAudio or
    /// PipeWire server's sinks as `pulse:SINK`, JACK's ports, and the streams of the snapserver
    /// whose control is at `snapserver` (this machine's by default) as `snapcast:…`.
    public static func list(
        snapserver: (host: String, port: Int) = ("127.0.0.1", SnapcastAddress.defaultControlPort)
    ) -> [Device] {
        listPlaybackDevices(snapserver: snapserver).map { Device(name: $0.name, description: $0.description) }
    }
}
