import CGongStreams
import Glibc
import GongCore

/// Plays on PipeWire's graph natively: a `pw_stream` whose process callback, on PipeWire's own
/// real-time data thread, takes each quantum from a ring that gong's audio thread keeps filled
/// (`gong_pipewire.c`; the ring and what the engine asks of it are `RingFedPCM`'s).
///
/// Why not through pipewire-pulse, PipeWire's emulation of the PulseAudio protocol: there a
/// stream that asks for a long buffer ran dry every couple of seconds on an idle graph, a
/// take-back cannot be exact (the emulation has no rewind: a seek only moves its write index,
/// and what lands behind its read index is dropped unreported), and its timing reports scatter
/// by milliseconds, so gong could not confirm a frame. Here:
/// - the buffer is gong's own ring: PipeWire holds one quantum at a time, and a take-back
///   rewrites exactly the frames the graph has not yet claimed — never one it has;
/// - timing comes from `pw_time` each cycle (the graph's clock, its delay to the device and what
///   is queued), so when each frame is heard is known to the graph's accuracy;
/// - a cycle the graph ran without this stream (a jump in `ticks`), or one the ring could not
///   fill, is an underrun (`-EPIPE`), and the device clock measures what it cost.
/// The callback allocates nothing, takes no lock and never waits; it is written in C for that.
///
/// Errors come back as ALSA's would: a server, node or link gone is `-ENODEV`.
public final class PipeWirePCM: RingFedPCM {
    private var stream: OpaquePointer?

    /// A long buffer, as on gong's PulseAudio client: it survives a busy machine and costs few
    /// wake-ups, and a key press is still heard at once because what the graph has not claimed
    /// is taken back.
    static let bufferDefaults = BufferDefaults.takingBack
    /// The quantum asked of the graph (node.latency) at 48 kHz, unless the buffer is so short
    /// that a quantum must be less than half of it: PipeWire's default largest quantum, as
    /// pw-play's 100 ms asks for. It bounds how long a key press waits (what the graph has claimed
    /// cannot be taken back) and sets how often PipeWire's data thread copies from the ring; at
    /// half of it gong's CPU was 1.3 times as much (bench/RESULTS.md).
    static let quantumFramesAt48k = 2048
    /// `pw_time` is the graph driver's own clock, read each cycle: reports place a frame within
    /// microseconds of each other, so a millisecond is both the tolerance and the bound.
    public static let reportJitterNanoseconds: Int64 = 1_000_000
    /// How long opening may wait for the server and the session manager's link.
    static let openTimeoutMs: Int32 = 5000

    /// - Parameter target: a sink's node name or serial; nil for the default sink.
    public init(_ request: PCMRequest, target: String?) throws(AudioDeviceError) {
        let name = request.device
        if let format = request.format, format != .float32 {
            throw AudioDeviceError(
                .formatUnsupported, errno: EINVAL, operation: "pw_stream_connect", device: name, system: .pipeWire,
                detail:
                    "PipeWire's stream takes float32 samples here (it converts for the device); not \(format.rawValue)")
        }
        let defaults = PipeWirePCM.bufferDefaults
        let period = request.periodFrames(
            at: request.rate, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        let buffer = request.bufferFrames(
            at: request.rate, period: period, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        let quantum = min(PipeWirePCM.quantumFramesAt48k * request.rate / 48000, max(64, buffer / 2))
        var error = [CChar](repeating: 0, count: 256)
        var opened: OpaquePointer?
        let result = gong_pw_open(
            target, "gong", UInt32(request.rate), UInt32(request.channels), UInt32(quantum), UInt32(buffer),
            PipeWirePCM.openTimeoutMs, &opened, &error, error.count)
        guard result == 0, let opened else {
            let said = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw PipeWirePCM.openFailure(result, said: said, device: name, target: target)
        }
        stream = opened
        super.init(
            configuration: PCMConfiguration(
                device: name, rate: request.rate, channels: request.channels, format: .float32, periodFrames: period,
                bufferFrames: buffer, soundServer: true, reportJitterNanoseconds: PipeWirePCM.reportJitterNanoseconds,
                takesBack: true),
            handoff: gong_pw_handoff(opened))
    }

    /// A failed `gong_pw_open` as data: its negative errno (see `gong_pipewire.h`) as a reason,
    /// with PipeWire's own words where it gave any.
    static func openFailure(_ result: Int32, said: String, device: String, target: String?) -> AudioDeviceError {
        let (reason, detail): (AudioDeviceError.Reason, String) =
            switch -result {
            case EHOSTDOWN: (.noServer, said.isEmpty ? "no PipeWire server answered" : said)
            case ENOENT: (.noSuchDevice, "no such sink '\(target ?? "")'")
            case ETIMEDOUT: (.timedOut, said)
            case ENODEV: (.disconnected, said)
            case EINVAL: (.channelsUnsupported, said)
            default: (AudioDeviceError.Reason(errno: -result), said)
            }
        return AudioDeviceError(
            reason, errno: -result, operation: "pw_stream_connect", device: device, system: .pipeWire, detail: detail)
    }

    deinit { close() }

    override func closeStream() {
        guard let stream else { return }
        gong_pw_close(stream)
        self.stream = nil
    }

    /// Whether a PipeWire server answers within the timeout (at once when it has no socket).
    public static func serverAnswers(timeoutMs: Int32) -> Bool {
        gong_pw_server_answers(timeoutMs) != 0
    }

    /// The server's sinks as devices gong can name (`pipewire:NODE`); none when no server answers.
    public static func sinks() -> [AudioDeviceInfo] {
        var sinks = [gong_pw_sink](repeating: gong_pw_sink(), count: 64)
        let count = gong_pw_list_sinks(&sinks, Int32(sinks.count), 1000)
        guard count > 0 else { return [] }
        return sinks.prefix(Int(min(count, 64))).map { sink in
            var sink = sink
            let name = withUnsafeBytes(of: &sink.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let description = withUnsafeBytes(of: &sink.description) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            return AudioDeviceInfo(
                name: "pipewire:" + name, description: "PipeWire sink: " + (description.isEmpty ? name : description))
        }
    }
}
