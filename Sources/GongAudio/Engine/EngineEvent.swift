import GongCore

/// Where an event falls on the session's clock, and when a listener hears it.
public struct SessionMoment: BitwiseCopyable, Sendable, Equatable {
    /// Frames since the session's first, skipped and lost stretches included.
    public var sessionFrame: Int64
    /// CLOCK_MONOTONIC; 0 when the device gives no time (ALSA's `null` takes frames at once) or
    /// its clock is not yet known.
    public var audible: MonotonicTime

    @_noAllocation @_noLocks
    public init(sessionFrame: Int64, audible: MonotonicTime) {
        self.sessionFrame = sessionFrame
        self.audible = audible
    }

    /// `audible` in seconds, or nil when unknown.
    public var audibleSeconds: Double? { audible.nanoseconds > 0 ? audible.seconds : nil }
}

/// What the audio thread reports to the control side, through a lock-free ring. Plain data.
/// Every event says where it falls: a renderer's event by its own frame, the rest by `at`.
public enum EngineEvent: BitwiseCopyable, Sendable, Equatable {
    /// The device is playing: its first frame is (or was) heard at `firstFrameAudible`.
    case started(firstFrameAudible: MonotonicTime)
    /// Something the renderer did, and when a listener hears it (0 when the device gives no time).
    case render(RenderEvent, audible: MonotonicTime)
    /// Audio ran dry for `lostFrames` frames; the session clock was moved on by as much. `at`
    /// is where it carries on — the first frame after the gap — and when that is heard.
    /// `silent` is true when the session was paused (nothing audible was lost).
    case underrun(lostFrames: Int64, silent: Bool, at: SessionMoment)
    /// Audio was lost (the `underrun` just told, of `frames`) behind frames the device already
    /// held out of a take-back's reach: those from output frame `fromOutputFrame` up to
    /// `toOutputFrame` (the renderer's, as `RenderEvent.outputFrame`) were heard `frames` later
    /// than reckoned. An event among them already told was heard that much late; one told
    /// after this is placed in time with the loss counted, and is late by it all the same.
    case heardLate(fromOutputFrame: Int64, toOutputFrame: Int64, frames: Int64)
    /// The device's clock stood still for `nanoseconds` while its frames waited (a sound
    /// server's driver that woke late): no frame was skipped and the session clock did not move,
    /// but every frame not yet heard is heard that much later. `at`: where the session stood when
    /// it was told, and when that is heard; `silent` as for an underrun.
    case clockStopped(nanoseconds: Int64, silent: Bool, at: SessionMoment)
    /// The system suspended the device and it came back (resumed or re-prepared), at
    /// `at.audible` (the moment of recovery).
    case suspendRecovered(at: SessionMoment)
    /// The device stopped answering; the audio is paused and the engine retries opening it.
    /// `at`: the frame the session will carry on from, and when the silence began (the end of
    /// what the device was given).
    case deviceLost(code: Int32, at: SessionMoment)
    /// Opening the device again succeeded after `attempts` tries, at `at.audible`; the session
    /// waits at `at.sessionFrame`.
    case deviceBack(attempts: Int32, at: SessionMoment)
    /// The priority the audio thread asked for was refused (errno); playback runs at normal
    /// priority.
    case priorityRefused(ThreadPriority, code: Int32)
    /// The session finished and the device played its last frame.
    case finished(lastFrameAudible: MonotonicTime)
    /// The event ring was full and `count` events were lost (the control side did not drain).
    case eventsDropped(count: Int32)
}

// The audio thread's ring calls, with the element types fixed so that the compiler checks what
// their attributes promise: taking a command or a device handed over, and posting an event or a
// period's timing, allocate nothing and take no lock. The engines make their ring calls on the
// audio thread through these alone.

@_noAllocation @_noLocks
func takeCommandOnAudioThread(_ ring: SPSCRing<RenderCommand>) -> RenderCommand? {
    ringPop(ring)
}

@_noAllocation @_noLocks
func postFromAudioThread(_ event: EngineEvent, to ring: SPSCRing<EngineEvent>) -> Bool {
    ringPush(event, to: ring)
}

@_noAllocation @_noLocks
func postTimingFromAudioThread(_ timing: PeriodTiming, to ring: SPSCRing<PeriodTiming>) -> Bool {
    ringPush(timing, to: ring)
}

@_noAllocation @_noLocks
func takeHandoverOnAudioThread(_ ring: SPSCRing<DeviceHandover>) -> DeviceHandover? {
    ringPop(ring)
}
