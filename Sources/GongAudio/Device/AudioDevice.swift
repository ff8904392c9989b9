import CAlsa
import Glibc
import GongCore

/// Why an audio device could not be opened or used, as data: what kind of failure (`reason`),
/// the errno, the call that failed, the device and the sound system's own words for it.
///
/// No advice lives here: which flag or command would help is the command line's to say (it
/// words a reason as a sentence), so a program embedding gong acts on `reason` and `errno`
/// rather than parsing English (as swift-system's `Errno` and NIO's `IOError` carry theirs).
public struct AudioDeviceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the drivers tell apart. New cases may come: switch with a default.
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        /// Another program holds the device (`EBUSY`).
        case busy
        /// No device, sink, node or port of that name (`ENOENT`, `ENODEV`, `ENXIO` on open).
        case noSuchDevice
        /// The device exists and this user may not open it (`EACCES`, `EPERM`).
        case permissionDenied
        /// No sound server answered (PulseAudio, PipeWire or JACK: `ECONNREFUSED`, `EHOSTDOWN`,
        /// or `ETIMEDOUT` when it took the connection and never answered).
        case noServer
        /// The server answered but did not start the stream in time (`ETIMEDOUT`): typically
        /// PipeWire without its session manager.
        case timedOut
        /// The device, its server or its stream went away while in use (`ENODEV`, `ESHUTDOWN`,
        /// `ECONNRESET`, `EPIPE` from a server).
        case disconnected
        /// The device took no audio for the engine's stall limit (the engine's own `EAGAIN`).
        case stalled
        /// The sample format (or interleaved access) is not one the device takes.
        case formatUnsupported
        /// The channel count is not one the device takes.
        case channelsUnsupported
        /// The rate is not one the device takes (or it changed while opening).
        case rateUnsupported
        /// Anything else: `errno` and `detail` say what.
        case other

        /// The reason a bare errno gives when nothing else is known of the failure: how a lost
        /// device's code (`EngineEvent.deviceLost`) is classed.
        public init(errno: Int32) {
            switch errno {
            case EBUSY: self = .busy
            case ENOENT, ENXIO: self = .noSuchDevice
            case EACCES, EPERM: self = .permissionDenied
            case ECONNREFUSED, EHOSTDOWN: self = .noServer
            case ETIMEDOUT: self = .timedOut
            case ENODEV, ESHUTDOWN, ECONNRESET, EPIPE, ESTRPIPE, EBADFD: self = .disconnected
            case EAGAIN: self = .stalled
            default: self = .other
            }
        }

        /// A few plain words for it, with no advice: what a program that is not the command line
        /// shows.
        public var summary: String {
            switch self {
            case .busy: "device busy: another program is using it"
            case .noSuchDevice: "no such device"
            case .permissionDenied: "permission denied"
            case .noServer: "no sound server answered"
            case .timedOut: "the sound server started no stream in time"
            case .disconnected: "the device went away"
            case .stalled: "the device took no audio"
            case .formatUnsupported: "sample format not supported"
            case .channelsUnsupported: "channel count not supported"
            case .rateUnsupported: "rate not supported"
            case .other: "the device failed"
            }
        }
    }

    /// The sound system a device is played through: whose words `detail` are.
    public enum System: String, Sendable, Equatable, CaseIterable {
        case alsa, pulseAudio, pipeWire, jack, snapcast
    }

    public var reason: Reason
    /// The errno, positive (`ENOENT`), or 0 when the failure has none.
    public var errno: Int32
    /// The call that failed, e.g. `snd_pcm_open`, `pa_context_connect`.
    public var operation: String
    public var device: String
    public var system: System
    /// What the sound system said (ALSA's `snd_strerror`, PulseAudio's `pa_strerror`,
    /// PipeWire's or JACK's own message) or, where it says nothing, the fact in gong's words
    /// (what was asked and what the device takes). Never advice.
    public var detail: String
    /// The sound server's address that was asked, where one was (`unix:/run/user/1000/pulse/native`).
    public var server: String?

    public init(
        _ reason: Reason, errno: Int32, operation: String, device: String, system: System = .alsa,
        detail: String = "", server: String? = nil
    ) {
        self.reason = reason
        self.errno = errno
        self.operation = operation
        self.device = device
        self.system = system
        self.detail = detail
        self.server = server
    }

    /// A failure known by its negative errno alone (a device's return code): the reason is the
    /// errno's (`Reason(errno:)`).
    public init(code: Int32, operation: String, device: String, message: String) {
        self.init(Reason(errno: -code), errno: -code, operation: operation, device: device, detail: message)
    }

    /// The errno as the device calls return it: negative, or 0.
    public var code: Int32 { -errno }

    /// The failure as data in one line, with no advice (the command line words it otherwise).
    public var description: String {
        "audio device '\(device)': \(reason.summary)" + (detail.isEmpty ? "" : " (\(detail))")
            + (operation.isEmpty ? "" : " (\(operation))")
    }
}

/// Sample formats gong can write, in the order it prefers them: float needs no conversion.
public enum SampleFormat: String, Sendable, CaseIterable, BitwiseCopyable {
    case float32, int32, int16

    var alsa: snd_pcm_format_t {
        switch self {
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .int32: SND_PCM_FORMAT_S32_LE
        case .int16: SND_PCM_FORMAT_S16_LE
        }
    }

    public var bytesPerSample: Int {
        @_noAllocation @_noLocks get {
            switch self {
            case .int16: 2
            case .float32, .int32: 4
            }
        }
    }
}

/// What a session asks of the device. Anything nil is negotiated.
public struct PCMRequest: Sendable, Equatable {
    public var device: String
    public var rate: Int
    public var channels: Int
    public var format: SampleFormat?
    /// Frames per period; default: the latency over the route's `BufferDefaults` periods (or
    /// as many as the device insists on).
    public var periodFrames: Int?
    /// Total buffered latency in milliseconds; default: the route's `BufferDefaults`.
    public var latencyMs: Double?

    public init(
        device: String = "default", rate: Int = Timeline.defaultSampleRate, channels: Int = 2,
        format: SampleFormat? = nil,
        periodFrames: Int? = nil, latencyMs: Double? = nil
    ) {
        self.device = device
        self.rate = rate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.latencyMs = latencyMs
    }
}

/// The buffer a paced device gets unless asked otherwise: the one place it is decided.
///
/// A cue lands on its frame at any latency (the buffer only delays when it is heard, and the
/// engine knows by how much), so the default is chosen to survive a busy machine and to cost
/// little, not for a low number: a buffer of a few milliseconds runs dry on a loaded machine
/// even through a sound server, and every period is a wake-up, which is what gong's CPU goes on.
/// `bench/exactness.py` measures whether a buffer holds, `bench/live.py` what it costs; the runs
/// behind these two: bench/RESULTS.md, "Latency: the runs behind the defaults".
public struct BufferDefaults: Sendable, Equatable {
    public var latencyMs: Double
    public var periodsPerBuffer: Int

    /// A route that can take back what it has not played (gong's PulseAudio client): a long
    /// buffer, as aplay's, since a key press is rendered again into it and heard at once. Four
    /// periods, as aplay takes.
    public static let takingBack = BufferDefaults(latencyMs: 500, periodsPerBuffer: 4)
    /// A route that cannot (ALSA's plugins, a sound card here): a key press waits out what is
    /// buffered, so the buffer stays short enough for one to be heard within 250 ms: 150 ms in
    /// three periods (a sound server's ALSA plugin takes no fewer), at most 200 ms in all.
    public static let fixed = BufferDefaults(latencyMs: 150, periodsPerBuffer: 3)

    /// Both defaults in words, for help texts: built from them, so it cannot disagree.
    public static var described: String {
        "\(Int(takingBack.latencyMs)) in \(takingBack.periodsPerBuffer) periods where gong takes back what a key"
            + " press changes (its PulseAudio client, PipeWire, JACK); \(Int(fixed.latencyMs)) in"
            + " \(fixed.periodsPerBuffer) through ALSA, where a key press waits for the buffer"
    }

    /// Both default periods at `rate` in words, for help texts: what `PCMRequest` asks for when
    /// given neither a period nor a latency, so it cannot disagree.
    public static func describedPeriods(at rate: Int) -> String {
        let unasked = PCMRequest(rate: rate)
        func frames(_ defaults: BufferDefaults) -> Int {
            unasked.periodFrames(at: rate, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        }
        let kHz = rate % 1000 == 0 ? "\(rate / 1000)" : "\(Double(rate) / 1000)"
        return "\(frames(takingBack)) at \(kHz) kHz through pulse, \(frames(fixed)) through ALSA"
    }
}

extension PCMRequest {
    /// Frames per period to ask for at `rate`: as asked, else the latency over
    /// `periodsPerBuffer` periods. Each wake-up refills a period, so a longer latency also means
    /// fewer wake-ups.
    func periodFrames(at rate: Int, periodsPerBuffer: Int, defaults: BufferDefaults) -> Int {
        periodFrames ?? max(16, latencyFrames(at: rate, defaults: defaults) / periodsPerBuffer)
    }

    /// Frames of buffer around the period the device granted: the latency asked for, and at
    /// least `periodsPerBuffer` periods.
    func bufferFrames(at rate: Int, period: Int, periodsPerBuffer: Int, defaults: BufferDefaults) -> Int {
        max(periodsPerBuffer * period, latencyFrames(at: rate, defaults: defaults))
    }

    private func latencyFrames(at rate: Int, defaults: BufferDefaults) -> Int {
        Int((latencyMs ?? defaults.latencyMs) / 1000 * Double(rate))
    }
}

/// What the device granted.
public struct PCMConfiguration: Sendable, Equatable {
    public var device: String
    public var rate: Int
    public var channels: Int
    public var format: SampleFormat
    public var periodFrames: Int
    public var bufferFrames: Int
    /// True when the device hands its audio to a sound server (PulseAudio, PipeWire, JACK)
    /// through a plugin's own thread, rather than to a sound card's buffer.
    public var soundServer: Bool
    /// How far apart two honest status reports of this device may place the same frame: the
    /// device clock takes anything later than this (and a little drift) for audio that was lost.
    /// It differs by route — gong's PulseAudio client reads the server's own reports, ALSA's
    /// plugins report through a thread of their own (milliseconds apart, more when busy), a
    /// sound card may move its position a period at a time. How far apart each route's reports
    /// were seen: bench/RESULTS.md, "The routes, as the README gave them".
    public var reportJitterNanoseconds: Int64
    /// True when the device can take back frames it has not played (`PCM.rewind`): the engine
    /// then keeps what it needs to render them again.
    public var takesBack: Bool
    /// False for a device that takes frames as fast as they come (ALSA's `null`): nothing paces
    /// the thread that feeds it, which then never waits.
    public var paced: Bool
    /// How long after the device plays a frame a listener hears it, beyond what the device's
    /// delay counts: a Snapcast server's chunk and buffer, between its reading gong's stream and
    /// every room playing it. 0 for a device whose delay reaches the listener.
    public var heardAfterNanoseconds: Int64
    /// True when a report may place a frame late but never early (JACK's, from when each cycle's
    /// callback woke): the device clock then keeps the earliest placement, as for status calls,
    /// rather than the median it keeps of a server clock that wobbles both ways.
    public var reportsNeverEarly: Bool
    /// False when the device's reports cannot confirm a frame however closely they agree:
    /// pipewire-pulse's speak of the graph's last cycle, and a cycle the server itself was late
    /// for moves the stream a quantum later unseen (docs/routes.md). gong then says at best that
    /// the reports are rough, never that every cue was on its frame.
    public var confirmsFrames: Bool

    public init(
        device: String, rate: Int, channels: Int, format: SampleFormat, periodFrames: Int, bufferFrames: Int,
        soundServer: Bool = false, reportJitterNanoseconds: Int64? = nil, takesBack: Bool = false, paced: Bool = true,
        heardAfterNanoseconds: Int64 = 0, reportsNeverEarly: Bool = false, confirmsFrames: Bool = true
    ) {
        self.paced = paced
        self.confirmsFrames = confirmsFrames
        self.reportsNeverEarly = reportsNeverEarly
        self.heardAfterNanoseconds = heardAfterNanoseconds
        self.device = device
        self.rate = rate
        self.channels = channels
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.soundServer = soundServer
        self.takesBack = takesBack
        self.reportJitterNanoseconds =
            reportJitterNanoseconds
            ?? (soundServer
                ? 30_000_000 : FrameTime.nanoseconds(ofFrames: Int64(periodFrames), rate: Int64(rate)) + 2_000_000)
    }

    public var latencySeconds: Double { Double(bufferFrames) / Double(rate) }
}

/// A moment on CLOCK_MONOTONIC, as ALSA reports it.
public struct MonotonicTime: Sendable, Equatable, Comparable, BitwiseCopyable {
    public var nanoseconds: Int64

    @_noAllocation @_noLocks
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    @_noAllocation @_noLocks
    init(_ stamp: timespec) { nanoseconds = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec) }

    /// Read on the audio thread too: `clock_gettime` of CLOCK_MONOTONIC allocates nothing and
    /// takes no lock (Linux normally answers it from the vDSO, without a system call). The
    /// checker cannot see into libc, so that is vouched for here.
    @_noAllocation @_noLocks
    public static func now() -> MonotonicTime {
        var stamp = timespec()
        _unsafePerformance { _ = clock_gettime(CLOCK_MONOTONIC, &stamp) }
        return MonotonicTime(stamp)
    }

    public var seconds: Double { Double(nanoseconds) / 1e9 }
    public static func < (a: MonotonicTime, b: MonotonicTime) -> Bool { a.nanoseconds < b.nanoseconds }
}

/// The device's state at one instant: how much is queued and when that was measured.
public struct PCMStatus: Sendable, Equatable, BitwiseCopyable {
    public enum State: Sendable, Equatable, BitwiseCopyable {
        case prepared, running, underrun, draining, paused, suspended, disconnected, other
    }

    public var state: State
    /// Frames written but not yet heard: the next frame written is heard `delay` frames from `timestamp`.
    public var delayFrames: Int
    public var timestamp: MonotonicTime
    /// What the last underrun the device told of (`-EPIPE`) cost, in its own frames, when the
    /// device measured it itself (gong's PulseAudio client, from the server's count of the
    /// silence: `UnderrunMeasure`): set on the first report after the measure, nil otherwise.
    /// Without it the device clock measures the underrun from the reports' times.
    public var underrunLostFrames: Int64?

    public init(state: State, delayFrames: Int, timestamp: MonotonicTime, underrunLostFrames: Int64? = nil) {
        self.state = state
        self.delayFrames = delayFrames
        self.timestamp = timestamp
        self.underrunLostFrames = underrunLostFrames
    }
}

/// A playback device as the real-time loop sees it: the seam where tests inject faults.
///
/// The calls mirror ALSA's and return what ALSA returns — a frame count, 0, or a negative errno
/// (`-EPIPE` underrun, `-ESTRPIPE` suspended, `-EAGAIN`, `-EINTR`, `-ENODEV` gone) — so the loop
/// handles real devices and injected faults the same way.
///
/// What the calls cost the audio thread, which makes them all but `close` (through
/// `DeviceCalls`, the one place the compiler's checks stop): `wait` and `drain` wait by design
/// (an ALSA write would wait too for room it lacks, which the loop waits for first); nothing is
/// opened or closed (the control side opens a device and calls `close`); and on ALSA's `null`
/// and the hand-off ring of gong's PipeWire and JACK streams nothing allocates or locks. Two
/// sound-server routes do, inside their libraries, accepted because it is theirs and bounded:
/// - gong's PulseAudio client (`PulsePCM`): `status` sends the server a timing request about
///   once a second, and libpulse allocates for each (a handful in a few seconds: `gong-bench`
///   counts them, docs/benchmarks.md "The real-time path"); the server's answer is what places
///   cues in time.
/// - ALSA's `pulse` plugin (any ALSA name that leads to a server): each call takes the lock the
///   plugin shares with its own thread, and libpulse allocates there too (counted by the same
///   benchmark).
/// The engine reads the status at most five times a second once the clock is known
/// (`PushLoop.statusIntervalSeconds`), which keeps those costs to a handful a second.
public protocol PCM: AnyObject, SendableMetatype {
    var configuration: PCMConfiguration { get }
    /// Queues `frames` interleaved frames in the device's format; may write fewer.
    func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int
    /// Blocks until a period can be written, at most `timeoutMs`. 1 ready, 0 timeout,
    /// `PCMWait.woken`, <0 error.
    func wait(timeoutMs: Int32) -> Int32
    /// `snd_pcm_recover`: re-prepares after an underrun or a suspend; <0 if it cannot.
    func recover(_ error: Int32) -> Int32
    /// Plays out what was written, then returns: within about the buffer's length. A device that
    /// counts its own losses (`silenceHeardFrames`) returns `-EPIPE` as soon as it counts one, so
    /// that what it still holds can be taken back and rendered again on its time; drained again
    /// after.
    func drain() -> Int32
    /// Nil when the status cannot be read (the device is gone).
    func status() -> PCMStatus?
    func close()
    /// Frames at the end of what was written that can still be replaced before they are heard;
    /// 0 when the device cannot take frames back.
    func rewindableFrames() -> Int
    /// Takes back the last `frames` frames written (at most `rewindableFrames()`): the next
    /// writes replace them, so the stream's frame count stays exact. Returns the frames taken
    /// back — all of them, or 0.
    func rewind(frames: Int) -> Int
    /// From now on `wait` returns `PCMWait.woken` as soon as `descriptor` (a pipe's read end) becomes
    /// readable, having read it: how the control side gets a key press to the audio thread
    /// without waiting out a long period. A device that cannot watch it wakes a period later.
    func wakeWhenReadable(_ descriptor: Int32)
    /// The frames heard as silence in place of gong's since the device opened, to the frame,
    /// when the device knows them: a sound server's callback fed from gong's ring counts every
    /// frame it could not fill and every cycle the server ran without it. Nil when the device
    /// cannot say (ALSA, a sound server's own buffer); the device clock then measures what an
    /// underrun cost from the reports that follow it, which a wobbling clock can get wrong.
    func silenceHeardFrames() -> Int64?
    /// How long the device's clock has stood still in all while its frames waited, when the
    /// device can tell: jack2's timer-driven driver, woken more than a period late, starts its
    /// timeline again from then, so every frame after is heard that much later though none was
    /// skipped. Nil when the device cannot say.
    func clockStoppedNanoseconds() -> Int64?
    /// The device frame (a count of frames written since the device opened, less those taken
    /// back) before which the earliest loss since the last call landed, and forgets it: every
    /// frame from there on is heard late by the silence counted since (`silenceHeardFrames`).
    /// What of it gong can no longer take back was heard late. Nil when the device cannot say,
    /// or no loss landed.
    func takeLossFrame() -> Int64?
}

/// What `PCM.wait` returns besides 1 (a period of room), 0 (timeout) and a negative errno.
public enum PCMWait {
    /// The wake descriptor was rung: there are commands to take.
    public static var woken: Int32 {
        @_noAllocation @_noLocks get { 2 }
    }
}

extension PCM {
    public func rewindableFrames() -> Int { 0 }
    public func rewind(frames: Int) -> Int { 0 }
    public func wakeWhenReadable(_ descriptor: Int32) {}
    public func silenceHeardFrames() -> Int64? { nil }
    public func clockStoppedNanoseconds() -> Int64? { nil }
    public func takeLossFrame() -> Int64? { nil }
}
