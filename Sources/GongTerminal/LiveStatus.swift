import GongCore

/// Everything the live view shows, as plain values: the engine side fills it in, the terminal
/// side only draws it.
public struct LiveStatus: Equatable, Sendable {
    public enum Activity: Equatable, Sendable {
        case preparing
        case playing
        case paused
        /// Tails ringing out after the end (or a stop).
        case completing
        /// The device went away; `message` says what happened and what gong is doing about it.
        case waitingForDevice(message: String)
    }

    public var patternName: String
    public var phaseName: String
    /// 0-based phase index and count, 1-based cycle and count.
    public var phaseIndex: Int
    public var phaseCount: Int
    public var cycle: Int
    public var cycleCount: Int
    public var phaseElapsed: Double
    public var phaseLength: Double
    public var sessionElapsed: Double
    public var sessionLength: Double
    public var motion: BreathMotion
    /// The motion of the phase before, so a hold knows whether the lungs are full or empty.
    public var previousMotion: BreathMotion
    public var activity: Activity
    /// An open sit: it has no length to count down or fill a bar towards, only what was sat.
    public var isOpen = false
    /// Seconds until the start cue while a start delay counts down; nil once it has passed.
    public var startsIn: Double?

    public init(
        patternName: String, phaseName: String, phaseIndex: Int, phaseCount: Int, cycle: Int, cycleCount: Int,
        phaseElapsed: Double, phaseLength: Double, sessionElapsed: Double, sessionLength: Double,
        motion: BreathMotion, previousMotion: BreathMotion = .still, activity: Activity
    ) {
        self.patternName = patternName
        self.phaseName = phaseName
        self.phaseIndex = phaseIndex
        self.phaseCount = phaseCount
        self.cycle = cycle
        self.cycleCount = cycleCount
        self.phaseElapsed = phaseElapsed
        self.phaseLength = phaseLength
        self.sessionElapsed = sessionElapsed
        self.sessionLength = sessionLength
        self.motion = motion
        self.previousMotion = previousMotion
        self.activity = activity
    }
}
