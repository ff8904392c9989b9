/// The session state machine: one `handle` function that checks every input against the
/// transition table, moves to the next state and says which effects follow.
///
/// The machine never performs effects itself, so it runs the same under a live audio engine, an
/// offline render and a test.
///
/// It owns what follows a fault: an underrun is counted; a suspend is counted and pauses an
/// interactive session that was playing; a lost device is the policy below.
///
/// A lost device, decided here and only carried out elsewhere. The audio side takes a device
/// for gone when it says so (`ENODEV`, `EIO`, a server that went away) or takes no audio for
/// `DeviceLoss.stallSeconds`; it then stops touching it at once and reports it, and does nothing
/// more of its own. The session moves to `failed`, keeping the state the loss interrupted, and:
/// - the session is paused where it broke off (`.sendToAudio(.pause)`: the fade is rendered
///   unheard, so the device comes back to a paused session, not a mid-fade);
/// - the device is closed (`.closeDevice`) and opened again (`.reopenDevice`) from the control
///   side, never the audio thread, waiting `DeviceLoss.retryDelayMilliseconds` before each
///   attempt (100 ms, doubling to 5 s) — sleeping, never spinning — for as long as the session
///   waits: it never gives up by itself; a stop (or a halt) ends the wait and the session;
/// - the person is told twice: the device is lost (why, as data), and it is back;
/// - when it is back (`.deviceReturned`) the session carries on from the state interrupted: a
///   ring-out rings on by itself, a pause the person made stays, and a session that was playing
///   resumes by itself only when headless; an interactive one waits for the person.
public struct SessionMachine: Sendable {
    public private(set) var state: SessionState = .idle
    /// Counters for the summary, kept up to date as inputs arrive.
    public private(set) var summary: SessionSummary
    private var lastPhase: (phase: Int, cycle: Int)
    private let phasesPerCycle: Int
    /// Where the session begins: phase 0 of cycle 0, or the phase a resumed session carries on
    /// in (not counted as completed when it turns out to be where the audio begins).
    private let firstPhase: (phase: Int, cycle: Int)
    /// The start delay's frames: on the session clock, but not time sat, so the summary leaves
    /// them out of what was planned and played.
    private var startDelayFrames: Int64 = 0

    public init(
        patternName: String, sampleRate: Int, plannedFrames: Int64, plannedCycles: Int, phasesPerCycle: Int,
        firstPhase: (phase: Int, cycle: Int) = (0, 0)
    ) {
        summary = SessionSummary(
            patternName: patternName, sampleRate: sampleRate, plannedFrames: plannedFrames, plannedCycles: plannedCycles
        )
        self.phasesPerCycle = max(1, phasesPerCycle)
        self.firstPhase = firstPhase
        lastPhase = firstPhase
    }

    public init(timeline: Timeline) {
        self.init(
            patternName: timeline.pattern.name, sampleRate: timeline.sampleRate,
            plannedFrames: timeline.plannedEndFrame - timeline.startDelayFrames,
            plannedCycles: timeline.cycleCount, phasesPerCycle: timeline.pattern.phases.count,
            firstPhase: timeline.phaseBoundaries.first.map { ($0.phase, $0.cycle) } ?? (0, 0))
        summary.seed = timeline.pattern.hasRandomBells ? timeline.pattern.seed : nil
        summary.openEnded = timeline.pattern.length == .open
        startDelayFrames = timeline.startDelayFrames
    }

    /// Which inputs each state accepts: the one place it is decided. `handle` rejects everything
    /// else with `InvalidTransition`, and then does what each input does in the state it finds.
    public static let table: [SessionState.Kind: Set<SessionInput.Kind>] = [
        .idle: [.prepare, .fail],
        .preparing: [.start, .phaseBegan, .pause, .stop, .fail, .deviceLost, .underrun, .cuePlayed, .suspended],
        .active: [
            .phaseBegan, .pause, .skip, .stop, .sessionEnded, .underrun, .cuePlayed, .fail, .deviceLost, .suspended
        ],
        // The audio side pauses a few milliseconds after the person asks: what it rendered in
        // between (a phase, a cue, the session's end) still arrives, and still happened.
        .paused: [
            .resume, .skip, .stop, .phaseBegan, .cuePlayed, .sessionEnded, .underrun, .fail, .deviceLost, .suspended
        ],
        // Nothing is left but the end cue and the tails: a pause, resume, skip or stop this late
        // would only hold the session open or cut what it is for, so the person is told it was
        // not taken (a halt still cuts the tails). The audio side's `sessionEnded` still comes
        // after a stop: the stop is a jump to the session's end, which the renderer then reaches.
        // So may a phase it rendered before the stop reached it (one a skip jumped to).
        .completing: [.finished, .sessionEnded, .phaseBegan, .cuePlayed, .underrun, .fail, .deviceLost, .suspended],
        .completed: [],
        // Waiting for the device: it comes back, or the person stops, or the audio side ends.
        .failed: [.deviceReturned, .stop, .finished]
    ]

    public static func accepts(_ input: SessionInput.Kind, in state: SessionState.Kind) -> Bool {
        table[state]?.contains(input) ?? false
    }

    /// Checks `input` against `table`, then takes it: the new state, and the effects that follow,
    /// led by `.announce` when the state changed.
    @discardableResult
    public mutating func handle(_ input: SessionInput) throws(InvalidTransition) -> [SessionEffect] {
        guard SessionMachine.accepts(input.kind, in: state.kind) else {
            throw InvalidTransition(from: state.kind, input: input.kind)
        }
        let before = state
        var effects = try take(input)
        if state != before { effects.insert(.announce(state), at: 0) }
        return effects
    }

    /// What an accepted input does. Where it depends on the state, the step says how; which
    /// states take it at all is `table`'s to say, not this switch's.
    private mutating func take(_ input: SessionInput) throws(InvalidTransition) -> [SessionEffect] {
        switch input {
        case .prepare:
            state = .preparing
            return []
        case .start:
            state = .active(phase: firstPhase.phase, cycle: firstPhase.cycle)
            return []
        case .phaseBegan(let phase, let cycle):
            beginPhase(phase, cycle: cycle)
            return []
        case .pause:
            summary.pauses += 1
            state = pausedWhereItIs
            return [.sendToAudio(.pause)]
        case .resume:
            let (phase, cycle) = placeInSession
            state = .active(phase: phase, cycle: cycle)
            return [.sendToAudio(.resume)]
        case .skip:
            summary.skips += 1
            return [.sendToAudio(.skipPhase)]
        case .stop:
            return stop()
        case .sessionEnded(let played):
            return endSession(playedFrames: played)
        case .finished(let played):
            finish(playedFrames: played)
            return [.closeDevice]
        case .underrun(let lost):
            // The audio thread has already moved the session clock on by `lost` (it cannot wait
            // for a round trip through the control side); here it is only counted.
            summary.xruns += 1
            summary.framesLost += lost
            return []
        case .cuePlayed(let late):
            summary.cuesPlayed += 1
            summary.maxCueLatenessFrames = max(summary.maxCueLatenessFrames, late)
            return []
        case .suspended(let resume):
            // The device plays on after a suspend; an interactive session that was playing pauses
            // and waits for the person, as after any interruption. Paused stays paused, and a
            // ring-out rings on: a pause there would only hold the session open.
            summary.suspends += 1
            guard !resume, state.kind == .active || state.kind == .preparing else { return [] }
            state = pausedWhereItIs
            return [.sendToAudio(.pause)]
        case .fail(let failure):
            return fail(failure)
        case .deviceReturned(let resume):
            return try deviceReturned(resume: resume)
        }
    }

    /// The phase the session is in, or carries on in once it plays: a paused one's resume point,
    /// the first phase before the audio has begun one.
    private var placeInSession: (phase: Int, cycle: Int) {
        switch state {
        case .active(let phase, let cycle), .paused(let phase, let cycle): (phase, cycle)
        default: firstPhase
        }
    }

    /// The session paused where it is (a preparing one in its first phase).
    private var pausedWhereItIs: SessionState {
        let (phase, cycle) = placeInSession
        return .paused(resumePhase: phase, cycle: cycle)
    }

    private mutating func beginPhase(_ phase: Int, cycle: Int) {
        // Rendered before a stop took hold: the stop cut it short, so it is not counted.
        guard state.kind != .completing else { return }
        if state.kind != .preparing, (phase, cycle) != (lastPhase.phase, lastPhase.cycle) {
            countCompletedPhase()
        }
        lastPhase = (phase, cycle)
        // A phase crossed just before a pause took hold: still paused, resuming in it.
        if case .paused = state {
            state = .paused(resumePhase: phase, cycle: cycle)
        } else {
            state = .active(phase: phase, cycle: cycle)
        }
    }

    private mutating func stop() -> [SessionEffect] {
        guard case .failed(let failure, let interrupted) = state else {
            summary.stoppedEarly = !summary.openEnded
            state = .completing
            return [.sendToAudio(.stop)]
        }
        // Nothing can ring out without a device: the audio side stops retrying and ends, and
        // its `finished` completes the session. Should the device come back first, the end
        // cue rings out there. A stop during the ring-out does not make the session early.
        if interrupted.kind != .completing { summary.stoppedEarly = !summary.openEnded }
        state = .failed(failure, interrupted: .completing)
        return [.sendToAudio(.stop)]
    }

    private mutating func endSession(playedFrames played: Int64) -> [SessionEffect] {
        // An open sit was planned to last until it ended: from here on its length is known.
        if summary.openEnded { summary.plannedFrames = max(0, played - startDelayFrames) }
        switch state.kind {
        case .active:
            countCompletedPhase()
            state = .completing
            return []
        case .paused:
            // The end came before the pause took hold. As in `completing`, a pause this late is
            // let go: the tails ring out and the session finishes.
            countCompletedPhase()
            state = .completing
            return [.sendToAudio(.resume)]
        default:
            // The end a stop jumped to: the ring-out it began goes on, and the phase it cut short
            // is not counted as completed.
            return []
        }
    }

    private mutating func finish(playedFrames played: Int64) {
        // From `failed`: the audio side ended while the device was gone (after a stop).
        summary.playedFrames = max(0, played - startDelayFrames)
        // An open sit planned the cycles it came to sit.
        if summary.openEnded { summary.plannedCycles = summary.cyclesCompleted }
        state = .completed(summary)
    }

    private mutating func fail(_ failure: SessionFailure) -> [SessionEffect] {
        state = .failed(failure, interrupted: state)
        guard failure.reason == .deviceLost else { return [.closeDevice] }
        // The policy in the type's doc: silence the renderer where it broke off (a pause is
        // nothing to one already paused), close, open again.
        summary.deviceLosses += 1
        return [.sendToAudio(.pause), .closeDevice, .reopenDevice]
    }

    /// The session carries on from what the loss interrupted; the renderer was paused when the
    /// device went (the loss's `.pause`).
    private mutating func deviceReturned(resume: Bool) throws(InvalidTransition) -> [SessionEffect] {
        guard case .failed(let failure, let interrupted) = state, failure.reason == .deviceLost else {
            throw InvalidTransition(from: state.kind, input: .deviceReturned)
        }
        switch interrupted.kind {
        case .completing:
            // Nothing is left to hear but the tails: they ring out, interactive or not, and
            // the session ends — waiting for a key would only hold it open.
            state = .completing
            return [.sendToAudio(.resume)]
        case .paused:
            state = interrupted
            return []
        case .active, .preparing:
            // Interactive sessions wait for the person, paused already; headless ones carry on
            // by themselves.
            state = interrupted
            guard resume else {
                state = pausedWhereItIs
                return []
            }
            return [.sendToAudio(.resume)]
        case .idle, .completed, .failed:
            // A device is lost only while there is a session to play.
            throw InvalidTransition(from: state.kind, input: .deviceReturned)
        }
    }

    private mutating func countCompletedPhase() {
        summary.phasesCompleted += 1
        if lastPhase.phase == phasesPerCycle - 1 { summary.cyclesCompleted += 1 }
    }
}

extension SessionMachine {
    /// The numbers of the device-loss policy (see `SessionMachine`): the one place they are set.
    public enum DeviceLoss {
        /// A device that takes no audio this long — every write refused, every wait timed out —
        /// is taken for gone. Long enough for a sound server that is busy or restarting to catch
        /// up; short enough that a person hears of it while they still wonder at the silence.
        public static var stallSeconds: Int { 2 }

        /// How long to wait before attempt `attempt` (from 1) to open a lost device again: 100 ms,
        /// doubling, at most 5 s. A device unplugged for a moment (a USB reset, a server's
        /// restart) is back at once; one gone for long costs an attempt every 5 s.
        public static func retryDelayMilliseconds(beforeAttempt attempt: Int) -> Int {
            min(5000, 100 << min(max(attempt - 1, 0), 6))
        }
    }
}
