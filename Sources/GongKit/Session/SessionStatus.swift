import GongCore

/// Where a live session stands at one moment: what the terminal view draws and the control
/// channel's `status` answers.
public struct SessionStatus: Sendable, Equatable, Codable {
    public var pattern: String
    public var state: SessionState.Kind
    /// The phase playing now, 0-based, of `phaseCount`.
    public var phase: String
    public var phaseIndex: Int
    public var phaseCount: Int
    /// The cycle, 1-based, of `cycles`.
    public var cycle: Int
    public var cycles: Int
    public var phaseElapsedSeconds: Double
    public var phaseSeconds: Double
    public var elapsedSeconds: Double
    public var plannedSeconds: Double
    public var motion: BreathMotion
    /// The motion of the phase before, so a hold knows whether the lungs are full or empty.
    public var previousMotion: BreathMotion
    public var gainDB: Double
    /// True for an open sit (`plannedSeconds` is then the longest it may run); nil otherwise,
    /// so a status from a gong before open sits still reads.
    public var open: Bool?
    /// The start delay (`--delay`) at the beginning of `elapsedSeconds` and `plannedSeconds`;
    /// nil without one.
    public var startDelaySeconds: Double?
    /// While the session waits for its device: what happened to it.
    public var waitingFor: String?

    init(_ live: LiveSession, gainDB: Double) {
        let timeline = live.plan.timeline
        let phases = timeline.pattern.phases
        let position = live.position
        let index = min(position.phase, phases.count - 1)
        pattern = timeline.pattern.name
        state = live.state.kind
        phase = phases[index].name
        phaseIndex = index
        phaseCount = phases.count
        cycle = position.cycle + 1
        cycles = timeline.cycleCount
        phaseElapsedSeconds = position.phaseElapsedSeconds
        phaseSeconds = position.phaseLengthSeconds
        elapsedSeconds = position.sessionElapsedSeconds
        plannedSeconds = position.sessionLengthSeconds
        open = timeline.pattern.length == .open ? true : nil
        if timeline.startDelayFrames > 0 {
            startDelaySeconds = Double(timeline.startDelayFrames) / Double(timeline.sampleRate)
        }
        motion = phases[index].motion
        previousMotion = phases[(index + phases.count - 1) % phases.count].motion
        self.gainDB = gainDB
        if case .failed(let failure, _) = live.state { waitingFor = failure.message }
    }
}
