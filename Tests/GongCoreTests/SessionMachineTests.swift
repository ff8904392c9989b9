import GongCore
import Testing

@Suite struct SessionMachineTests {
    static func machine() -> SessionMachine {
        SessionMachine(patternName: "box", sampleRate: 48000, plannedFrames: 48000 * 32, plannedCycles: 2, phasesPerCycle: 4)
    }

    /// A machine driven into each state by valid inputs only.
    static func machine(in kind: SessionState.Kind) throws -> SessionMachine {
        var machine = machine()
        let path: [SessionInput]
        switch kind {
        case .idle: path = []
        case .preparing: path = [.prepare]
        case .active: path = [.prepare, .start]
        case .paused: path = [.prepare, .start, .pause]
        case .completing: path = [.prepare, .start, .sessionEnded]
        case .completed: path = [.prepare, .start, .sessionEnded, .finished(playedFrames: 10)]
        case .failed: path = [.prepare, .start, .fail(SessionFailure(.deviceLost, "gone"))]
        }
        for input in path { try machine.handle(input) }
        #expect(machine.state.kind == kind)
        return machine
    }

    static func sample(_ kind: SessionInput.Kind) -> SessionInput {
        switch kind {
        case .prepare: .prepare
        case .start: .start
        case .phaseBegan: .phaseBegan(phase: 1, cycle: 0)
        case .pause: .pause
        case .resume: .resume
        case .skip: .skip
        case .stop: .stop
        case .sessionEnded: .sessionEnded
        case .finished: .finished(playedFrames: 100)
        case .underrun: .underrun(lostFrames: 256)
        case .cuePlayed: .cuePlayed(lateFrames: 0)
        case .fail: .fail(SessionFailure(.fatal, "broken"))
        case .deviceLost: .fail(SessionFailure(.deviceLost, "unplugged"))
        case .deviceReturned: .deviceReturned(resume: false)
        }
    }

    @Test func everyInputIsAcceptedExactlyWhereTheTableSays() throws {
        for state in SessionState.Kind.allCases {
            for input in SessionInput.Kind.allCases {
                var machine = try Self.machine(in: state)
                if SessionMachine.accepts(input, in: state) {
                    #expect(throws: Never.self, "\(input) in \(state)") { try machine.handle(Self.sample(input)) }
                } else {
                    #expect(throws: InvalidTransition(from: state, input: input), "\(input) in \(state)") { try machine.handle(Self.sample(input)) }
                    #expect(machine.state.kind == state, "a rejected input changes nothing")
                }
            }
        }
    }

    @Test func aWholeSessionCountsPhasesCyclesAndPauses() throws {
        var machine = Self.machine()
        try machine.handle(.prepare)
        try machine.handle(.start)
        for cycle in 0..<2 {
            for phase in 0..<4 {
                try machine.handle(.phaseBegan(phase: phase, cycle: cycle))
                if phase == 2 && cycle == 0 {
                    let effects = try machine.handle(.pause)
                    #expect(effects.contains(.sendToAudio(.pause)))
                    #expect(machine.state == .paused(resumePhase: 2, cycle: 0))
                    try machine.handle(.resume)
                    #expect(machine.state == .active(phase: 2, cycle: 0))
                }
            }
        }
        try machine.handle(.cuePlayed(lateFrames: 0))
        try machine.handle(.underrun(lostFrames: 480))
        try machine.handle(.sessionEnded)
        let effects = try machine.handle(.finished(playedFrames: 48000 * 40))
        #expect(effects.contains(.persist))
        guard case .completed(let summary) = machine.state else { Issue.record("not completed"); return }
        #expect(summary.phasesCompleted == 8)
        #expect(summary.cyclesCompleted == 2)
        #expect(summary.pauses == 1)
        #expect(summary.xruns == 1 && summary.framesLost == 480)
        #expect(summary.playedSeconds == 40)
        #expect(summary.stoppedEarly == false)
    }

    /// Between a pause press and the audio thread's fade, the engine may still render a phase
    /// boundary, a cue or the session's end; each is counted, and an end lets the tails ring out.
    @Test func whatTheAudioPlayedBeforeThePauseTookHoldStillCounts() throws {
        var machine = try Self.machine(in: .paused)
        try machine.handle(.phaseBegan(phase: 1, cycle: 0))
        try machine.handle(.cuePlayed(lateFrames: 0))
        #expect(machine.state == .paused(resumePhase: 1, cycle: 0), "still paused, resuming in the phase that began")
        #expect(machine.summary.cuesPlayed == 1 && machine.summary.phasesCompleted == 1)
        try machine.handle(.resume)
        #expect(machine.state == .active(phase: 1, cycle: 0))

        var ending = try Self.machine(in: .paused)
        let effects = try ending.handle(.sessionEnded)
        #expect(ending.state == .completing)
        #expect(effects.contains(.sendToAudio(.resume)), "a paused renderer would hold the tails, and the session, open")
        try ending.handle(.finished(playedFrames: 10))
        #expect(ending.state.kind == .completed)
    }

    @Test func stopSendsStopToAudioAndRecordsAnEarlyEnd() throws {
        var machine = try Self.machine(in: .active)
        let effects = try machine.handle(.stop)
        #expect(effects == [.announce(.completing), .sendToAudio(.stop)])
        try machine.handle(.finished(playedFrames: 1))
        guard case .completed(let summary) = machine.state else { Issue.record("not completed"); return }
        #expect(summary.stoppedEarly)
    }

    @Test func aLostDeviceComesBackPausedForAPersonAndPlayingWhenHeadless() throws {
        var interactive = try Self.machine(in: .failed)
        try interactive.handle(.deviceReturned(resume: false))
        #expect(interactive.state == .paused(resumePhase: 0, cycle: 0))
        var headless = try Self.machine(in: .failed)
        let effects = try headless.handle(.deviceReturned(resume: true))
        #expect(headless.state == .active(phase: 0, cycle: 0))
        #expect(effects.contains(.sendToAudio(.resume)))
        #expect(headless.summary.deviceLosses == 1)
    }

    @Test func stoppingWhileTheDeviceIsLostEndsTheSessionAndTheRetries() throws {
        var machine = try Self.machine(in: .failed)
        let effects = try machine.handle(.stop)
        #expect(effects.contains(.sendToAudio(.stop)), "the audio side must stop retrying the device")
        guard case .completed(let summary) = machine.state else { Issue.record("not completed"); return }
        #expect(summary.stoppedEarly)
    }

    @Test func aFatalFailureCannotBeResumedByADeviceReturn() throws {
        var machine = try Self.machine(in: .active)
        try machine.handle(.fail(SessionFailure(.fatal, "sound unreadable")))
        #expect(throws: InvalidTransition.self) { try machine.handle(.deviceReturned(resume: true)) }
    }
}
