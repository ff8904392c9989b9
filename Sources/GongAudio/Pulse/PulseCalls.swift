import CPulse
import Glibc
import GongCore

// Every libpulse call gong makes, one thin function each: the whole C surface of the server
// client in one place. `PulsePCM` holds the logic and does not import the library. A loop, a
// context, a stream and an operation are the library's opaque pointers.

// MARK: Main loop and context

func pulseMainLoopNew() -> OpaquePointer? { pa_mainloop_new() }

func pulseContextNew(_ loop: OpaquePointer) -> OpaquePointer? { pa_context_new(pa_mainloop_get_api(loop), "gong") }

/// Disconnects and frees what was made, in the order the library needs.
func pulseRelease(loop: OpaquePointer, context: OpaquePointer?, stream: OpaquePointer?) {
    if let stream {
        pa_stream_disconnect(stream)
        pa_stream_unref(stream)
    }
    if let context {
        pa_context_disconnect(context)
        pa_context_unref(context)
    }
    pa_mainloop_free(loop)
}

/// One pass of the main loop: poll its descriptors (the server's socket, its timers) for at
/// most the timeout, then dispatch what arrived. Negative when the loop cannot go on (a signal
/// that interrupts the poll is not that: the library counts it as nothing arrived).
func pulseRunOnce(_ loop: OpaquePointer, timeoutMicroseconds: Int64) -> Int32 {
    guard pa_mainloop_prepare(loop, Int32(clamping: timeoutMicroseconds)) >= 0, pa_mainloop_poll(loop) >= 0 else {
        return -1
    }
    return pa_mainloop_dispatch(loop)
}

/// Runs the main loop until `done` or the timeout; false on timeout or a loop that quit.
func pulseIterate(_ loop: OpaquePointer, timeoutMs: Int64, until done: () -> Bool) -> Bool {
    let deadline = MonotonicTime.now().nanoseconds + timeoutMs * 1_000_000
    while !done() {
        let remaining = deadline - MonotonicTime.now().nanoseconds
        guard remaining > 0, pulseRunOnce(loop, timeoutMicroseconds: remaining / 1000) >= 0 else { return false }
    }
    return true
}

/// Connects a client to the server, waiting at most the timeout; true once it is ready. No
/// autospawn: a server that is not running is an error to report, not one to start.
func pulseConnect(_ context: OpaquePointer, on loop: OpaquePointer, timeoutMs: Int64) -> Bool {
    pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0
        && pulseIterate(
            loop, timeoutMs: timeoutMs,
            until: {
                let state = pa_context_get_state(context)
                return state == PA_CONTEXT_READY || PA_CONTEXT_IS_GOOD(state) == 0
            })
        && pa_context_get_state(context) == PA_CONTEXT_READY
}

/// The client's last error: the library's code (0 when there was none) and its text.
func pulseContextError(_ context: OpaquePointer) -> (code: Int32, text: String) {
    let code = pa_context_errno(context)
    return (code, String(cString: pa_strerror(code)))
}

func pulseIsNoSuchEntity(_ code: Int32) -> Bool { code == Int32(PA_ERR_NOENTITY.rawValue) }

/// PulseAudio's error codes, as the errno the real-time loop knows.
func pulseErrnoValue(_ code: Int32) -> Int32 {
    switch pa_error_code(rawValue: UInt32(code)) {
    case PA_ERR_NOENTITY: ENOENT
    case PA_ERR_ACCESS: EACCES
    case PA_ERR_NOTSUPPORTED, PA_ERR_INVALID: EINVAL
    case PA_ERR_TIMEOUT: ETIMEDOUT
    case PA_ERR_BUSY: EBUSY
    case PA_ERR_CONNECTIONREFUSED: ECONNREFUSED
    case PA_ERR_CONNECTIONTERMINATED, PA_ERR_KILLED: ECONNRESET
    default: ENODEV
    }
}

/// The server a client reached or tried to reach, as a person would name it.
func pulseServerName(_ context: OpaquePointer) -> String {
    if let server = pa_context_get_server(context) { return String(cString: server) }
    if let server = getenv("PULSE_SERVER") { return String(cString: server) }
    return "the default address"
}

/// What an introspection query's callback fills. The library's callbacks can capture nothing,
/// so each query hands its answer object over as userdata.
class PulseAnswer {
    var complete = false

    /// The answer a callback was handed.
    static func from(_ userdata: UnsafeMutableRawPointer?) -> Self? {
        userdata.map { Unmanaged<Self>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// Starts a query with `answer` as its userdata and runs the loop until the answer is complete
/// or `timeoutMs` passes: whether it completed (not when the query could not start). A query
/// that did not complete is cancelled, so it never calls back into an answer that is gone.
func pulseAsk(
    _ answer: PulseAnswer, loop: OpaquePointer, timeoutMs: Int64,
    _ start: (UnsafeMutableRawPointer) -> OpaquePointer?
) -> Bool {
    let userdata = Unmanaged.passRetained(answer)
    defer { userdata.release() }
    guard let operation = start(userdata.toOpaque()) else { return false }
    defer { pa_operation_unref(operation) }
    let completed = pulseIterate(loop, timeoutMs: timeoutMs, until: { answer.complete })
    if !completed { pa_operation_cancel(operation) }
    return completed
}

/// Whether the server has a sink of this name; nil when it did not say in time.
func pulseHasSink(named name: String, context: OpaquePointer, loop: OpaquePointer, timeoutMs: Int64) -> Bool? {
    final class Answer: PulseAnswer {
        var found = false
        var missing = false
    }
    let answer = Answer()
    let completed = pulseAsk(answer, loop: loop, timeoutMs: timeoutMs) { userdata in
        pa_context_get_sink_info_by_name(
            context, name,
            { context, info, last, userdata in
                guard let answer = Answer.from(userdata) else { return }
                if info != nil {
                    answer.found = true
                } else if last < 0 {
                    answer.missing = pa_context_errno(context) == Int32(PA_ERR_NOENTITY.rawValue)
                    answer.complete = true
                } else if last > 0 {
                    answer.complete = true
                }
            }, userdata)
    }
    guard completed else { return nil }
    return answer.found ? true : answer.missing ? false : nil
}

/// The server's own name for itself (`pa_server_info.server_name`: "pulseaudio", or
/// "PulseAudio (on PipeWire 0.3.65)" from PipeWire's PulseAudio server); nil when it did not say
/// in time.
func pulseServerSoftware(context: OpaquePointer, loop: OpaquePointer, timeoutMs: Int64) -> String? {
    final class Answer: PulseAnswer {
        var name: String?
    }
    let answer = Answer()
    let completed = pulseAsk(answer, loop: loop, timeoutMs: timeoutMs) { userdata in
        pa_context_get_server_info(
            context,
            { _, info, userdata in
                guard let answer = Answer.from(userdata) else { return }
                answer.name = info?.pointee.server_name.map { String(cString: $0) }
                answer.complete = true
            }, userdata)
    }
    return completed ? answer.name : nil
}

/// The properties the server gives the stream's sink input, for the keys asked (those it does
/// not have are left out); empty when it did not say in time.
func pulseStreamProperties(
    _ stream: OpaquePointer, keys: [String], context: OpaquePointer, loop: OpaquePointer, timeoutMs: Int64
) -> [String: String] {
    final class Answer: PulseAnswer {
        let keys: [String]
        var found: [String: String] = [:]
        init(keys: [String]) { self.keys = keys }
    }
    let answer = Answer(keys: keys)
    let completed = pulseAsk(answer, loop: loop, timeoutMs: timeoutMs) { userdata in
        pa_context_get_sink_input_info(
            context, pa_stream_get_index(stream),
            { _, info, last, userdata in
                guard let answer = Answer.from(userdata) else { return }
                if let properties = info?.pointee.proplist {
                    for key in answer.keys {
                        if let value = pa_proplist_gets(properties, key) { answer.found[key] = String(cString: value) }
                    }
                }
                if last != 0 { answer.complete = true }
            }, userdata)
    }
    return completed ? answer.found : [:]
}

/// The server's sinks, name and description, as far as the listing got within the timeout.
func pulseSinks(context: OpaquePointer, loop: OpaquePointer, timeoutMs: Int64) -> [(name: String, description: String)]
{
    final class Listing: PulseAnswer {
        var sinks: [(name: String, description: String)] = []
    }
    let listing = Listing()
    _ = pulseAsk(listing, loop: loop, timeoutMs: timeoutMs) { userdata in
        pa_context_get_sink_info_list(
            context,
            { _, info, last, userdata in
                guard let listing = Listing.from(userdata) else { return }
                if last != 0 {
                    listing.complete = true
                } else if let sink = info?.pointee, let name = sink.name {
                    listing.sinks.append((String(cString: name), sink.description.map { String(cString: $0) } ?? ""))
                }
            }, userdata)
    }
    return listing.sinks
}

/// Watches `descriptor` from the main loop: when it is readable the loop drains it and sets
/// `flag`, so a ring ends a wait on the server too.
func pulseWatch(_ descriptor: Int32, on loop: OpaquePointer, setting flag: UnsafeMutablePointer<Bool>) {
    guard let api = pa_mainloop_get_api(loop), let watch = api.pointee.io_new else { return }
    _ = watch(
        api, descriptor, PA_IO_EVENT_INPUT,
        { _, _, descriptor, _, userdata in
            Doorbell.drain(descriptor)
            userdata?.assumingMemoryBound(to: Bool.self).pointee = true
        }, flag)
}

// MARK: Stream

/// A playback stream's shape, as asked for and as the server granted it.
struct PulseStreamShape {
    var rate: Int
    var channels: Int
    /// The buffer the server keeps for the stream (`tlength`) and the room it asks to be
    /// refilled in (`minreq`), in bytes.
    var bufferBytes: Int
    var periodBytes: Int
}

/// A new stream, or nil when the server takes no such sample spec (`valid` false) or the
/// library refused it.
func pulseStreamNew(_ context: OpaquePointer, format: SampleFormat, rate: Int, channels: Int) -> (
    stream: OpaquePointer?, valid: Bool
) {
    var spec = pa_sample_spec(format: format.pulse, rate: UInt32(clamping: rate), channels: UInt8(clamping: channels))
    guard channels >= 1, channels <= 2, pa_sample_spec_valid(&spec) != 0 else { return (nil, false) }
    return (pa_stream_new(context, "gong session", &spec, nil), true)
}

/// Connects the stream for playback to `sink` (nil: the server's default) with a buffer of
/// `shape.bufferBytes`, refilled `shape.periodBytes` at a time and started once full
/// (`prebuf` left to the server, which makes it `tlength`); the server asks for each period as
/// soon as there is room (`PA_STREAM_EARLY_REQUESTS`), as a sound card would. Waits at most
/// the timeout for it to be ready.
func pulseConnectPlayback(
    _ stream: OpaquePointer, sink: String?, shape: PulseStreamShape, loop: OpaquePointer, timeoutMs: Int64
) -> Bool {
    var attributes = pa_buffer_attr(
        maxlength: UInt32.max, tlength: UInt32(clamping: shape.bufferBytes), prebuf: UInt32.max,
        minreq: UInt32(clamping: shape.periodBytes), fragsize: UInt32.max)
    return pa_stream_connect_playback(stream, sink, &attributes, PA_STREAM_EARLY_REQUESTS, nil, nil) >= 0
        && pulseIterate(
            loop, timeoutMs: timeoutMs,
            until: {
                let state = pa_stream_get_state(stream)
                return state == PA_STREAM_READY || PA_STREAM_IS_GOOD(state) == 0
            })
        && pa_stream_get_state(stream) == PA_STREAM_READY
}

/// What the server granted, where it says; `asked` where it does not.
func pulseGrantedShape(_ stream: OpaquePointer, asked: PulseStreamShape) -> PulseStreamShape {
    var shape = asked
    if let granted = pa_stream_get_buffer_attr(stream)?.pointee {
        shape.bufferBytes = Int(granted.tlength)
        shape.periodBytes = Int(granted.minreq)
    }
    if let spec = pa_stream_get_sample_spec(stream)?.pointee {
        shape.rate = Int(spec.rate)
        shape.channels = Int(spec.channels)
    }
    return shape
}

/// Counts each underrun the server tells of into `counter`.
func pulseCountUnderflows(_ stream: OpaquePointer, into counter: UnsafeMutablePointer<Int>) {
    pa_stream_set_underflow_callback(
        stream,
        { _, counter in
            counter?.assumingMemoryBound(to: Int.self).pointee += 1
        }, counter)
}

/// Sets `flag` when the server says the stream started playing: after an underrun, once the
/// buffer is full again (`prebuf`).
func pulseNoteStarts(_ stream: OpaquePointer, setting flag: UnsafeMutablePointer<Bool>) {
    pa_stream_set_started_callback(
        stream,
        { _, flag in
            flag?.assumingMemoryBound(to: Bool.self).pointee = true
        }, flag)
}

// The calls the real-time loop makes: gong allocates and locks nothing around them. (libpulse
// itself allocates a little for a write and a timing request; see `PulsePCM.status`.)

/// Both the client and its stream are ready: the server is there and has not killed the stream.
func pulseStreamIsReady(context: OpaquePointer, stream: OpaquePointer) -> Bool {
    pa_context_get_state(context) == PA_CONTEXT_READY && pa_stream_get_state(stream) == PA_STREAM_READY
}

/// Bytes the server has room for; negative on error.
func pulseWritableBytes(_ stream: OpaquePointer) -> Int { pa_stream_writable_size(stream) }

/// Queues `count` bytes to be written `backBytes` before the stream's write index (0: at it).
/// Without a free callback the library copies them into its shared memory.
func pulseWrite(_ stream: OpaquePointer, _ bytes: UnsafeRawPointer, count: Int, backBytes: Int) -> Bool {
    pa_stream_write(stream, bytes, count, nil, -Int64(backBytes), PA_SEEK_RELATIVE) >= 0
}

/// Plays out what was written, waiting at most the timeout: 0, -ETIMEDOUT or -ENODEV.
func pulseDrain(_ stream: OpaquePointer, loop: OpaquePointer, timeoutMs: Int64) -> Int32 {
    guard let operation = pa_stream_drain(stream, nil, nil) else { return -ENODEV }
    defer { pa_operation_unref(operation) }
    return pulseIterate(
        loop, timeoutMs: timeoutMs, until: { pa_operation_get_state(operation) != PA_OPERATION_RUNNING })
        ? 0 : -ETIMEDOUT
}

/// Where in the stream (bytes, a read index) the server last ran dry; -1 when it has not said.
func pulseUnderflowIndex(_ stream: OpaquePointer) -> Int64 { pa_stream_get_underflow_index(stream) }

/// Asks the server for a new timing report; the operation to watch, or nil.
func pulseRequestTiming(_ stream: OpaquePointer) -> OpaquePointer? { pa_stream_update_timing_info(stream, nil, nil) }

/// Whether an operation has finished (or failed): then it can be released.
func pulseOperationIsDone(_ operation: OpaquePointer) -> Bool {
    pa_operation_get_state(operation) != PA_OPERATION_RUNNING
}

func pulseOperationRelease(_ operation: OpaquePointer) { pa_operation_unref(operation) }

/// The server's last timing report, as it gave it.
struct PulseTimingReport {
    var writeIndex: Int64
    var readIndex: Int64
    /// How long after `measuredWallNanoseconds` the frame at the read index was heard; the
    /// library's "invalid" (unknown) is returned as it is, a huge number.
    var sinkMicroseconds: UInt64
    var playing: Bool
    /// While the stream is not playing after an underrun, the bytes of silence its sink has
    /// rendered in its place since (`underrun_for`); while it plays, the bytes played since it
    /// last started (`playing_for`).
    var sinceUnderrunBytes: Int64
    /// When it was measured, on the server's system clock (CLOCK_REALTIME).
    var measuredWallNanoseconds: Int64
}

/// The last report, if its indices are whole.
func pulseTimingReport(_ stream: OpaquePointer) -> PulseTimingReport? {
    guard let report = pa_stream_get_timing_info(stream)?.pointee, report.read_index_corrupt == 0,
        report.write_index_corrupt == 0
    else { return nil }
    return PulseTimingReport(
        writeIndex: report.write_index, readIndex: report.read_index, sinkMicroseconds: report.sink_usec,
        playing: report.playing != 0, sinceUnderrunBytes: report.since_underrun,
        measuredWallNanoseconds: Int64(report.timestamp.tv_sec) * 1_000_000_000 + Int64(report.timestamp.tv_usec) * 1000
    )
}

extension SampleFormat {
    var pulse: pa_sample_format_t {
        switch self {
        case .float32: PA_SAMPLE_FLOAT32LE
        case .int32: PA_SAMPLE_S32LE
        case .int16: PA_SAMPLE_S16LE
        }
    }
}

/// Where a playing stream's reports put its read index on the system clock: the earliest
/// moment any of them places the read index's frame 0 at (its stamp less the read index's
/// frames at the stream's rate), among those of the last five seconds. The server takes a
/// report's counts on the sink's thread and stamps the reply once its main thread runs again
/// (PulseAudio 16, `command_get_playback_latency`), on a busy machine late: a report is never
/// early, so the earliest is the truest. A late one alone would put the read index behind the
/// server's, and a take-back reaching from it writes where the server has read already, which
/// the server drops: the pause or skip it made is then said heard before its key was pressed.
/// Over five seconds a sink's clock 400 ppm off the system's moves the line by 2 ms, which the
/// take-back's margin holds.
struct PulseReadLine {
    static let windowNanoseconds: Int64 = 5_000_000_000
    /// When the read index was at frame 0, on the system clock; nil until a playing report.
    private(set) var originWallNanoseconds: Int64?
    /// When the report that gave it was stamped.
    private var keptStamp: Int64 = 0

    /// Folds in the last report: kept if it puts frame 0 earlier, or if the one kept is older
    /// than the window. One of a stream not playing (its read index stands) clears the line.
    mutating func take(_ report: PulseTimingReport, frameBytes: Int, rate: Int64) {
        guard report.playing else {
            forget()
            return
        }
        let origin =
            report.measuredWallNanoseconds
            - FrameTime.nanoseconds(ofFrames: report.readIndex / Int64(frameBytes), rate: rate)
        if let kept = originWallNanoseconds, kept <= origin,
            report.measuredWallNanoseconds - keptStamp <= Self.windowNanoseconds
        {
            return
        }
        originWallNanoseconds = origin
        keptStamp = report.measuredWallNanoseconds
    }

    /// Where the read index is at `now` (system clock), in frames; nil with no line.
    func readFrames(atWallNanoseconds now: Int64, rate: Int64) -> Int64? {
        originWallNanoseconds.map { FrameTime.frames(inNanoseconds: now - $0, rate: rate) }
    }

    /// An underrun stopped the read index: no report before it says where it is.
    mutating func forget() { originWallNanoseconds = nil }
}
