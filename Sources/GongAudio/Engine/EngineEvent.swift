import GongCore

/// What the audio thread reports to the control side, through a lock-free ring. Plain data.
public enum EngineEvent: BitwiseCopyable, Sendable, Equatable {
    /// The device is playing: its first frame is (or was) heard at `firstFrameAudible`.
    case started(firstFrameAudible: MonotonicTime)
    /// Something the renderer did, and when a listener hears it (0 when the device gives no time).
    case render(RenderEvent, audible: MonotonicTime)
    /// Audio ran dry for `lostFrames` frames; the session clock was moved on by as much.
    /// `silent` is true when the session was paused (nothing audible was lost).
    case underrun(lostFrames: Int64, silent: Bool)
    /// The system suspended the device and it came back (resumed or re-prepared).
    case suspendRecovered
    /// The device stopped answering; the audio is paused and the engine retries opening it.
    case deviceLost(code: Int32)
    /// Opening the device again succeeded after `attempts` tries.
    case deviceBack(attempts: Int32)
    /// The priority the audio thread asked for was refused (errno); playback runs at normal
    /// priority.
    case priorityRefused(ThreadPriority, code: Int32)
    /// The session finished and the device played its last frame.
    case finished(lastFrameAudible: MonotonicTime)
    /// The event ring was full and `count` events were lost (the control side did not drain).
    case eventsDropped(count: Int32)
}
