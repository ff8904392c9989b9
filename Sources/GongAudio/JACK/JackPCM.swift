import CGongStreams
import Glibc
import GongCore

/// Plays as a JACK client named `gong` (JACK renames it when the name is taken), one output
/// port per channel (`out_1`, `out_2`…), whose process callback, on JACK's real-time thread,
/// takes each cycle's frames from a ring that gong's audio thread keeps filled (`gong_jack.c`;
/// the ring and what the engine asks of it are `RingFedPCM`'s): the same design as `PipeWirePCM`.
/// - the buffer is gong's own ring: JACK holds one cycle at a time, and a take-back rewrites
///   exactly the frames the callback has not yet claimed — never one it has;
/// - timing comes from each cycle: when its callback woke (never before the cycle began; the
///   device clock keeps the earliest) and its frame time, plus the ports' playback latency; a
///   server clock that stood still (a driver woken late) is measured and told;
/// - cycles the server ran without this client (a jump in its frame time) and a cycle the ring
///   could not fill are underruns (`-EPIPE`), and the device clock measures what each cost.
/// JACK takes 32-bit floats only, at the server's rate: a request at another rate is granted the
/// server's (the session is prepared at the granted rate). A server that shuts the client down is
/// a lost device (`-ENODEV`), reopened with backoff like any other.
public final class JackPCM: RingFedPCM {
    private var stream: OpaquePointer?

    /// A long buffer, as on gong's PulseAudio and PipeWire routes: it survives a busy machine and
    /// costs few wake-ups, and a key press is still heard at once because what the callback has
    /// not claimed is taken back.
    static let bufferDefaults = BufferDefaults.takingBack
    /// Reports come from each cycle's wake-up, late by microseconds on an idle machine (the
    /// dummy driver here) and never early, and the device clock keeps the earliest: a
    /// millisecond is both the tolerance and the bound.
    public static let reportJitterNanoseconds: Int64 = 1_000_000

    /// - Parameter ports: full port names to connect to in order (`system:playback_1`); none for
    ///   the server's physical playback ports.
    public init(_ request: PCMRequest, ports: [String]) throws(AudioDeviceError) {
        let name = request.device
        if let format = request.format, format != .float32 {
            throw AudioDeviceError(
                .formatUnsupported, errno: EINVAL, operation: "jack_client_open", device: name, system: .jack,
                detail: "JACK takes float32 samples only; not \(format.rawValue)")
        }
        // The ring is sized at the requested rate first; JACK's own rate is known once the
        // client is open, and the ring is opened again at it if it differs (rare: a server at
        // 44.1 kHz asked for 48 kHz).
        var rate = request.rate
        var opened: OpaquePointer?
        var buffer = 0
        var period = 0
        for _ in 0..<2 {
            let defaults = JackPCM.bufferDefaults
            period = request.periodFrames(at: rate, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
            buffer = request.bufferFrames(
                at: rate, period: period, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
            opened = try JackPCM.open(name: name, ports: ports, channels: request.channels, bufferFrames: buffer)
            guard let stream = opened else { break }
            let granted = Int(gong_jack_rate(stream))
            if granted == rate { break }
            gong_jack_close(stream)
            opened = nil
            rate = granted
        }
        guard let opened else {
            throw AudioDeviceError(
                .rateUnsupported, errno: EIO, operation: "jack_client_open", device: name, system: .jack,
                detail: "the JACK server changed its rate while gong opened it")
        }
        stream = opened
        super.init(
            configuration: PCMConfiguration(
                device: name, rate: rate, channels: request.channels, format: .float32, periodFrames: period,
                bufferFrames: buffer, soundServer: true, reportJitterNanoseconds: JackPCM.reportJitterNanoseconds,
                takesBack: true, reportsNeverEarly: true),
            handoff: gong_jack_handoff(opened))
    }

    private static func open(name: String, ports: [String], channels: Int, bufferFrames: Int) throws(AudioDeviceError)
        -> OpaquePointer
    {
        var error = [CChar](repeating: 0, count: 512)
        var opened: OpaquePointer?
        let names = ports.map { strdup($0) }
        defer { names.forEach { free($0) } }
        let result = names.map { UnsafePointer($0) }.withUnsafeBufferPointer { pointers in
            gong_jack_open(
                "gong", pointers.baseAddress, Int32(pointers.count), UInt32(clamping: channels),
                UInt32(clamping: bufferFrames), &opened, &error, error.count)
        }
        guard result == 0, let opened else {
            let said = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw JackPCM.openFailure(result, said: said, device: name)
        }
        return opened
    }

    /// A failed `gong_jack_open` as data: its negative errno (see `gong_jack.h`) as a reason and
    /// the call it failed in, with JACK's own words where it gave any.
    static func openFailure(_ result: Int32, said: String, device: String) -> AudioDeviceError {
        let (reason, operation, detail): (AudioDeviceError.Reason, String, String) =
            switch -result {
            case EHOSTDOWN:
                (
                    .noServer, "jack_client_open",
                    said.isEmpty ? "no JACK server answered (gong does not start one)" : said
                )
            case ENOENT: (.noSuchDevice, "jack_port_by_name", said)
            case EINVAL: (.channelsUnsupported, "jack_client_open", said)
            default: (AudioDeviceError.Reason(errno: -result), "jack_connect", said)
            }
        return AudioDeviceError(
            reason, errno: -result, operation: operation, device: device, system: .jack, detail: detail)
    }

    deinit { close() }

    override func closeStream() {
        guard let stream else { return }
        gong_jack_close(stream)
        self.stream = nil
    }

    /// Whether a JACK server answers. Never starts one, and returns at once when none runs.
    public static func serverAnswers() -> Bool { gong_jack_server_answers() != 0 }

    /// The server's playback ports as devices gong can name (`jack:PORT`), after `jack` itself
    /// (its physical ones); none when no JACK server runs.
    public static func ports() -> [AudioDeviceInfo] {
        var ports = [gong_jack_port](repeating: gong_jack_port(), count: 128)
        let count = gong_jack_list_playback_ports(&ports, Int32(ports.count))
        guard count >= 0 else { return [] }
        let listed = ports.prefix(Int(min(count, 128))).map { port in
            var port = port
            let name = withUnsafeBytes(of: &port.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return AudioDeviceInfo(
                name: "jack:" + name, description: port.physical != 0 ? "JACK physical playback port" : "JACK port")
        }
        return [AudioDeviceInfo(name: "jack", description: "JACK: the server's physical playback ports")] + listed
    }
}
