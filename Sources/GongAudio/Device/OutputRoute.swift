import Glibc
import GongCore

/// Which way a device name leads: the one place that decides, and the one place a route's device
/// is opened (`open(_:with:)`).
public enum OutputRoute: Equatable, Sendable {
    /// gong's own PipeWire stream (`PipeWirePCM`), on the graph natively: `pipewire` plays on the
    /// default sink, `pipewire:NODE` on the sink of that node name (or serial).
    case pipeWire(target: String?)
    /// gong's own PulseAudio client (`PulsePCM`): `pulse` plays on the server's default sink,
    /// `pulse:SINK` on the sink of that name. The names are the ones ALSA's plugin answers to,
    /// and they reach the same server, one thread and one lock fewer.
    case pulseAudio(sink: String?)
    /// A JACK client named `gong` (`JackPCM`): `jack` connects its ports to the system's
    /// playback ports, `jack:PORT,PORT` to the ports named.
    case jack(ports: [String])
    /// A snapserver's source (`SnapcastPCM`): `snapcast:FIFO` its `pipe://` FIFO,
    /// `snapcast:tcp://HOST:PORT` its `tcp://` port, each with `?control=HOST:PORT` and
    /// `?buffer=MS` when not Snapcast's defaults (`SnapcastAddress`).
    case snapcast(SnapcastAddress)
    /// A `snapcast:` name that says no source gong can feed: opening it says why.
    case snapcastUnreadable(String)
    /// Any other name is an ALSA PCM (`AlsaPCM`), ALSA's `default` included.
    case alsa

    /// The device name that lets gong choose: what `gong run` plays on unless told otherwise.
    public static let automatic = "auto"

    /// `automatic` decided, any other name as it is: `pipewire` when a PipeWire server answers
    /// (what Fedora, Ubuntu and Debian desktops run: gong then plays on the graph itself, timed
    /// by it, rather than through its PulseAudio emulation); else `pulse` when a PulseAudio server
    /// answers within a second (on such a desktop ALSA's `default` leads there anyway, through a
    /// plugin with a thread and a lock more, and without taking back); else ALSA's `default` (a
    /// Raspberry Pi's card, a machine with no server).
    public static func deciding(_ device: String) -> String {
        guard device == automatic else { return device }
        if PipeWirePCM.serverAnswers(timeoutMs: 1000) { return "pipewire" }
        return PulsePCM.serverAnswers(timeoutMs: 1000) ? "pulse" : "default"
    }

    public init(device: String) {
        func named(_ prefix: String) -> String? {
            device.hasPrefix(prefix + ":") && device.count > prefix.count + 1
                ? String(device.dropFirst(prefix.count + 1)) : nil
        }
        if device == "pipewire" {
            self = .pipeWire(target: nil)
        } else if let target = named("pipewire") {
            self = .pipeWire(target: target)
        } else if device == "pulse" {
            self = .pulseAudio(sink: nil)
        } else if let sink = named("pulse") {
            self = .pulseAudio(sink: sink)
        } else if device == "jack" {
            self = .jack(ports: [])
        } else if let ports = named("jack") {
            self = .jack(ports: ports.split(separator: ",").map(String.init))
        } else if let source = named("snapcast") {
            self = SnapcastAddress(source).map(Self.snapcast) ?? .snapcastUnreadable(source)
        } else {
            self = .alsa
        }
    }

    /// Hands `user` the opener of this route's device for `request`, typed as the device it
    /// opens (the control side keeps and closes it as that type): the one switch from a route to a
    /// device, which sessions and benchmarks alike go through.
    public func open<User: DeviceOpenerUser>(_ request: PCMRequest, with user: User) throws(User.Failure) -> User.Result
    {
        switch self {
        case .pipeWire(let target):
            try user.use { () throws(AudioDeviceError) -> PipeWirePCM in try PipeWirePCM(request, target: target) }
        case .pulseAudio(let sink):
            try user.use { () throws(AudioDeviceError) -> PulsePCM in try PulsePCM(request, sink: sink) }
        case .jack(let ports):
            try user.use { () throws(AudioDeviceError) -> JackPCM in try JackPCM(request, ports: ports) }
        case .snapcast(let address):
            try user.use { () throws(AudioDeviceError) -> SnapcastPCM in try SnapcastPCM(request, address: address) }
        case .snapcastUnreadable(let source):
            try user.use { () throws(AudioDeviceError) -> SnapcastPCM in
                throw AudioDeviceError(
                    .noSuchDevice, errno: EINVAL, operation: "", device: request.device, system: .snapcast,
                    detail: "'\(source)' is no Snapcast source: give a FIFO's path or tcp://HOST:PORT, then optionally"
                        + " ?control=HOST:PORT&buffer=MS")
            }
        case .alsa:
            try user.use { () throws(AudioDeviceError) -> AlsaPCM in try AlsaPCM(request) }
        }
    }
}

/// What is done with a device opener, whichever device type the route leads to (see
/// `OutputRoute.open(_:with:)`). The opener is called again to reopen a lost device.
public protocol DeviceOpenerUser {
    associatedtype Result
    associatedtype Failure: Error
    func use<Device: PCM>(_ open: @escaping @Sendable () throws(AudioDeviceError) -> Device) throws(Failure) -> Result
}
