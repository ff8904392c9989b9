import Dispatch
import FoundationEssentials
import Glibc
import GongAudio
import GongCore

/// A session playing live on an audio device: what the `gong` command, the control channel and
/// the C ABI are built on, and what a Swift program embedding gong uses.
///
///     let session = try GongSession(pattern: try Patterns.named("box"), options: SessionOptions(device: "pulse"))
///     let events = session.events()
///     session.start()
///     for await event in events { print(event.jsonLine()) }   // ends after `finished`
///
/// - Events: `events()` gives each caller its own stream of everything from then on, ending with
///   `finished`. A caller that falls more than `eventBacklog` events behind is dropped (its
///   stream ends early); the session never waits for anyone.
/// - Commands: `send` from any thread or task; each is taken or refused at once.
/// - The last reference: when it goes away while the session plays, the session halts (fades out
///   over `SessionRenderer.rampSeconds`, cutting tails), its device is closed once the audio
///   thread has ended, and every event stream ends with `finished`. Dropping it never blocks.
/// - Pulled by a host (`init(pattern:options:pulling:bank:)`): no device and no audio thread;
///   the host's own audio callback calls `render(into:frames:heardAt:)` for each buffer, and
///   events, commands, status and report work as above.
public final class GongSession: Sendable {
    public let pattern: Pattern
    /// What the device granted (for a pulled session: device `pull`, the format pulled, no
    /// period or buffer of gong's own).
    public let output: OutputDescription
    private let core: SessionCore
    /// A pulled session's engine, and the same without counting references, for the host's
    /// real-time calls (nil on a device).
    private let puller: PullEngine?
    private let pullerReference: Unmanaged<PullEngine>?

    /// Events a stream may hold unread before its reader is dropped.
    public static let eventBacklog = 4096

    /// Opens the device and prepares every sound; plays nothing until `start()`.
    public convenience init(pattern: Pattern, options: SessionOptions = SessionOptions(), bank: SoundBank = .standard())
        throws(GongError)
    {
        do { try options.validate() } catch { throw .setting(error) }
        let request = options.request
        let opened = try OutputRoute(device: request.device).open(
            request, with: Opening(pattern: pattern, bank: bank, options: options))
        self.init(pattern: pattern, opened: opened)
    }

    /// A session on a device of the caller's making (a test's, with faults injected).
    convenience init<Device: PCM>(
        pattern: Pattern, bank: SoundBank, options: SessionOptions,
        open: @escaping @Sendable () throws(AudioDeviceError) -> Device
    ) throws(GongError) {
        self.init(pattern: pattern, opened: try Opening(pattern: pattern, bank: bank, options: options).use(open))
    }

    /// Prepares every sound for a host that pulls the session's frames from its own audio
    /// callback (`render`), at the rate and channel count of `format`; plays nothing until
    /// `start()`. Of `options`, the gain, `interactive` and `startSeconds` apply; the device, its
    /// format, latency and period do not (the host owns the output), and `format` sets the rate
    /// and channels.
    public convenience init(
        pattern: Pattern, options: SessionOptions = SessionOptions(), pulling format: PullFormat,
        bank: SoundBank = .standard()
    ) throws(GongError) {
        var options = options
        options.rate = format.rate
        options.channels = format.channels
        do { try options.validate() } catch { throw .setting(error) }
        let (live, engine) = try LiveSession.pulling(
            pattern: pattern, bank: bank, masterGainDB: options.gainDB, interactive: options.interactive,
            startSeconds: options.startSeconds, rate: format.rate, channels: format.channels)
        let output = OutputDescription(live.configuration)
        self.init(pattern: pattern, opened: (SessionCore(live, gainDB: options.gainDB), output), puller: engine)
    }

    private init(
        pattern: Pattern, opened: (core: SessionCore, output: OutputDescription), puller: PullEngine? = nil
    ) {
        self.pattern = pattern
        output = opened.output
        core = opened.core
        self.puller = puller
        pullerReference = puller.map { .passUnretained($0) }
    }

    /// The next `frames` frames of a pulled session, interleaved at its channel count: what
    /// the host calls from its audio callback, real-time safe (it allocates nothing, takes no
    /// lock and never waits; the compiler checks it). One thread at a time; commands, events
    /// and status from any other.
    ///
    /// - Parameters:
    ///   - frames: 1 to `PullFormat.maximumFrames`; `buffer` holds at least `frames × channels`.
    ///   - heardAt: when the buffer's first frame is heard, on CLOCK_MONOTONIC, if the host knows
    ///     (its callback's output time): events then say when they are heard.
    /// - Returns: `.playing`; `.notStarted` before `start()` and `.over` once the session has
    ///   finished (both silence); `.refused` for a frame count or buffer out of bounds, or a
    ///   session on a device (nothing written).
    @_noAllocation @_noLocks
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, frames: Int, heardAt: MonotonicTime? = nil)
        -> PullStatus
    {
        guard let pullerReference else { return .refused }
        return pullerReference._withUnsafeGuaranteedRef { $0.render(into: buffer, frames: frames, heardAt: heardAt) }
    }

    /// Opens the route's device and prepares the session on it.
    private struct Opening: DeviceOpenerUser {
        let pattern: Pattern
        let bank: SoundBank
        let options: SessionOptions

        func use<Device: PCM>(_ open: @escaping @Sendable () throws(AudioDeviceError) -> Device) throws(GongError)
            -> (core: SessionCore, output: OutputDescription)
        {
            let live = try LiveSession(
                pattern: pattern, bank: bank, masterGainDB: options.gainDB, interactive: options.interactive,
                startSeconds: options.startSeconds, open: open)
            return (SessionCore(live, gainDB: options.gainDB), OutputDescription(live.configuration))
        }
    }

    deinit {
        core.abandon()
    }

    /// Everything that happens from now on, ending with `finished` (at once if the session is
    /// over), after the cues already announced (`cueAhead`) and still ahead. Ask before `start()`
    /// to see it all.
    public func events() -> AsyncStream<SessionEvent> {
        core.subscribe()
    }

    /// Starts playing. A second call does nothing.
    public func start() {
        core.start()
    }

    /// Carries out a command now, or says why it changed nothing.
    public func send(_ command: SessionCommand) throws(CommandRefusal) {
        try core.send(command).get()
    }

    /// Moves the session on by `frames` at once, as if they had played: every cue after is heard
    /// that much sooner. For a caller that starts a session a little ahead of a moment and,
    /// once the device says when its first frame is heard, lines the first cue up on it (`gong
    /// bells`: a stream's first frame is heard a little after it starts, 1-2 ms through
    /// PulseAudio here). False when the session is over or its command ring is full.
    @discardableResult
    public func moveOn(frames: Int64) -> Bool {
        core.moveOn(frames: frames)
    }

    /// Pauses and waits (at most `timeoutSeconds`) until the fade-out is done, so whatever comes
    /// next (a process stopped by Ctrl-Z) happens in silence. True once the session is paused.
    @discardableResult
    public func pauseAndWait(timeoutSeconds: Double = 0.25) -> Bool {
        let waiter = core.pauseWaiter()
        do {
            try send(.pause)
        } catch {
            return status.state == .paused
        }
        return waiter.wait(timeout: .now() + timeoutSeconds) == .success
    }

    /// Where the session stands now.
    public var status: SessionStatus { core.status() }

    /// An interactive session whose person went away (a terminal closed) carries on headless:
    /// after an interruption it resumes by itself.
    public func becomeHeadless() {
        core.becomeHeadless()
    }

    /// Waits until the session is over and its audio has ended; its report.
    public func report() async -> SessionReport {
        await withCheckedContinuation { continuation in core.whenOver { continuation.resume(returning: $0) } }
    }

    /// `report()` for a thread that may block (a C caller's).
    public func waitForReport() -> SessionReport {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<SessionReport?>(nil)
        core.whenOver { report in
            result.withLock { $0 = report }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }
}

/// What a device granted a session.
public struct OutputDescription: Sendable, Equatable, Codable {
    public var device: String
    public var rate: Int
    public var channels: Int
    public var format: String
    public var periodFrames: Int
    public var bufferFrames: Int
    public var latencyMs: Double

    init(_ configuration: PCMConfiguration) {
        device = configuration.device
        rate = configuration.rate
        channels = configuration.channels
        format = configuration.format.rawValue
        periodFrames = configuration.periodFrames
        bufferFrames = configuration.bufferFrames
        latencyMs = configuration.latencySeconds * 1000
    }
}

/// What a host pulls (`GongSession(pattern:options:pulling:)`): the rate and channel count of
/// the frames its callback asks for.
public struct PullFormat: Sendable, Equatable {
    public var rate: Int
    public var channels: Int

    /// Frames one `render` call may ask for.
    public static var maximumFrames: Int { PullEngine.maximumFrames }

    public init(rate: Int = Timeline.defaultSampleRate, channels: Int = 2) {
        self.rate = rate
        self.channels = channels
    }
}

/// The shared part of a session: the live session behind one lock, its subscribers, and the
/// thread that carries the audio side's reports to them. Held by the facade and by that thread,
/// so the thread finishes the session even after the facade is gone.
private final class SessionCore: Sendable {
    private struct Shared {
        var live: LiveSession
        var subscribers: [Int: AsyncStream<SessionEvent>.Continuation] = [:]
        var nextSubscriber = 0
        var started = false
        var gainDB: Double
        /// Set once the audio has ended and the last event is out.
        var report: SessionReport?
        var finishedSent = false
        var overWaiters: [@Sendable (SessionReport) -> Void] = []
        var pauseWaiters: [DispatchSemaphore] = []
    }

    private let shared: Locked<Shared>
    private let eventsReadyDescriptor: Int32

    init(_ live: sending LiveSession, gainDB: Double) {
        eventsReadyDescriptor = live.eventsReadyDescriptor
        shared = Locked(Shared(live: live, gainDB: gainDB))
    }

    func subscribe() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SessionEvent.self, bufferingPolicy: .bufferingOldest(GongSession.eventBacklog))
        shared.withLock { shared in
            if let report = shared.report {
                continuation.yield(SessionEvent(.finished(report)))
                continuation.finish()
                return
            }
            let id = shared.nextSubscriber
            shared.nextSubscriber += 1
            shared.subscribers[id] = continuation
            // Cues announced before it came are still ahead: told to it first.
            for event in shared.live.cuesAhead { continuation.yield(event) }
        }
        return stream
    }

    func start() {
        let first = shared.withLock { shared -> Bool in
            guard !shared.started else { return false }
            shared.started = true
            emit(shared.live.start(), to: &shared)
            return true
        }
        guard first else { return }
        DetachedThread.start(name: "gong session") { [self] in carryReports() }
    }

    func moveOn(frames: Int64) -> Bool {
        shared.withLock { shared in
            guard shared.report == nil, let events = shared.live.moveOn(frames: frames) else { return false }
            emit(events, to: &shared)
            return true
        }
    }

    func send(_ command: SessionCommand) -> Result<Void, CommandRefusal> {
        shared.withLock { shared in
            guard shared.report == nil else { return .failure(CommandRefusal(command: command.name, reason: .over)) }
            let events: [SessionEvent]
            do throws(CommandRingFull) {
                switch command {
                case .setGain(let decibels):
                    guard (try? SessionLimits.check(gainDB: decibels)) != nil else {
                        return .failure(CommandRefusal(command: .gain, reason: .gainOutOfRange(decibels)))
                    }
                    guard shared.live.setGain(decibels: decibels) else {
                        return .failure(CommandRefusal(command: .gain, reason: .busy))
                    }
                    shared.gainDB = decibels
                    emit(SessionEvent(.gainChanged(decibels: decibels)), to: &shared)
                    return .success(())
                case .halt:
                    emit(shared.live.halt(), to: &shared)
                    return .success(())
                case .pause: events = try shared.live.send(.pause)
                case .resume: events = try shared.live.send(.resume)
                case .togglePause: events = try shared.live.togglePause()
                case .skip: events = try shared.live.send(.skip)
                case .stop: events = try shared.live.send(.stop)
                }
            } catch {
                return .failure(CommandRefusal(command: command.name, reason: .busy))
            }
            emit(events, to: &shared)
            for event in events {
                if case .ignored(let name, let state) = event.kind {
                    return .failure(CommandRefusal(command: name, reason: .notNow(state)))
                }
            }
            return .success(())
        }
    }

    /// A semaphore signalled by the next `paused` event.
    func pauseWaiter() -> DispatchSemaphore {
        let waiter = DispatchSemaphore(value: 0)
        shared.withLock { $0.pauseWaiters.append(waiter) }
        return waiter
    }

    func status() -> SessionStatus {
        shared.withLock { shared in
            shared.live.refreshPosition(now: .now())
            return SessionStatus(shared.live, gainDB: shared.gainDB)
        }
    }

    func becomeHeadless() {
        shared.withLock { $0.live.interactive = false }
    }

    /// Calls `body` with the report once the session is over (at once if it is).
    func whenOver(_ body: @escaping @Sendable (SessionReport) -> Void) {
        let report = shared.withLock { shared -> SessionReport? in
            if shared.report == nil { shared.overWaiters.append(body) }
            return shared.report
        }
        if let report { body(report) }
    }

    /// The facade is gone: a session still playing halts; one never started has nothing to do.
    func abandon() {
        shared.withLock { shared in
            guard shared.started, shared.report == nil else { return }
            emit(shared.live.halt(), to: &shared)
            shared.live.abandon()
        }
    }

    // MARK: The reporting thread

    /// Sleeps until the audio thread reports something, hands it to the subscribers, and once
    /// the audio has ended closes every stream with `finished`. It never wakes by itself.
    private func carryReports() {
        var descriptor = pollfd(fd: eventsReadyDescriptor, events: Int16(POLLIN), revents: 0)
        var over = false
        while !over {
            _ = poll(&descriptor, 1, -1)
            over = shared.withLock { shared in
                emit(shared.live.poll(now: .now()), to: &shared)
                return shared.live.isOver
            }
        }
        let waiters = shared.withLock { shared in
            shared.live.waitUntilDone()  // returns at once: the audio thread has ended
            emit(shared.live.poll(now: .now()), to: &shared)
            var report = SessionReport(summary: shared.live.summary, timing: shared.live.timing)
            if case .failed(let failure, _) = shared.live.state { report.failure = failure.message }
            if !shared.finishedSent { emit(SessionEvent(.finished(report)), to: &shared) }
            shared.report = report
            for continuation in shared.subscribers.values { continuation.finish() }
            shared.subscribers.removeAll()
            defer { shared.overWaiters.removeAll() }
            return (report, shared.overWaiters)
        }
        for waiter in waiters.1 { waiter(waiters.0) }
    }

    // MARK: Emitting

    private func emit(_ events: [SessionEvent], to shared: inout Shared) {
        for var event in events {
            if case .finished(var report) = event.kind, case .failed(let failure, _) = shared.live.state {
                report.failure = failure.message
                event.kind = .finished(report)
            }
            emit(event, to: &shared)
        }
    }

    private func emit(_ event: SessionEvent, to shared: inout Shared) {
        if event.isFinished { shared.finishedSent = true }
        if case .paused = event.kind {
            for waiter in shared.pauseWaiters { waiter.signal() }
            shared.pauseWaiters.removeAll()
        }
        for (id, continuation) in shared.subscribers {
            if case .dropped = continuation.yield(event) {
                // A reader this far behind is not reading: it is let go, not waited for.
                continuation.finish()
                shared.subscribers[id] = nil
            }
        }
    }
}

/// What a pulled session's `render` did, and the clock its `heardAt` is on, without importing
/// the audio layer.
public typealias PullStatus = GongAudio.PullStatus
public typealias MonotonicTime = GongAudio.MonotonicTime
