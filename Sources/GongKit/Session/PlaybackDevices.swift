import GongAudio

/// The devices a session can be opened on, by the names `SessionOptions.device` takes.
public enum PlaybackDevices {
    public struct Device: Sendable, Equatable, Codable {
        public var name: String
        public var description: String
    }

    /// ALSA's playback devices, as `aplay -L` lists them, then a running PulseAudio or
    /// PipeWire server's sinks as `pulse:SINK`.
    public static func list() -> [Device] {
        listPlaybackDevices().map { Device(name: $0.name, description: $0.description) }
    }
}
