import CGongStreams
import Glibc
import GongCore

/// Plays on PipeWire's graph natively: a `pw_stream` whose process callback, on PipeWire's own
/// real-time data thread, takes each quantum from a ring that gong's audio thread keeps filled
/// (`gong_pipewire.c`).
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
public final class PipeWirePCM: PCM {
    public let configuration: PCMConfiguration
    private var stream: OpaquePointer?
    private var wakeDescriptor: Int32 = -1
    /// Frames handed to the ring since it opened, less those taken back.
    private var writtenFrames: Int64 = 0
    /// Underruns (the ring's and the graph's) already told as `-EPIPE`.
    private var underrunsTold: UInt64 = 0

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
                code: -EINVAL, operation: "pw_stream_connect", device: name,
                message:
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
            let message: String
            switch -result {
            case EHOSTDOWN: message = "no PipeWire server to play through; start one, or choose another device"
            case ENOENT: message = "no such sink '\(target ?? "")'"
            default: message = said
            }
            throw AudioDeviceError(code: result, operation: "pw_stream_connect", device: name, message: message)
        }
        stream = opened
        configuration = PCMConfiguration(
            device: name, rate: request.rate, channels: request.channels, format: .float32, periodFrames: period,
            bufferFrames: buffer, soundServer: true, reportJitterNanoseconds: PipeWirePCM.reportJitterNanoseconds,
            takesBack: true)
    }

    deinit { close() }

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

    /// `-ENODEV` once the stream is gone, `-EPIPE` once for each new underrun, else 0.
    private var failure: Int32 {
        guard let stream, gong_pw_state(stream) == 0 else { return -ENODEV }
        var counters = gong_pw_counters()
        gong_pw_counters_read(stream, &counters)
        let underruns = counters.ring_underruns + counters.graph_xruns
        guard underruns > underrunsTold else { return 0 }
        underrunsTold = underruns
        return -EPIPE
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        let failed = failure
        guard failed == 0, let stream else { return Int(failed) }
        let written = gong_pw_write(
            stream, bytes.assumingMemoryBound(to: Float.self), UInt32(clamping: max(0, frames)))
        guard written > 0 else { return Int(-EAGAIN) }
        writtenFrames += Int64(written)
        return Int(written)
    }

    public func wait(timeoutMs: Int32) -> Int32 {
        let failed = failure
        guard failed == 0, let stream else { return failed }
        let result = gong_pw_wait(stream, UInt32(configuration.periodFrames), wakeDescriptor, timeoutMs)
        return result == 2 ? PCMWait.woken : result
    }

    /// Underruns need nothing re-prepared: the callback plays silence and carries on.
    public func recover(_ error: Int32) -> Int32 {
        guard error == -EPIPE || error == -ESTRPIPE else { return error }
        guard let stream, gong_pw_state(stream) == 0 else { return -ENODEV }
        return 0
    }

    public func prepare() -> Int32 { 0 }

    /// Waits until the graph has claimed everything written, then until the last frame is heard
    /// (at most the buffer's length and a second).
    public func drain() -> Int32 {
        guard let stream else { return -ENODEV }
        let deadline = MonotonicTime.now().nanoseconds + Int64(configuration.latencySeconds * 1e9) + 1_000_000_000
        gong_pw_drain_begins(stream)
        while gong_pw_filled(stream) > 0 {
            guard gong_pw_state(stream) == 0 else { return -ENODEV }
            guard MonotonicTime.now().nanoseconds < deadline else { return -ETIMEDOUT }
            usleep(5000)
        }
        if let heard = status()?.timestamp, let status = status() {
            let last =
                heard.nanoseconds
                + FrameTime.nanoseconds(ofFrames: Int64(status.delayFrames), rate: Int64(configuration.rate))
            let left = min(last - MonotonicTime.now().nanoseconds, deadline - MonotonicTime.now().nanoseconds)
            if left > 0 { usleep(UInt32(left / 1000)) }
        }
        return 0
    }

    public func drop() -> Int32 { 0 }

    /// From the last graph cycle: at `now` the ring's next frame was due to be heard at `heard`,
    /// and every frame written since follows it.
    public func status() -> PCMStatus? {
        guard let stream, gong_pw_state(stream) == 0 else { return nil }
        var timing = gong_pw_timing()
        gong_pw_timing_read(stream, &timing)
        guard timing.cycles > 0 else {
            let now = MonotonicTime.now()
            return PCMStatus(
                state: .prepared, delayFrames: 0, availableFrames: 0, timestamp: now, triggerTimestamp: now)
        }
        let rate = Int64(configuration.rate)
        let ahead = writtenFrames - Int64(timing.next_frame)
        let delay = ahead + FrameTime.frames(inNanoseconds: timing.heard_ns - timing.now_ns, rate: rate)
        let measured = MonotonicTime(nanoseconds: timing.now_ns)
        return PCMStatus(
            state: .running, delayFrames: Int(delay), availableFrames: Int(gong_pw_writable(stream)),
            timestamp: measured, triggerTimestamp: measured)
    }

    /// Everything the graph has not yet claimed: PipeWire holds nothing of gong's but the
    /// quantum it is playing.
    public func rewindableFrames() -> Int {
        guard let stream else { return 0 }
        return Int(gong_pw_unclaimed(stream))
    }

    public func rewind(frames: Int) -> Int {
        guard let stream, frames > 0, frames <= Int(UInt32.max) else { return 0 }
        let taken = Int(gong_pw_take_back(stream, UInt32(frames)))
        writtenFrames -= Int64(taken)
        return taken
    }

    public func wakeWhenReadable(_ descriptor: Int32) { wakeDescriptor = descriptor }

    public func close() {
        guard let stream else { return }
        gong_pw_close(stream)
        self.stream = nil
    }
}

extension PipeWirePCM {
    /// The kernel's id of PipeWire's thread that runs the process callback (nil before its first
    /// cycle): where /proc tells its scheduling, for monitoring and tests.
    public var callbackThreadID: Int32? {
        guard let stream else { return nil }
        var counters = gong_pw_counters()
        gong_pw_counters_read(stream, &counters)
        return counters.callback_thread == 0 ? nil : counters.callback_thread
    }
}
