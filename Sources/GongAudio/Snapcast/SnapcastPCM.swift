import CGongStreams
import Dispatch
import Glibc
import GongCore
import Synchronization

/// A snapserver source fed by gong: its `pipe://` FIFO or its `tcp://` port (`SnapcastAddress`).
///
/// Neither has a clock gong can read, so gong keeps time itself, as MPD's FIFO output does: the
/// stream's frames are due at the rate by CLOCK_MONOTONIC from the first write, and gong keeps
/// no more than the buffer ahead of that. The snapserver reads its source by the same clock (on
/// this machine), a chunk at a time on a schedule of its own, and stamps each frame for the
/// moment it was due on that schedule; every room plays it the server's buffer after that. So a
/// frame written now is heard after what the FIFO holds unread, placed on the server's schedule
/// (`FIFOSamples`; the model's queue less a chunk on a socket, which cannot say how far the
/// server has read), then the server's buffer and what its codec adds (`heardAfterNanoseconds`,
/// `SnapcastStatus.codecDelayFrames`). The frames stay exact
/// whatever the pacing: a write that the pipe takes only in part keeps the part of a frame it
/// took and sends the rest first.
///
/// Nothing blocks: the descriptor is non-blocking. A full pipe or socket is `-EAGAIN`, which the
/// engine waits out up to its stall limit and then treats as a lost device; a reader or server
/// gone is `-ENODEV`; a write later than the model's queue could cover is an underrun (`-EPIPE`),
/// after which the model restarts at once from the frames written.
public final class SnapcastPCM: PCM {
    public let configuration: PCMConfiguration
    public let address: SnapcastAddress
    /// The rooms that play the stream, as the server said when the device opened.
    public let rooms: [SnapcastStatus.Room]
    /// The stream's id on the server.
    public let streamID: String
    /// Nil once closed.
    private var descriptor: Int32?
    private let frameBytes: Int
    /// What the audio thread reads, kept apart from `configuration` and `address`, whose strings
    /// it would otherwise copy and count references of.
    private let bufferFrames: Int64
    private let periodFrames: Int64
    private let isSocket: Bool
    private let rate: Int64
    private var writtenFrames: Int64 = 0
    /// When frame 0 of the model is due (CLOCK_MONOTONIC nanoseconds); nil before the first write.
    private var startNanoseconds: Int64?
    /// Bytes of the next frame already taken by the pipe or socket.
    private var sentOfNextFrame = 0
    /// The last write found no room: waits are for the descriptor then, not for the model.
    private var full = false
    private var wakeDescriptor: Int32 = -1
    /// Silence still to go before the session's first frame (bytes), and a period of it to send.
    private var leadInBytes: Int
    private let silence: UnsafeMutableRawBufferPointer
    /// Where the FIFO's level placed the stream, at each write of the last second or so.
    private var samples = FIFOSamples()

    /// How long opening waits for a stream that is playing to go idle before it says the device
    /// is busy. A source takes one writer: a second one's frames would mix with the first's in a
    /// FIFO, and wait unread behind them in a socket, for as long as the first goes on. The server
    /// calls a stream idle once it has read nothing for 520 ms (0.26), and the writer before may
    /// have left a FIFO's 341 ms to read: so a session that follows another at once waits about a
    /// second, and one beside another is refused.
    public static let playingWaitMs = 2000

    /// How much silence goes ahead of the session (the stream is idle: see `playingWaitMs`). A
    /// snapclient whose stream has been idle for 5 s lets go of its player, and takes it again
    /// when audio comes; its PulseAudio player then drops what arrives while its latency is not
    /// yet known (0.26: "outputBufferDacTime > bufferMs"): after such a pause the session's first
    /// cue went missing in every room, and with a second of silence ahead of it, it is heard.
    public static let leadInSeconds = 1.0

    /// This route's buffer unless asked otherwise: 306 ms in six periods of 51 ms. It cannot take
    /// back what it wrote, so a key press waits out the buffer, and then the server's 1000 ms,
    /// which dwarfs it: a longer FIFO than ALSA's 150 ms costs a listener nothing and keeps the
    /// server fed through a longer stall of gong (it fits a pipe's default 64 KiB at 48 kHz, 16-bit
    /// stereo). A period of 51 ms, not 50: the server reads its FIFO in chunks of 20 ms on a
    /// schedule of its own, and a period that is a whole number of chunks would look at the FIFO at
    /// the same point of that schedule every time (see `FIFOSamples`).
    public static let bufferDefaults = BufferDefaults(latencyMs: 306, periodsPerBuffer: 6)

    public init(_ request: PCMRequest, address: SnapcastAddress) throws(AudioDeviceError) {
        let failure = OpenFailure(device: request.device, address: address)
        let (status, stream) = try Self.idleStream(fedBy: address, failure)
        // The stream's rate is the session's, as a JACK server's is.
        let (rate, format) = try Self.rateAndFormat(of: stream, for: request, failure)
        let defaults = Self.bufferDefaults
        let period = request.periodFrames(at: rate, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        var buffer = request.bufferFrames(
            at: rate, period: period, periodsPerBuffer: defaults.periodsPerBuffer, defaults: defaults)
        frameBytes = request.channels * format.bytesPerSample
        let descriptor = try Self.openSource(of: address, frameBytes: frameBytes, buffer: &buffer, failure)
        self.descriptor = descriptor
        self.address = address
        self.rate = Int64(rate)
        streamID = stream.id
        rooms = status.rooms.filter { $0.streamID == stream.id }
        bufferFrames = Int64(buffer)
        periodFrames = Int64(min(period, buffer))
        if case .tcp = address.source { isSocket = true } else { isSocket = false }
        leadInBytes = Int(Self.leadInSeconds * Double(rate)) * frameBytes
        silence = .allocate(byteCount: max(1, period) * frameBytes, alignment: 16)
        silence.initializeMemory(as: UInt8.self, repeating: 0)
        configuration = PCMConfiguration(
            device: request.device, rate: rate, channels: request.channels, format: format,
            periodFrames: min(period, buffer), bufferFrames: buffer, soundServer: true,
            reportJitterNanoseconds: 2_000_000,
            heardAfterNanoseconds: Self.heardAfterNanoseconds(
                stream: stream, address: address, isSocket: isSocket, rate: rate))
    }

    /// An open's failure, told of the device and the server whose control answered (or not).
    private struct OpenFailure {
        let device: String
        let address: SnapcastAddress

        func callAsFunction(_ reason: AudioDeviceError.Reason, _ errno: Int32, _ operation: String, _ detail: String)
            -> AudioDeviceError
        {
            AudioDeviceError(
                reason, errno: errno, operation: operation, device: device, system: .snapcast, detail: detail,
                server: "\(address.controlHost):\(address.controlPort)")
        }
    }

    /// The server's status and the stream `address` feeds, once that stream is idle: a stream
    /// still playing after `playingWaitMs` has another writer, and the device is busy.
    private static func idleStream(fedBy address: SnapcastAddress, _ failure: OpenFailure)
        throws(AudioDeviceError) -> (SnapcastStatus, SnapcastStatus.Stream)
    {
        let giveUp = MonotonicTime.now().nanoseconds + Int64(Self.playingWaitMs) * 1_000_000
        while true {
            let status: SnapcastStatus
            switch SnapcastStatus.ask(host: address.controlHost, port: address.controlPort) {
            case .success(let answer): status = answer
            case .failure(let error):
                throw failure(.noServer, error.errno, error.operation, String(cString: strerror(error.errno)))
            }
            guard let stream = status.stream(fedBy: address) else {
                let sources = status.streams.map(\.uri).joined(separator: ", ")
                throw failure(
                    .noSuchDevice, ENOENT, "Server.GetStatus",
                    "the snapserver has no source \(address.sourceDescription)"
                        + (sources.isEmpty ? "" : "; its sources: \(sources)"))
            }
            guard stream.status == "playing" else { return (status, stream) }
            guard MonotonicTime.now().nanoseconds < giveUp else {
                throw failure(
                    .busy, EBUSY, "Server.GetStatus",
                    "the Snapcast stream '\(stream.id)' is playing: something else feeds its source, which takes one"
                        + " writer (two would mix their frames)")
            }
            usleep(100_000)
        }
    }

    /// The rate and sample format of the stream's `sampleformat` ("48000:16:2"), which gong must
    /// write as it is: a format or channel count the request asked otherwise is refused.
    private static func rateAndFormat(
        of stream: SnapcastStatus.Stream, for request: PCMRequest, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> (Int, SampleFormat) {
        let parts = stream.sampleFormat.split(separator: ":").compactMap { Int($0) }
        let format: SampleFormat? =
            parts.count == 3 ? (parts[1] == 16 ? .int16 : parts[1] == 32 ? .int32 : nil) : nil
        guard let format else {
            throw failure(
                .formatUnsupported, EINVAL, "Server.GetStatus",
                "the stream '\(stream.id)' takes \(stream.sampleFormat); gong writes 16 or 32 bits")
        }
        if let asked = request.format, asked != format {
            throw failure(
                .formatUnsupported, EINVAL, "Server.GetStatus",
                "the stream '\(stream.id)' takes \(format.rawValue) (sampleformat \(stream.sampleFormat)), not \(asked.rawValue)"
            )
        }
        guard parts[2] == request.channels else {
            throw failure(
                .channelsUnsupported, EINVAL, "Server.GetStatus",
                "the stream '\(stream.id)' takes \(parts[2]) channels (sampleformat \(stream.sampleFormat))")
        }
        return (parts[0], format)
    }

    /// The source's FIFO or socket opened for writing, with `buffer` cut to what the pipe or the
    /// socket's send buffer holds.
    private static func openSource(
        of address: SnapcastAddress, frameBytes: Int, buffer: inout Int, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> Int32 {
        switch address.source {
        case .fifo(let path):
            Self.ignoreBrokenPipes()
            let descriptor = Self.openFIFO(path)
            guard descriptor >= 0 else {
                let code = errno
                throw code == ENXIO
                    ? failure(.noServer, code, "open", "no snapserver reads the FIFO \(path)")
                    : failure(
                        AudioDeviceError.Reason(errno: code), code, "open",
                        "\(path): \(String(cString: strerror(code)))")
            }
            // The model's queue must fit in the pipe, or a full pipe would hold frames it does not count.
            let pipeBytes = Int(fcntl(descriptor, Self.getPipeSize))
            if pipeBytes > 0 { buffer = min(buffer, pipeBytes / frameBytes) }
            return descriptor
        case .tcp(let host, let port):
            switch SnapcastSocket.connect(host: host, port: port, timeoutMs: 1000) {
            case .success(let socket):
                // What the kernel holds unsent is audio the model does not see: no more than the
                // buffer, so a server that stops reading fills it within the buffer's time and the
                // write's EAGAIN tells the engine, as a full pipe does, rather than seconds of the
                // session piling up unheard (Linux lets a send buffer grow to 4 MiB: 21 s of it).
                var bytes = Int32(clamping: buffer * frameBytes)
                _ = setsockopt(socket, SOL_SOCKET, SO_SNDBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
                return socket
            case .failure(let error):
                throw failure(
                    error.errno == ECONNREFUSED ? .noServer : AudioDeviceError.Reason(errno: error.errno), error.errno,
                    error.operation, "tcp://\(host):\(port): \(String(cString: strerror(error.errno)))")
            }
        }
    }

    /// How long after its write a frame is heard, beyond what the model still holds: the server's
    /// buffer and what its codec adds.
    ///
    /// A socket's model starts at gong's first write, which the waiting server reads at once
    /// and stamps as due a chunk before it read it (0.26 stamps a stream's first chunk with the
    /// moment of the read less the chunk's duration): the rooms hear it a chunk earlier than
    /// the model has it due (a chunk, every cue: bench/RESULTS.md, "Snapcast rooms"). A FIFO's
    /// level places the stream by the reads themselves, on those stamps already.
    private static func heardAfterNanoseconds(
        stream: SnapcastStatus.Stream, address: SnapcastAddress, isSocket: Bool, rate: Int
    ) -> Int64 {
        let stampedEarlier = isSocket ? Int64(stream.chunkMs) * 1_000_000 : 0
        return max(0, Int64(address.bufferMs) * 1_000_000 - stampedEarlier)
            + FrameTime.nanoseconds(
                ofFrames: Int64(SnapcastStatus.codecDelayFrames(codec: stream.codec)), rate: Int64(rate))
    }

    deinit {
        close()
        silence.deallocate()
    }

    /// A snapserver's pipe and tcp sources as the device names that feed them, with the rooms
    /// that play each; none when no server answers at `host:port` within `timeoutMs`.
    public static func streams(
        host: String = "127.0.0.1", port: Int = SnapcastAddress.defaultControlPort, timeoutMs: Int32 = 500
    )
        -> [AudioDeviceInfo]
    {
        guard case .success(let status) = SnapcastStatus.ask(host: host, port: port, timeoutMs: timeoutMs) else {
            return []
        }
        let control =
            port == SnapcastAddress.defaultControlPort && host == "127.0.0.1" ? "" : "?control=\(host):\(port)"
        return status.streams.compactMap { stream in
            let source: String
            switch stream.scheme {
            case "pipe": source = stream.path
            case "tcp":
                // A server listening on every address is reached at its control's host.
                let listening = stream.host.split(separator: ":").last.map(String.init) ?? ""
                source = "tcp://\(host):\(listening)"
            default: return nil
            }
            let rooms = status.rooms.filter { $0.streamID == stream.id }.map { room in
                room.name + (room.connected ? "" : " (away)")
                    + (room.latencyMs == 0 ? "" : " (latency \(room.latencyMs) ms)")
            }
            return AudioDeviceInfo(
                name: "snapcast:" + source + control,
                description: "Snapcast stream '\(stream.id)' (\(stream.sampleFormat), \(stream.status)), played in "
                    + (rooms.isEmpty ? "no room yet" : rooms.joined(separator: ", ")))
        }
    }

    /// Linux's `F_GETPIPE_SZ` (`F_LINUX_SPECIFIC_BASE + 8`), which Glibc's module does not show.
    private static let getPipeSize: Int32 = 1024 + 8

    /// A FIFO's reader gone makes a write raise SIGPIPE, which ends a process by default, and a
    /// pipe (unlike a socket) has no flag to say no: so SIGPIPE is ignored, unless the process
    /// already handles it, and the write's `EPIPE` is the lost device. (The CLI ignores it anyway;
    /// this is for a program that embeds gong.)
    private static func ignoreBrokenPipes() {
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil else { return }
        _ = signal(SIGPIPE, SIG_IGN)
    }

    /// The FIFO opened for writing, then made non-blocking; -1 with `errno` set if no reader
    /// came within a second. A snapserver with no writer reads its FIFO to the end and opens it
    /// again about ten times a second (0.26, seen with strace), so a non-blocking open almost
    /// never finds it there (`ENXIO`): the open blocks, as `cat > FIFO` does, on a thread of
    /// its own, and a reader of gong's own ends the wait when it is up.
    private static func openFIFO(_ path: String) -> Int32 {
        let opening = FIFOOpening()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            opening.descriptor.store(open(path, O_WRONLY | O_CLOEXEC), ordering: .releasing)
            done.signal()
        }
        guard done.wait(timeout: .now() + 1) == .timedOut else {
            let descriptor = opening.descriptor.load(ordering: .acquiring)
            if descriptor >= 0 { _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) }
            return descriptor
        }
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        done.wait()
        if reader >= 0 { Glibc.close(reader) }
        let descriptor = opening.descriptor.load(ordering: .acquiring)
        if descriptor >= 0 { Glibc.close(descriptor) }
        errno = ENXIO
        return -1
    }

    private final class FIFOOpening: Sendable {
        let descriptor = Atomic<Int32>(-1)
    }

    /// Frames written that the model has not yet handed on, at `now`; negative when it ran dry.
    private func queued(at now: Int64) -> Int64 {
        guard let start = startNanoseconds else { return 0 }
        return writtenFrames - FrameTime.frames(inNanoseconds: now - start, rate: rate)
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        guard descriptor != nil else { return Int(-ENODEV) }
        // `wait` answers ready only once the lead-in is out; a write before that waits too.
        guard leadInBytes == 0 else { return Int(-EAGAIN) }
        let now = MonotonicTime.now().nanoseconds
        if startNanoseconds == nil {
            startNanoseconds = now
        } else if queued(at: now) < 0 {
            // Later than the queue could cover: the reader went without. Tell it once; the
            // model starts again from what was written, and the device clock measures the gap.
            startNanoseconds = now - FrameTime.nanoseconds(ofFrames: writtenFrames, rate: rate)
            return Int(-EPIPE)
        }
        return send(bytes + sentOfNextFrame, frames * frameBytes - sentOfNextFrame)
    }

    /// Sends `count` bytes, the first of them part way into a frame when the last send ended
    /// there: the frames it completed, or a negative errno.
    private func send(_ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        guard let descriptor, count > 0 else { return descriptor == nil ? Int(-ENODEV) : 0 }
        let sent: Int
        if isSocket {
            sent = Glibc.send(descriptor, bytes, count, Int32(MSG_NOSIGNAL))
        } else {
            sent = Glibc.write(descriptor, bytes, count)
        }
        guard sent >= 0 else {
            switch errno {
            case EAGAIN:
                full = true
                return Int(-EAGAIN)
            case EINTR: return Int(-EINTR)
            case EPIPE, ECONNRESET, ENOTCONN: return Int(-ENODEV)
            default: return Int(-errno)
            }
        }
        let total = sentOfNextFrame + sent
        sentOfNextFrame = total % frameBytes
        writtenFrames += Int64(total / frameBytes)
        if !isSocket { sampleFIFO(descriptor) }
        return total / frameBytes
    }

    /// Notes where the server's reading stands now: the frames it has read (written less what
    /// the FIFO holds unread) were due by now, so the stream's origin is no later than now less
    /// their duration.
    private func sampleFIFO(_ descriptor: Int32) {
        let unread = gong_fifo_unread_bytes(descriptor)
        guard unread >= 0 else { return }
        let now = MonotonicTime.now().nanoseconds
        let read = writtenFrames - Int64(Int(unread) / frameBytes)
        samples.add(now - FrameTime.nanoseconds(ofFrames: read, rate: rate))
    }

    /// Sends as much of the lead-in as the buffer has room for; a negative errno if it failed.
    private func feedLeadIn(at now: Int64) -> Int32 {
        if startNanoseconds == nil { startNanoseconds = now }
        let room = Int(max(0, bufferFrames - queued(at: now))) * frameBytes
        let count = min(leadInBytes, room, silence.count - sentOfNextFrame)
        guard count > 0, let base = silence.baseAddress else { return 0 }
        let before = writtenFrames * Int64(frameBytes) + Int64(sentOfNextFrame)
        let result = send(base, count)
        if result < 0 { return result == Int(-EAGAIN) ? 0 : Int32(result) }
        leadInBytes -= Int(writtenFrames * Int64(frameBytes) + Int64(sentOfNextFrame) - before)
        return 0
    }

    public func wait(timeoutMs: Int32) -> Int32 {
        guard let descriptor else { return -ENODEV }
        var timeout = Int64(timeoutMs) * 1_000_000
        if !full {
            let now = MonotonicTime.now().nanoseconds
            if leadInBytes > 0 {
                let failed = feedLeadIn(at: now)
                if failed < 0 { return failed }
            }
            let room = bufferFrames - queued(at: now)
            let short = periodFrames - room
            if short <= 0 && leadInBytes == 0 { return 1 }
            timeout = min(timeout, FrameTime.nanoseconds(ofFrames: max(short, 1), rate: rate))
        }
        // The descriptor is watched for its end (POLLERR, POLLHUP) and, when full, for room.
        var watched = (
            pollfd(fd: descriptor, events: full ? Int16(POLLOUT) : 0, revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        )
        // Whole milliseconds, rounded up: a wake a little late costs nothing, the buffer covers it.
        let milliseconds = Int32((timeout + 999_999) / 1_000_000)
        // A tuple, not an array: the audio thread waits here, and allocates nothing.
        let result = withUnsafeMutableBytes(of: &watched) { fds in
            poll(fds.baseAddress?.assumingMemoryBound(to: pollfd.self), 2, milliseconds)
        }
        if result < 0 { return errno == EINTR ? 0 : -errno }
        if watched.0.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return -ENODEV }
        if watched.1.revents & Int16(POLLIN) != 0 {
            Doorbell.drain(wakeDescriptor)
            return PCMWait.woken
        }
        if full {
            guard watched.0.revents & Int16(POLLOUT) != 0 else { return 0 }
            full = false
            return 1
        }
        let room = bufferFrames - queued(at: MonotonicTime.now().nanoseconds)
        return room >= periodFrames && leadInBytes == 0 ? 1 : 0
    }

    public func recover(_ error: Int32) -> Int32 { error == -EPIPE ? 0 : error }

    /// Waits until the model has handed on every frame written; the server's buffer then plays
    /// them out, which is not waited for (the engine knows when they are heard).
    public func drain() -> Int32 {
        let left = queued(at: MonotonicTime.now().nanoseconds)
        if left > 0 {
            let nanoseconds = FrameTime.nanoseconds(ofFrames: left, rate: rate)
            var span = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            _ = nanosleep(&span, nil)
        }
        return descriptor == nil ? -ENODEV : 0
    }

    public func status() -> PCMStatus? {
        guard let descriptor else { return nil }
        let now = MonotonicTime.now().nanoseconds
        let queue = queued(at: now)
        // A FIFO says how much of it the server has not read, which places the stream on the
        // server's schedule (`FIFOSamples`): the truth where the model is a plan. A socket
        // cannot say what the far end holds: the model stands for it.
        var delay = max(0, queue)
        if !isSocket {
            sampleFIFO(descriptor)
            if let origin = samples.earliest {
                delay = max(0, writtenFrames - FrameTime.frames(inNanoseconds: now - origin, rate: rate))
            }
        }
        return PCMStatus(
            state: startNanoseconds == nil ? .prepared : queue < 0 ? .underrun : .running,
            delayFrames: Int(delay), timestamp: MonotonicTime(nanoseconds: now))
    }

    public func close() {
        if let descriptor { _ = Glibc.close(descriptor) }
        descriptor = nil
    }

    public func wakeWhenReadable(_ descriptor: Int32) { wakeDescriptor = descriptor }
}

/// The FIFO's level at the last writes, as the stream origin each places: the moment frame 0 of
/// the writes would be read on the server's schedule.
///
/// The server reads its FIFO a chunk (20 ms) at a time, on a schedule of CLOCK_MONOTONIC of its
/// own, so the level falls in steps: a look just after a read places the origin where it is, a
/// look later in the chunk up to a chunk later, and a read the server made late (a busy machine)
/// later still. The earliest of the last 24 looks, about a second of writes in periods of 51 ms
/// (each 11 ms further into the server's 20 ms schedule than the last), is the origin. Looking at
/// the same point of the schedule every time would place the rooms' cues up to a chunk off,
/// depending on where in the server's schedule gong happened to start (bench/RESULTS.md,
/// "Snapcast rooms"). A FIFO that ran dry shows as a later origin once the earlier looks are out
/// of the window: the server played silence in between, and the engine measures it as lost.
struct FIFOSamples {
    private var origins = InlineArray<24, Int64>(repeating: .max)
    private var next = 0

    mutating func add(_ origin: Int64) {
        origins[next] = origin
        next = (next + 1) % origins.count
    }

    /// Nil before the first look.
    var earliest: Int64? {
        var lowest = Int64.max
        for index in 0..<origins.count { lowest = min(lowest, origins[index]) }
        return lowest == .max ? nil : lowest
    }
}
