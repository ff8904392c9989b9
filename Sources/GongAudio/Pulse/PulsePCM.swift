import Glibc
import GongCore

/// Plays through a PulseAudio server (or PipeWire's, which speaks the same protocol) as the
/// server's own clients do, rather than through ALSA's `pulse` plugin.
///
/// Why: the plugin runs a client thread of its own next to the thread that writes, and every
/// period crosses between the two under the plugin's lock. Here the audio thread is the whole
/// client: one non-threaded main loop that it drives itself while it waits for room, so a period
/// costs a wake-up or two, no lock and no second thread.
///
/// The stream's buffer is the latency asked for (`tlength`), refilled a period at a time
/// (`minreq`, with `PA_STREAM_EARLY_REQUESTS` so the server asks for each period as soon as
/// there is room, as a sound card would), and playback starts once it is full (`prebuf` =
/// `tlength`), as ALSA's start threshold does: the same buffer ALSA's plugin keeps. Asking for
/// the latency as a whole instead (`PA_STREAM_ADJUST_LATENCY`) lets the server keep part of it
/// and leave gong's client the rest, too little to ride out a busy machine
/// (docs/how-it-works.md, "Talking to PulseAudio directly").
///
/// Errors come back as ALSA's would, so the real-time loop treats both alike: a server that
/// went away, or a stream it killed, is `-ENODEV`.
public final class PulsePCM: PCM {
    public let configuration: PCMConfiguration
    private var mainLoop: OpaquePointer?
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    /// The timing report asked for and not yet answered, and when it was asked for (system
    /// clock, nanoseconds).
    private var timingRequest: OpaquePointer?
    private var lastTimingRequest: Int64 = 0
    /// Underruns the server has told of (its callback counts them here), and how many of them
    /// the real-time loop has been told of as `-EPIPE`. A short one the server hides in its own
    /// buffer is still silence heard: this is how the session clock learns of it, however short.
    private let underflows: UnsafeMutablePointer<Int>
    private var underflowsReported = 0
    /// Reports measured before the last underrun was told of say nothing of the silence it left
    /// (system clock, nanoseconds).
    private var reportsValidFrom: Int64 = 0
    /// What an underrun cost, measured on the sink's own clock (`UnderrunMeasure`); nil on
    /// pipewire-pulse, whose reports are too stale for it (the device clock measures there).
    private var underrunMeasure: UnderrunMeasure?
    /// Set by the main loop when the server says the stream started again after an underrun.
    private let started: UnsafeMutablePointer<Bool>
    private let frameBytes: Int
    private let periodBytes: Int
    /// How much longer than a period a wait that must sleep sleeps: half a period, at most
    /// 50 ms. The server gives room in lumps, as its graph plays (PipeWire a period at a time,
    /// up to a 43 ms quantum after it was played): a thread that slept only until the room it
    /// lacked was due often found none yet and woke again when the lump came (the wake-ups each
    /// way are in docs/benchmarks.md, "Live, against aplay").
    private let napSlackFrames: Int64
    /// Bytes taken back and not yet written over: the next write goes that far back.
    private var takenBackBytes = 0
    /// Where the reports put the read index, for a take-back's reach.
    private var readLine = PulseReadLine()
    /// Set by the main loop when the engine rings its wake descriptor (see `wakeWhenReadable`).
    private let rung: UnsafeMutablePointer<Bool>
    private var wakeDescriptor: Int32 = -1

    static let bufferDefaults = BufferDefaults.takingBack
    /// What is kept out of reach of a take-back on PulseAudio: the time the new frames take to
    /// reach the server, with room to spare (its read line is its reports' earliest, and it
    /// rewinds what it had read ahead).
    static let takeBackMarginNanoseconds: Int64 = 50_000_000
    /// On pipewire-pulse, beyond the oldest a report may be (`PulseReportAge`): the time the
    /// new frames take to reach the server. It has no rewind, and reads a whole quantum at the
    /// start of a cycle: from a report up to a quantum stale, its read index can be a quantum
    /// ahead of the time since, and what a take-back writes behind it is dropped unreported.
    static let pipeWireTakeBackTransitNanoseconds: Int64 = 10_000_000
    /// The server's raw timing reports place frame 0 within 1 ms of each other on PulseAudio
    /// (PulseClientTests): a frame heard more than 8 ms later than they allow is audio lost.
    /// On pipewire-pulse reports are up to a quantum stale, and the bound is that and
    /// `pipeWireReportJitterNanoseconds` (see `PulseReportAge`).
    public static let reportJitterNanoseconds: Int64 = 8_000_000
    /// On pipewire-pulse, beyond the oldest a report may be: how late its answer may be stamped
    /// after the cycle it speaks of, less a quantum (a busy server thread, the round trip).
    static let pipeWireReportJitterNanoseconds: Int64 = 3_000_000
    /// How far apart this server's reports may place a frame (`PCMConfiguration`), given the
    /// oldest one of its reports may be (`PulseReportAge`; nil on PulseAudio).
    public static func reportJitterNanoseconds(reportAge: Int64?) -> Int64 {
        reportAge.map { max(reportJitterNanoseconds, $0 + pipeWireReportJitterNanoseconds) } ?? reportJitterNanoseconds
    }

    /// What a take-back leaves alone, given the oldest one of the server's reports may be.
    static func takeBackMarginNanoseconds(reportAge: Int64?) -> Int64 {
        reportAge.map { max(takeBackMarginNanoseconds, $0 + pipeWireTakeBackTransitNanoseconds) }
            ?? takeBackMarginNanoseconds
    }

    /// The longest a report of this server may lag behind its stamp: nil on PulseAudio.
    public let reportAgeNanoseconds: Int64?
    private let takeBackMargin: Int64
    /// How long opening may wait for the server (a stuck server must not hang the command).
    static let openTimeoutMs: Int64 = 5000

    /// - Parameter sink: the server's sink by name; nil for its default sink.
    public init(_ request: PCMRequest, sink: String?) throws(AudioDeviceError) {
        let failure = OpenFailure(device: request.device)
        guard let loop = pulseMainLoopNew() else {
            throw failure(-ENOMEM, "pa_mainloop_new", .other, "out of memory")
        }
        var context: OpaquePointer?
        var stream: OpaquePointer?
        var opened = false
        defer { if !opened { pulseRelease(loop: loop, context: context, stream: stream) } }

        guard let client = pulseContextNew(loop) else {
            throw failure(-ENOMEM, "pa_context_new", .other, "out of memory")
        }
        context = client
        try Self.connect(client, on: loop, failure)
        try Self.findSink(sink, context: client, loop: loop, failure)
        let format = request.format ?? .float32
        let playback = try Self.newStream(request, format: format, context: client, failure)
        stream = playback
        let frameBytes = format.bytesPerSample * request.channels
        let asked = Self.streamShape(request, frameBytes: frameBytes)
        try Self.connectPlayback(playback, sink: sink, shape: asked, context: client, loop: loop, failure)
        let reportAge = Self.reportAge(of: playback, context: client, loop: loop, rate: request.rate)
        underflows = .allocate(capacity: 1)
        underflows.initialize(to: 0)
        rung = .allocate(capacity: 1)
        rung.initialize(to: false)
        started = .allocate(capacity: 1)
        started.initialize(to: false)
        pulseCountUnderflows(playback, into: underflows)
        pulseNoteStarts(playback, setting: started)
        let granted = pulseGrantedShape(playback, asked: asked)
        mainLoop = loop
        self.context = client
        self.stream = playback
        self.frameBytes = frameBytes
        periodBytes = max(frameBytes, granted.periodBytes / frameBytes * frameBytes)
        napSlackFrames = min(Int64(periodBytes / frameBytes / 2), Int64(granted.rate) / 20)
        reportAgeNanoseconds = reportAge
        underrunMeasure = reportAge == nil ? UnderrunMeasure() : nil
        takeBackMargin = PulsePCM.takeBackMarginNanoseconds(reportAge: reportAge)
        configuration = PCMConfiguration(
            device: request.device, rate: granted.rate, channels: granted.channels, format: format,
            periodFrames: periodBytes / frameBytes, bufferFrames: granted.bufferBytes / frameBytes,
            soundServer: true, reportJitterNanoseconds: PulsePCM.reportJitterNanoseconds(reportAge: reportAge),
            takesBack: true, confirmsFrames: reportAge == nil)
        opened = true
    }

    /// An open's failure, told as ALSA's would be (`code` is a negative errno).
    private struct OpenFailure {
        let device: String

        func callAsFunction(
            _ code: Int32, _ operation: String, _ reason: AudioDeviceError.Reason, _ detail: String,
            server: String? = nil
        ) -> AudioDeviceError {
            AudioDeviceError(
                reason, errno: -code, operation: operation, device: device, system: .pulseAudio, detail: detail,
                server: server)
        }
    }

    /// The context connected to the server, within `openTimeoutMs`.
    private static func connect(_ client: OpaquePointer, on loop: OpaquePointer, _ failure: OpenFailure)
        throws(AudioDeviceError)
    {
        guard pulseConnect(client, on: loop, timeoutMs: PulsePCM.openTimeoutMs) else {
            let error = pulseContextError(client)
            // A server that never answers leaves no error code: the library's text for 0 is "OK".
            let why = error.code == 0 ? "it did not answer within \(PulsePCM.openTimeoutMs / 1000) s" : error.text
            throw failure(
                error.code == 0 ? -ETIMEDOUT : -pulseErrnoValue(error.code), "pa_context_connect", .noServer, why,
                server: pulseServerName(client))
        }
    }

    /// Refuses a sink the server does not have. PipeWire's PulseAudio server (0.3.65) plays a
    /// stream aimed at a sink it does not have on its default sink instead of refusing it: the
    /// sink is looked for first.
    private static func findSink(
        _ sink: String?, context client: OpaquePointer, loop: OpaquePointer, _ failure: OpenFailure
    ) throws(AudioDeviceError) {
        if let sink, pulseHasSink(named: sink, context: client, loop: loop, timeoutMs: PulsePCM.openTimeoutMs) == false
        {
            throw failure(-ENOENT, "pa_context_get_sink_info_by_name", .noSuchDevice, "no such sink '\(sink)'")
        }
    }

    /// A playback stream of the request's format, rate and channels, not yet connected.
    private static func newStream(
        _ request: PCMRequest, format: SampleFormat, context client: OpaquePointer, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> OpaquePointer {
        let created = pulseStreamNew(client, format: format, rate: request.rate, channels: request.channels)
        guard created.valid else {
            // pa_sample_spec_valid says no more than "invalid": the channels or the rate.
            let channelsFit = (1...2).contains(request.channels)
            throw failure(
                -EINVAL, "pa_sample_spec_valid", channelsFit ? .rateUnsupported : .channelsUnsupported,
                "cannot play \(request.channels) channel(s) at \(request.rate) Hz; the server takes 1–2 channels at 1 Hz–384 kHz here"
            )
        }
        guard let playback = created.stream else {
            let error = pulseContextError(client)
            throw failure(-pulseErrnoValue(error.code), "pa_stream_new", .other, error.text)
        }
        return playback
    }

    /// The buffer and period to ask the server for: the latency asked for (default
    /// `BufferDefaults.takingBack`) over four periods. (Two periods left the server a fraction of
    /// a millisecond between asking for a period and running dry.)
    private static func streamShape(_ request: PCMRequest, frameBytes: Int) -> PulseStreamShape {
        let defaults = PulsePCM.bufferDefaults
        let period = request.periodFrames(
            at: request.rate, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        let buffer = request.bufferFrames(
            at: request.rate, period: period, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        return PulseStreamShape(
            rate: request.rate, channels: request.channels, bufferBytes: buffer * frameBytes,
            periodBytes: period * frameBytes)
    }

    /// The stream connected to `sink` (or the default sink) with the buffer asked for.
    private static func connectPlayback(
        _ playback: OpaquePointer, sink: String?, shape asked: PulseStreamShape, context client: OpaquePointer,
        loop: OpaquePointer, _ failure: OpenFailure
    ) throws(AudioDeviceError) {
        guard pulseConnectPlayback(playback, sink: sink, shape: asked, loop: loop, timeoutMs: PulsePCM.openTimeoutMs)
        else {
            let error = pulseContextError(client)
            if pulseIsNoSuchEntity(error.code) {
                throw failure(
                    -ENOENT, "pa_stream_connect_playback", .noSuchDevice, "no such sink '\(sink ?? "")'")
            } else if error.code == 0 {
                // The server is there but started no stream: typically PipeWire without its
                // session manager, which links streams to sinks.
                throw failure(
                    -ETIMEDOUT, "pa_stream_connect_playback", .timedOut,
                    "took no stream within \(PulsePCM.openTimeoutMs / 1000) s",
                    server: pulseServerName(client))
            }
            let code = -pulseErrnoValue(error.code)
            throw failure(code, "pa_stream_connect_playback", AudioDeviceError.Reason(errno: -code), error.text)
        }
    }

    /// The oldest a report of this server may be (`PulseReportAge`), asked once, here, of the
    /// server: whether it is PipeWire's, whose reports are stale, and then of its quantum.
    private static func reportAge(
        of playback: OpaquePointer, context client: OpaquePointer, loop: OpaquePointer, rate: Int
    ) -> Int64? {
        let software = pulseServerSoftware(context: client, loop: loop, timeoutMs: PulsePCM.openTimeoutMs)
        return PulseReportAge.maximumNanoseconds(
            serverName: software,
            properties: PulseReportAge.isPipeWire(serverName: software)
                ? pulseStreamProperties(
                    playback, keys: ["node.latency", "clock.quantum-limit"], context: client, loop: loop,
                    timeoutMs: PulsePCM.openTimeoutMs) : [:],
            rate: rate)
    }

    deinit {
        close()
        underflows.deallocate()
        rung.deallocate()
        started.deallocate()
    }

    /// `-EPIPE` once for each underrun the server told of, as ALSA reports one. Told before
    /// anything more is written, which is when the silence it left can be measured (see
    /// `UnderrunMeasure`): the report that anchors the measure is asked for here.
    private var underrun: Int32 {
        guard underflows.pointee > underflowsReported, let stream else { return 0 }
        underflowsReported = underflows.pointee
        reportsValidFrom = PulsePCM.systemClockNanoseconds()
        readLine.forget()
        if underrunMeasure != nil {
            started.pointee = false
            if let timingRequest { pulseOperationRelease(timingRequest) }
            timingRequest = pulseRequestTiming(stream)
            lastTimingRequest = reportsValidFrom
            let index = pulseUnderflowIndex(stream)
            underrunMeasure?.begin(
                underflowFrame: index < 0 ? -1 : index / Int64(frameBytes), toldWallNanoseconds: reportsValidFrom)
        }
        return -EPIPE
    }

    /// The server's sinks as devices gong can name (`pulse:SINK`); none when no server answers
    /// within a second.
    public static func sinks() -> [AudioDeviceInfo] {
        guard let loop = pulseMainLoopNew() else { return [] }
        let context = pulseContextNew(loop)
        defer { pulseRelease(loop: loop, context: context, stream: nil) }
        guard let context, pulseConnect(context, on: loop, timeoutMs: 1000) else { return [] }
        return pulseSinks(context: context, loop: loop, timeoutMs: 1000).map {
            AudioDeviceInfo(name: "pulse:" + $0.name, description: "PulseAudio sink: " + $0.description)
        }
    }

    /// Whether a server answers a client within the timeout (at once when there is no socket).
    public static func serverAnswers(timeoutMs: Int64) -> Bool {
        guard let loop = pulseMainLoopNew() else { return false }
        let context = pulseContextNew(loop)
        defer { pulseRelease(loop: loop, context: context, stream: nil) }
        guard let context else { return false }
        return pulseConnect(context, on: loop, timeoutMs: timeoutMs)
    }

    private static func systemClockNanoseconds() -> Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec)
    }

    /// The stream is gone with its server: -ENODEV, or 0 while it plays.
    private var broken: Int32 {
        guard let stream, let context, pulseStreamIsReady(context: context, stream: stream) else { return -ENODEV }
        return 0
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        guard broken == 0, let stream else { return Int(-ENODEV) }
        let failure = underrun
        guard failure == 0 else { return Int(failure) }
        guard !holdingWrites() else { return Int(-EAGAIN) }
        let writable = pulseWritableBytes(stream)
        guard writable >= 0 else { return Int(-ENODEV) }
        let count = min(frames, (writable + takenBackBytes) / frameBytes)
        guard count > 0 else { return Int(-EAGAIN) }
        // Frames taken back are written over: the write starts that far back in the stream, and
        // both the library and the server count the request as the net change.
        guard pulseWrite(stream, bytes, count: count * frameBytes, backBytes: takenBackBytes),
            let mainLoop, PulsePCM.sendWritten(mainLoop)
        else { return Int(-ENODEV) }
        takenBackBytes = 0
        return count
    }

    /// Waits for a period of room. The server frees room as its sink plays and tells of it in
    /// messages, as often as its graph wakes. So when there is less than a period, the thread
    /// sleeps for a whole period and a little more, whatever part of one it has (the part came
    /// in a lump, and the rest will too), then takes every message that has arrived in one
    /// pass, and waits on the server only if that was not yet enough. It often finds two
    /// periods, which the engine writes before it sleeps again. Underruns and a lost server are
    /// seen at the latest a period and a half later; a rung wake descriptor at once.
    public func wait(timeoutMs: Int32) -> Int32 {
        guard let loop = mainLoop else { return -EBADFD }
        let deadline = MonotonicTime.now().nanoseconds + Int64(timeoutMs) * 1_000_000
        var napped = false
        while true {
            let failure = broken != 0 ? broken : underrun
            guard failure == 0, let stream else { return failure }
            if rung.pointee {
                rung.pointee = false
                return PCMWait.woken
            }
            followUnderrunMeasure(stream)
            let holding = holdingWrites()
            let writable = pulseWritableBytes(stream) + takenBackBytes
            if writable >= periodBytes && !holding { return 1 }
            var remaining = deadline - MonotonicTime.now().nanoseconds
            guard remaining > 0 else { return 0 }
            // Held for an anchor that may not come: no longer than the hold has left, at most.
            if holding { remaining = min(remaining, UnderrunMeasure.anchorHoldNanoseconds) }
            // While an underrun is measured the server's word that the stream started again is
            // waited for, not slept through: the report asked for then measures it best.
            if !napped && !(underrunMeasure?.isMeasuring ?? false) {
                napped = true
                let napFrames = Int64(periodBytes / frameBytes) + napSlackFrames
                if nap(
                    nanoseconds: min(
                        remaining, FrameTime.nanoseconds(ofFrames: napFrames, rate: Int64(configuration.rate))))
                {
                    return PCMWait.woken
                }
                guard pulseRunOnce(loop, timeoutMicroseconds: 0) >= 0 else { return -ENODEV }
                continue
            }
            guard pulseRunOnce(loop, timeoutMicroseconds: remaining / 1000) >= 0 else { return -ENODEV }
        }
    }

    /// Takes the answer to the timing request, if it came: while an underrun is measured, it is
    /// the measure's (`UnderrunMeasure`). The next is asked for at once while the measure
    /// anchors, and once it is anchored, as the server says the stream plays again and then as
    /// each report of it playing is answered.
    private func followUnderrunMeasure(_ stream: OpaquePointer) {
        if let pending = timingRequest, pulseOperationIsDone(pending) {
            pulseOperationRelease(pending)
            timingRequest = nil
            if let report = pulseTimingReport(stream) {
                underrunMeasure?.take(report, frameBytes: frameBytes, rate: configuration.rate)
            }
        }
        guard timingRequest == nil, let measure = underrunMeasure else { return }
        let playReported = started.pointee && measure.awaitsPlay
        if playReported { started.pointee = false }
        if playReported || measure.wantsMorePlays || holdingWrites() {
            timingRequest = pulseRequestTiming(stream)
            lastTimingRequest = PulsePCM.systemClockNanoseconds()
        }
    }

    /// Whether writes are held while the underrun's anchors are taken (`UnderrunMeasure`): a
    /// write would have the server rewind, and its reports no longer count the sink's silence.
    private func holdingWrites() -> Bool {
        guard underrunMeasure?.isMeasuring ?? false else { return false }
        return underrunMeasure?.holdsWrites(atWallNanoseconds: PulsePCM.systemClockNanoseconds()) ?? false
    }

    /// Hands the server what was written, at once: `pa_stream_write` only queues the frames,
    /// and the library sends them when its main loop next runs. Left to the next wait, which
    /// sleeps first, every period reached the server a nap late, and the first buffer a whole
    /// period late (125 ms at 500 ms in 4 periods, on PulseAudio and PipeWire alike); frames
    /// written over after a take-back would have arrived after the server had read them.
    /// False when the loop cannot go on.
    private static func sendWritten(_ loop: OpaquePointer) -> Bool {
        // One pass sends what the socket takes; a few more, and anything left waits for the
        // next pass rather than spin here.
        for _ in 0..<4 {
            let dispatched = pulseRunOnce(loop, timeoutMicroseconds: 0)
            guard dispatched >= 0 else { return false }
            if dispatched == 0 { break }
        }
        return true
    }

    /// Sleeps, or less if the wake descriptor rings: true then (and it has been read).
    private func nap(nanoseconds: Int64) -> Bool {
        guard nanoseconds > 0 else { return false }
        guard wakeDescriptor >= 0 else {
            var interval = timespec(
                tv_sec: Int(nanoseconds / FrameTime.nanosecondsPerSecond),
                tv_nsec: Int(nanoseconds % FrameTime.nanosecondsPerSecond))
            var left = timespec()
            while clock_nanosleep(CLOCK_MONOTONIC, 0, &interval, &left) == EINTR { interval = left }
            return false
        }
        // poll's milliseconds, rounded up: a nap a little long only finds more room.
        var watched = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: (nanoseconds + 999_999) / 1_000_000)
        guard poll(&watched, 1, milliseconds) > 0, watched.revents & Int16(POLLIN) != 0 else { return false }
        Doorbell.drain(wakeDescriptor)
        return true
    }

    /// The main loop watches the descriptor too, so a ring while it waits on the server ends
    /// that wait as well.
    public func wakeWhenReadable(_ descriptor: Int32) {
        guard let mainLoop else { return }
        wakeDescriptor = descriptor
        pulseWatch(descriptor, on: mainLoop, setting: rung)
    }

    /// What is still in the server's queue for this stream, less the margin.
    public func rewindableFrames() -> Int {
        guard broken == 0, let stream, let report = validReport(stream) else { return 0 }
        readLine.take(report, frameBytes: frameBytes, rate: Int64(configuration.rate))
        return Int(
            clamping: PulsePCM.unclaimedFrames(
                by: report, line: readLine, atWallNanoseconds: PulsePCM.systemClockNanoseconds(),
                frameBytes: frameBytes,
                rate: Int64(configuration.rate), marginNanoseconds: takeBackMargin,
                takenBackFrames: Int64(takenBackBytes / frameBytes)))
    }

    /// What is still in the server's queue at `now`, less `marginNanoseconds` and what was taken
    /// back already: what was written (the report's write index, which libpulse moves on with
    /// each write) less the read index: where the reports' read line puts it now while the
    /// stream plays (the queue drains at the stream's rate), else the report's.
    static func unclaimedFrames(
        by report: PulseTimingReport, line: PulseReadLine, atWallNanoseconds now: Int64, frameBytes: Int,
        rate: Int64, marginNanoseconds: Int64, takenBackFrames: Int64
    ) -> Int64 {
        var read = report.readIndex / Int64(frameBytes)
        if report.playing, let moved = line.readFrames(atWallNanoseconds: now, rate: rate) { read = moved }
        var queued = report.writeIndex / Int64(frameBytes) - read
        queued -= FrameTime.frames(inNanoseconds: marginNanoseconds, rate: rate) + takenBackFrames
        return max(0, queued)
    }

    public func rewind(frames: Int) -> Int {
        guard frames > 0, frames <= rewindableFrames() else { return 0 }
        takenBackBytes += frames * frameBytes
        return frames
    }

    /// The server recovers from underruns by itself (it plays silence and waits for a full
    /// buffer again), so there is nothing to re-prepare: the `-EPIPE` only told the loop.
    public func recover(_ error: Int32) -> Int32 { error == -EPIPE || error == -ESTRPIPE ? broken : error }

    /// Plays out what was written, at most the buffer's length and a second.
    public func drain() -> Int32 {
        guard broken == 0, let stream, let loop = mainLoop else { return -ENODEV }
        return pulseDrain(stream, loop: loop, timeoutMs: Int64(configuration.latencySeconds * 1000) + 1000)
    }

    /// From the server's last timing report, untouched: at the moment it was measured, the
    /// frame at the stream's read index was heard `sink_usec` later, and every frame written since
    /// follows it. Not the library's interpolation between reports, which smooths a server's
    /// batching into milliseconds of error (docs/how-it-works.md, "Talking to PulseAudio
    /// directly").
    public func status() -> PCMStatus? {
        guard broken == 0, let stream else { return nil }
        followUnderrunMeasure(stream)
        // Each request costs libpulse an allocation on this thread and the server a round trip,
        // and a report is exact however old: one a second, one at once after an underrun, and
        // while an underrun is measured, each time the last was answered (should the server's
        // word that the stream started not come).
        let wallNanoseconds = PulsePCM.systemClockNanoseconds()
        if timingRequest == nil,
            wallNanoseconds - lastTimingRequest >= 1_000_000_000 || reportsValidFrom > lastTimingRequest
                || underrunMeasure?.awaitsPlay ?? false
        {
            timingRequest = pulseRequestTiming(stream)
            lastTimingRequest = wallNanoseconds
        }
        // The report's moment is on the system clock (the server's gettimeofday): move it to
        // CLOCK_MONOTONIC by the two clocks' present offset.
        let now = MonotonicTime.now()
        guard let report = validReport(stream) else {
            return PCMStatus(state: .prepared, delayFrames: 0, timestamp: now)
        }
        let measured = MonotonicTime(nanoseconds: report.measuredWallNanoseconds - (wallNanoseconds - now.nanoseconds))
        let queuedFrames = Int(report.writeIndex - report.readIndex) / frameBytes
        // An unknown sink latency comes as PA_USEC_INVALID: a report that says more than ten
        // seconds is out of bounds for the loop anyway, and must not overflow here.
        let sinkFrames = Int(min(report.sinkMicroseconds, 10_000_000) * UInt64(configuration.rate) / 1_000_000)
        var status = PCMStatus(
            state: report.playing ? .running : .prepared, delayFrames: queuedFrames + sinkFrames, timestamp: measured)
        if report.playing { status.underrunLostFrames = underrunMeasure?.takeLostFrames() }
        return status
    }

    /// The server's last timing report, if its indices are whole and it was measured after the
    /// last underrun was told of.
    private func validReport(_ stream: OpaquePointer) -> PulseTimingReport? {
        guard let report = pulseTimingReport(stream), report.measuredWallNanoseconds >= reportsValidFrom else {
            return nil
        }
        return report
    }

    public func close() {
        guard let mainLoop else { return }
        if let timingRequest { pulseOperationRelease(timingRequest) }
        timingRequest = nil
        pulseRelease(loop: mainLoop, context: context, stream: stream)
        self.mainLoop = nil
        context = nil
        stream = nil
    }
}
