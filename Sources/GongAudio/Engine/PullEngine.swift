import Glibc
import GongCore
import Synchronization

/// Plays a session into buffers the host asks for from its own real-time callback (a host that
/// owns the audio callback, as libpd's and miniaudio's engines do): no device, no thread.
///
/// Each `render(into:frames:heardAt:)` takes the control side's commands from the same
/// lock-free ring `PlaybackEngine` takes them from, renders the next frames of the session into
/// the host's buffer, and reports what happened through the same event ring and doorbell, with
/// the same `EngineEvent`s — through the same steps (`EngineLink`), so commands, cues and events
/// behave alike whichever engine plays. The host's frames are the session's clock: a cue on
/// frame F is in the F-th frame the host pulled after `start`.
///
/// The render call's rules are the audio thread's (see `PlaybackEngine`): it allocates nothing,
/// takes no lock, never waits, and calls nothing but a non-blocking write to the event doorbell's
/// pipe when it reports something; the compiler checks this (`@_noAllocation @_noLocks`). One
/// thread at a time may call it (the host's audio thread; it may change between calls if the
/// host orders them). Everything else is the control side's, from any other thread.
///
/// `@unchecked Sendable`: the renderer and the pull state belong to the thread that renders
/// (the control side touches them only in `init`, and in `abandon` once the host has stopped);
/// what both sides share is the link's rings and bells and the atomics here.
public final class PullEngine: SessionEngine, @unchecked Sendable {
    /// Frames one call may ask for.
    public static var maximumFrames: Int { 8192 }

    public let rate: Int
    public let channels: Int
    private let link = EngineLink()
    /// The rendering thread's side of the link: take commands, apply, render, report.
    private let audio: EngineLink.AudioSide
    private let renderer: UnsafeMutablePointer<SessionRenderer>
    private let pull: UnsafeMutablePointer<PullState>
    /// Set by `start`: renders play the session from then on.
    private let started = Atomic<Bool>(false)
    /// From `start` until `finished` has been reported.
    private let running = Atomic<Bool>(false)
    private let framesPulled = Atomic<Int>(0)
    /// Rung once `running` has turned false: what `join` sleeps on. The rendering thread rings
    /// it through `finishedRinger`, which costs no reference counting (as `EngineLink`'s bells).
    private let finishedBell = Doorbell()
    private let finishedRinger: Unmanaged<Doorbell>

    /// What only the rendering thread touches between calls.
    private struct PullState: ~Copyable {
        var events = RenderEventBuffer(capacity: 256)
        /// Never saved into: the shared render step asks for somewhere to keep checkpoints, and a
        /// pull engine cannot take back what the host has taken.
        var checkpoints: RenderCheckpoints
        var announcedStart = false
        var over = false
    }

    /// - Parameter renderer: the session, at the rate and channel count the host pulls.
    public init(renderer: consuming SessionRenderer) {
        rate = renderer.sampleRate
        channels = renderer.channels
        let checkpoints = RenderCheckpoints(capacity: 1, for: renderer)
        pull = .allocate(capacity: 1)
        pull.initialize(to: PullState(checkpoints: checkpoints))
        self.renderer = .allocate(capacity: 1)
        self.renderer.initialize(to: renderer)
        audio = link.audioSide
        finishedRinger = .passUnretained(finishedBell)
    }

    deinit {
        renderer.deinitialize(count: 1)
        renderer.deallocate()
        pull.deinitialize(count: 1)
        pull.deallocate()
    }

    // MARK: Control side

    @discardableResult
    public func send(_ command: RenderCommand) -> Bool { link.send(command) }

    /// Commands sent and not yet taken (the host takes them at its next call), of `commandCapacity`.
    public var pendingCommands: Int { link.commands.approximateCount }
    public var commandCapacity: Int { link.commands.capacity }

    /// Audio → control; `eventsReadyDescriptor` turns readable when something was put here.
    public var events: SPSCRing<EngineEvent> { link.events }
    public var eventsReadyDescriptor: Int32 { link.eventBell.descriptor }
    public func clearEventsReady() { link.eventBell.drain() }

    /// From `start` until the session has finished and said so.
    public var isRunning: Bool { running.load(ordering: .acquiring) }
    /// Frames the host has pulled since `start`, silence after the end included.
    public var framesRendered: Int { framesPulled.load(ordering: .relaxed) }

    /// The session frame the host has pulled to, as of the end of its latest call: where the
    /// session stands, whatever the host's pace and whether it says when its frames are heard.
    public var renderedSessionFrame: Int64 { link.rendered.latest }
    /// The host's frames are the session's clock.
    public var rendersAheadOfHearing: Bool { false }

    /// From now on the host's calls play the session (before, they give silence).
    public func start() {
        running.store(true, ordering: .releasing)
        started.store(true, ordering: .releasing)
    }

    /// Waits until the session has finished (the host pulled it to its end, or it was let go
    /// with `abandon`): asleep in `poll` on the doorbell rung then. The host's thread rings it as
    /// it rings the event bell, with a byte written to a non-blocking pipe; it signals no
    /// semaphore or condition, which would take a lock on the real-time path. The bell is never
    /// emptied, so a later join returns at once.
    public func join() {
        var watch = pollfd(fd: finishedBell.descriptor, events: Int16(POLLIN), revents: 0)
        while running.load(ordering: .acquiring) {
            _ = poll(&watch, 1, -1)
        }
    }

    /// The host will pull no more (its session is being freed): the session ends here, and
    /// `finished` is reported, heard at no known time. Call it only once no `render` call is
    /// running or will come: it reports in the host's place.
    public func abandon() {
        guard running.load(ordering: .acquiring) else { return }
        pull.pointee.over = true
        audio.report(.finished(lastFrameAudible: MonotonicTime(nanoseconds: 0)))
        running.store(false, ordering: .releasing)
        link.eventBell.ring()
        finishedBell.ring()
    }

    /// A host's callback is no device of gong's: it is never lost, so there is nothing to close
    /// or open again.
    public func closeLostDevice() {}
    public func reopenLostDevice() {}

    // MARK: The host's real-time call

    /// Fills `buffer` with the next `frames` frames of the session, interleaved at `channels`.
    ///
    /// - Parameters:
    ///   - frames: 1 to `maximumFrames`; `buffer` holds at least `frames × channels` samples.
    ///   - heardAt: when the buffer's first frame is heard, on CLOCK_MONOTONIC, if the host knows
    ///     (its callback's output time); events then carry when they are heard, else 0.
    /// - Returns: `.playing` when the buffer holds the session (the block it ends in is filled
    ///   with silence after its last frame); `.notStarted` and `.over`: silence; `.refused`: a
    ///   frame count or buffer out of bounds, nothing written.
    @_noAllocation @_noLocks
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, frames: Int, heardAt: MonotonicTime? = nil)
        -> PullStatus
    {
        guard frames >= 1, frames <= 8192, let base = buffer.baseAddress, buffer.count >= frames * channels else {
            return .refused
        }
        let block = UnsafeMutableBufferPointer(start: base, count: frames * channels)
        guard started.load(ordering: .acquiring) else {
            block.update(repeating: 0)
            return .notStarted
        }
        framesPulled.add(frames, ordering: .relaxed)
        if pull.pointee.over {
            block.update(repeating: 0)
            return .over
        }
        let heard = heardAt?.nanoseconds ?? 0
        let rate = Int64(self.rate)
        let blockStart = renderer.pointee.outputFrame
        // The session's first frame is output frame 0: placed by the first call that knows when
        // its own first frame is heard, as a device's clock is once it is known.
        if heard > 0, !pull.pointee.announcedStart {
            pull.pointee.announcedStart = true
            let before = (blockStart / rate) * 1_000_000_000 + (blockStart % rate) * 1_000_000_000 / rate
            audio.report(.started(firstFrameAudible: MonotonicTime(nanoseconds: heard - before)))
        }
        if let command = audio.takeCommand() {
            audio.apply(startingWith: command, to: &renderer.pointee, events: &pull.pointee.events)
        }
        _ = audio.render(
            &renderer.pointee, into: block, frames: frames, stepFrames: frames, events: &pull.pointee.events,
            saving: false, checkpoints: &pull.pointee.checkpoints, eventsHeld: 0)
        var lastFrameAudible: Int64 = 0
        for index in 0..<pull.pointee.events.count {
            let event = pull.pointee.events[index]
            // Within this buffer: at most 8192 frames from its start, so no product overflows.
            let audible = heard > 0 ? heard + (event.outputFrame - blockStart) * 1_000_000_000 / rate : 0
            if case .finished = event.kind { lastFrameAudible = audible }
            audio.report(.render(event, audible: MonotonicTime(nanoseconds: audible)))
        }
        pull.pointee.events.removeAll()
        if renderer.pointee.isFinished {
            pull.pointee.over = true
            audio.report(.finished(lastFrameAudible: MonotonicTime(nanoseconds: lastFrameAudible)))
            // Rung once more after: a control side woken by `finished` may look at `isRunning`
            // before it turns false, and must be woken again to see it (as the push engine's
            // thread rings once more when it ends).
            running.store(false, ordering: .releasing)
            audio.ringEventBell()
            // The same non-blocking write, vouched for as the event bell's is (`EngineLink`).
            let finished = finishedRinger
            _unsafePerformance { finished._withUnsafeGuaranteedRef { $0.ring() } }
        }
        return .playing
    }
}

/// What a pull engine's `render` did.
public enum PullStatus: BitwiseCopyable, Sendable, Equatable {
    /// The buffer holds the next frames of the session.
    case playing
    /// `start` has not been called yet: the buffer holds silence.
    case notStarted
    /// The session has finished (and reported `finished`): the buffer holds silence.
    case over
    /// The frame count is outside 1 to `PullEngine.maximumFrames`, or the buffer is too short
    /// for it: nothing was written.
    case refused
}
