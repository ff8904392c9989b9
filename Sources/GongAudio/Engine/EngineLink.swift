import GongCore
import Synchronization

/// What both engines share between their control side and their audio side, and the steps of
/// the real-time path written once for both (`AudioSide`): take the control side's commands and
/// apply them, render a block, report what happened.
///
/// `PlaybackEngine` (push: its own thread waits on a device) and `PullEngine` (pull: the host's
/// callback asks for frames) each hold one. The control side calls `send` and drains `events`
/// when `eventBell` rings; the audio side (the engine's thread, or whichever thread the host
/// pulls from) calls the `@_noAllocation @_noLocks` steps of `audioSide`, which the compiler
/// checks.
///
/// `@unchecked Sendable`: it holds two lock-free rings and two doorbells, set once in `init`;
/// which side may call what is written on each member.
final class EngineLink: @unchecked Sendable {
    /// Control → audio: pause, resume, skip, stop, halt, gain.
    let commands = SPSCRing<RenderCommand>(minimumCapacity: 64)
    /// Audio → control; `eventBell` rings when something was put here.
    let events = SPSCRing<EngineEvent>(minimumCapacity: 8192)
    /// Rung by `send`: a device's wait watches it (a pull engine takes commands on every call
    /// and needs no waking).
    let commandBell = Doorbell()
    /// Rung by the audio side when it reports something: a control loop watches its descriptor
    /// instead of polling.
    let eventBell = Doorbell()
    /// Where the audio side's renderer stands after its latest block or command, for a status
    /// read from any thread at any moment without waiting for the audio side or its reports.
    let rendered = RenderedPosition()
    /// The same rings and bell for the audio side, valid as long as this link.
    let audioSide: AudioSide
    /// Events the audio side found no room for and has not yet told of (audio side only).
    private let undelivered = UnsafeMutablePointer<Int32>.allocate(capacity: 1)

    init() {
        undelivered.initialize(to: 0)
        audioSide = AudioSide(
            commands: .passUnretained(commands), events: .passUnretained(events), eventBell: .passUnretained(eventBell),
            rendered: .passUnretained(rendered), undelivered: undelivered)
    }

    deinit { undelivered.deallocate() }

    /// Queues a command and wakes the audio side (control side only). False when the ring is
    /// full (the audio side is not taking commands).
    func send(_ command: RenderCommand) -> Bool {
        guard commands.tryPush(command) else { return false }
        commandBell.ring()
        return true
    }

    /// The audio side's steps. It refers to the link's rings and bell without counting
    /// references: a reference count taken on the audio side is an atomic the compiler counts as
    /// a possible lock (`@_noLocks` refuses it), and this plain value is loaded from an engine
    /// without one. It must not outlive its link (each engine holds both).
    struct AudioSide: BitwiseCopyable {
        let commands: Unmanaged<SPSCRing<RenderCommand>>
        let events: Unmanaged<SPSCRing<EngineEvent>>
        let eventBell: Unmanaged<Doorbell>
        let rendered: Unmanaged<RenderedPosition>
        let undelivered: UnsafeMutablePointer<Int32>

        /// The next command the control side sent, if any.
        @_noAllocation @_noLocks
        func takeCommand() -> RenderCommand? {
            commands._withUnsafeGuaranteedRef { takeCommandOnAudioThread($0) }
        }

        /// Applies `first` (just taken with `takeCommand`) and every command queued behind it,
        /// in order, between two blocks. The caller takes the first one itself, so that it can do
        /// what must come before any command is applied (the push engine takes back what the
        /// device still holds).
        @_noAllocation @_noLocks
        func apply(
            startingWith first: RenderCommand, to renderer: inout SessionRenderer, events: inout RenderEventBuffer
        ) {
            renderer.apply(first, events: &events)
            while let command = takeCommand() {
                renderer.apply(command, events: &events)
            }
            publish(renderer)
        }

        /// Renders `frames` frames into `block` (interleaved at the renderer's channel count) in
        /// steps of at most `stepFrames`; with `saving`, the renderer's state is kept in
        /// `checkpoints` before each step, tagged with `eventsHeld` plus the events of this block
        /// so far (what a take-back to it drops). True when the whole block is silence.
        @_noAllocation @_noLocks
        func render(
            _ renderer: inout SessionRenderer, into block: UnsafeMutableBufferPointer<Float>, frames: Int,
            stepFrames: Int, events: inout RenderEventBuffer, saving: Bool, checkpoints: inout RenderCheckpoints,
            eventsHeld: Int64
        ) -> Bool {
            let channels = renderer.channels
            var silent = true
            var stepStart = 0
            while stepStart < frames {
                let count = min(stepFrames, frames - stepStart)
                if saving { renderer.saveCheckpoint(into: &checkpoints, tag: eventsHeld + Int64(events.count)) }
                _ = renderer.render(
                    into: UnsafeMutableBufferPointer(
                        start: block.baseAddress.unsafelyUnwrapped + stepStart * channels, count: count * channels),
                    events: &events)
                silent = silent && renderer.lastBlockWasSilent
                stepStart += count
            }
            publish(renderer)
            return silent
        }

        /// Tells the control side where the renderer stands now (a skip moves it without a block).
        @_noAllocation @_noLocks
        func publish(_ renderer: borrowing SessionRenderer) {
            let frame = renderer.sessionFrame
            rendered._withUnsafeGuaranteedRef { $0.sessionFrame.store(frame, ordering: .releasing) }
        }

        /// Tells the control side, and rings for it. A full ring loses the event (the control
        /// side stopped taking them): they are counted, and the count is told, as
        /// `eventsDropped`, ahead of the first event there is room for again.
        @_noAllocation @_noLocks
        func report(_ event: EngineEvent) {
            events._withUnsafeGuaranteedRef { ring in
                if undelivered.pointee > 0 {
                    guard postFromAudioThread(.eventsDropped(count: undelivered.pointee), to: ring) else {
                        if undelivered.pointee < .max { undelivered.pointee += 1 }
                        return
                    }
                    undelivered.pointee = 0
                }
                if !postFromAudioThread(event, to: ring) { undelivered.pointee = 1 }
            }
            ringEventBell()
        }

        /// Wakes the control side.
        @_noAllocation @_noLocks
        func ringEventBell() {
            // The one system call: a byte written to a non-blocking pipe (it never waits; a full
            // pipe is ringing already). The checker cannot see into libc's `write`, so it is
            // vouched for here, and only here.
            _unsafePerformance { eventBell._withUnsafeGuaranteedRef { $0.ring() } }
        }
    }
}

/// The session frame the audio side's renderer has reached: the session's clock, less the frames
/// played while paused, plus those skipped or moved on. One atomic word, stored by the audio side
/// after each block and read by the control side whenever it asks, so the reader never waits
/// and the writer never locks; everything else a status says (phase, cycle, their times) follows
/// from this frame and the timeline.
final class RenderedPosition: Sendable {
    let sessionFrame = Atomic<Int64>(0)

    /// The frame as of the audio side's latest block (control side).
    var latest: Int64 { sessionFrame.load(ordering: .acquiring) }
}
