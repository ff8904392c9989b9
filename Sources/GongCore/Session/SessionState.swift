/// Where a session is. One enum, not a set of flags: a session is in exactly one of these.
public enum SessionState: Equatable, Sendable {
    case idle
    /// Sounds loading, device opening, warm-up silence.
    case preparing
    case active(phase: Int, cycle: Int)
    /// Waiting for the person; the clock is stopped. Resuming returns to this phase and cycle.
    case paused(resumePhase: Int, cycle: Int)
    /// The last cycle is over (or the person stopped): the end cue and tails ring out.
    case completing
    case completed(SessionSummary)
    /// The session cannot go on for now (the device is gone) or for good (`reason == .fatal`).
    /// `interrupted` is the state it was in, so that it carries on from there: a device lost
    /// while paused comes back paused, one lost during the ring-out resumes the ring-out. A stop
    /// while waiting for the device makes it `completing`, so the session ends when the audio
    /// side does.
    indirect case failed(SessionFailure, interrupted: SessionState)

    /// The state's name without its payload, for the transition table and messages.
    public var kind: Kind {
        switch self {
        case .idle: .idle
        case .preparing: .preparing
        case .active: .active
        case .paused: .paused
        case .completing: .completing
        case .completed: .completed
        case .failed: .failed
        }
    }

    public enum Kind: String, CaseIterable, Sendable, Codable {
        case idle, preparing, active, paused, completing, completed, failed
    }
}

/// Why a session could not go on.
public struct SessionFailure: Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Equatable, Sendable {
        /// The output device went away; the session may continue when it comes back.
        case deviceLost
        /// Anything that ends the session for good (a sound that cannot be read, a device that
        /// cannot be opened at all).
        case fatal
    }

    public var reason: Reason
    public var message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}

/// Everything that can happen to a session: the person's commands and what the audio reports.
public enum SessionInput: Equatable, Sendable {
    case prepare
    /// Audio is running: the warm-up (if any) has begun.
    case start
    case phaseBegan(phase: Int, cycle: Int)
    case pause
    case resume
    case skip
    /// Stop gracefully: the end cue rings out.
    case stop
    /// The planned end was reached (or a stop jumped to it). `playedFrames`: the session clock
    /// there, skips left out — the length an open sit turned out to have.
    case sessionEnded(playedFrames: Int64 = 0)
    /// The last tail rang out; `playedFrames` is the session clock at that moment.
    case finished(playedFrames: Int64)
    /// Frames lost to an underrun and recovered from.
    case underrun(lostFrames: Int64)
    /// A cue started `lateFrames` after its scheduled frame.
    case cuePlayed(lateFrames: Int64)
    case fail(SessionFailure)
    /// The device is back after a loss. `resume` is false for interactive sessions, which wait
    /// for the person; headless ones carry on by themselves.
    case deviceReturned(resume: Bool)
    /// The system suspended the device (a laptop's sleep) and it was recovered. `resume` is false
    /// for interactive sessions, which pause and wait for the person; headless ones play on.
    case suspended(resume: Bool)

    public var kind: Kind {
        switch self {
        case .prepare: .prepare
        case .start: .start
        case .phaseBegan: .phaseBegan
        case .pause: .pause
        case .resume: .resume
        case .skip: .skip
        case .stop: .stop
        case .sessionEnded: .sessionEnded
        case .finished: .finished
        case .underrun: .underrun
        case .cuePlayed: .cuePlayed
        case .fail(let failure): failure.reason == .deviceLost ? .deviceLost : .fail
        case .deviceReturned: .deviceReturned
        case .suspended: .suspended
        }
    }

    public enum Kind: String, CaseIterable, Sendable, Codable {
        case prepare, start, phaseBegan, pause, resume, skip, stop, sessionEnded, finished
        case underrun, cuePlayed, fail, deviceLost, deviceReturned, suspended
    }
}

/// What the owner of the machine must do because of a transition. The machine decides; the
/// owner (a live session, an offline render) carries these out in one place.
public enum SessionEffect: Equatable, Sendable {
    case sendToAudio(RenderCommand)
    /// Close the device, from the control side: a lost one at once (the audio side has let go
    /// of it), one the session played to its end once the audio side has ended.
    case closeDevice
    /// Open the lost device again, with the machine's backoff (`SessionMachine.DeviceLoss`),
    /// and hand it to the audio side; from the control side.
    case reopenDevice
    /// Tell whoever listens (terminal, JSON lines) that the state changed.
    case announce(SessionState)
}

/// An invalid input for the current state: a typed error, never a crash.
public struct InvalidTransition: Error, Equatable, Sendable, CustomStringConvertible {
    public let from: SessionState.Kind
    public let input: SessionInput.Kind

    public init(from: SessionState.Kind, input: SessionInput.Kind) {
        self.from = from
        self.input = input
    }

    public var description: String {
        "cannot \(input.rawValue) a session that is \(from.rawValue)"
    }
}

/// The record of a finished (or failed) session: what was planned and what happened.
public struct SessionSummary: Equatable, Sendable, Codable {
    public var patternName: String
    public var sampleRate: Int
    public var plannedFrames: Int64
    public var plannedCycles: Int
    /// Frames the session clock ran, including the end cue's ring-out.
    public var playedFrames: Int64 = 0
    public var cyclesCompleted = 0
    public var phasesCompleted = 0
    public var pauses = 0
    public var skips = 0
    public var stoppedEarly = false
    public var xruns = 0
    public var framesLost: Int64 = 0
    public var deviceLosses = 0
    /// Times the system suspended the device (a laptop's sleep) and it was recovered.
    public var suspends = 0
    public var cuesPlayed = 0
    /// The worst lateness of any cue, in frames (0 means every cue on its frame).
    public var maxCueLatenessFrames: Int64 = 0
    /// An open sit: a stop is how it ends, not an early end.
    public var openEnded = false
    /// The seed the pattern's random bells were drawn from (nil: it has none), to sit them again.
    public var seed: UInt64?

    public init(patternName: String, sampleRate: Int, plannedFrames: Int64, plannedCycles: Int) {
        self.patternName = patternName
        self.sampleRate = sampleRate
        self.plannedFrames = plannedFrames
        self.plannedCycles = plannedCycles
    }

    public var plannedSeconds: Double { Double(plannedFrames) / Double(sampleRate) }
    public var playedSeconds: Double { Double(playedFrames) / Double(sampleRate) }
}
