import GongCore
import Testing

@Suite struct SessionMachineTests {
    static func machine() -> SessionMachine {
        SessionMachine(
            patternName: "box", sampleRate: 48000, plannedFrames: 48000 * 32, plannedCycles: 2, phasesPerCycle: 4)
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
        case .completing: path = [.prepare, .start, .sessionEnded()]
        case .completed: path = [.prepare, .start, .sessionEnded(), .finished(playedFrames: 10)]
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
        case .sessionEnded: .sessionEnded()
        case .finished: .finished(playedFrames: 100)
        case .underrun: .underrun(lostFrames: 256)
        case .cuePlayed: .cuePlayed(lateFrames: 0)
        case .fail: .fail(SessionFailure(.fatal, "broken"))
        case .deviceLost: .fail(SessionFailure(.deviceLost, "unplugged"))
        case .deviceReturned: .deviceReturned(resume: false)
        case .suspended: .suspended(resume: false)
        }
    }

    /// Every transition the session is meant to make, written out by hand from the design — not
    /// derived from `SessionMachine.table` — for the sample inputs above (an interactive session:
    /// `resume: false`; `failed` reached by a device lost while active). Any pair missing here
    /// must be rejected. A change to the table that nobody meant fails against this list.
    static let expectedTransitions: [SessionState.Kind: [SessionInput.Kind: SessionState.Kind]] = [
        .idle: [.prepare: .preparing, .fail: .failed],
        .preparing: [
            .start: .active, .phaseBegan: .active, .pause: .paused, .stop: .completing, .fail: .failed,
            .deviceLost: .failed, .underrun: .preparing, .cuePlayed: .preparing, .suspended: .paused
        ],
        .active: [
            .phaseBegan: .active, .pause: .paused, .skip: .active, .stop: .completing, .sessionEnded: .completing,
            .underrun: .active, .cuePlayed: .active, .fail: .failed, .deviceLost: .failed, .suspended: .paused
        ],
        .paused: [
            .resume: .active, .skip: .paused, .stop: .completing, .phaseBegan: .paused, .cuePlayed: .paused,
            .sessionEnded: .completing, .underrun: .paused, .fail: .failed, .deviceLost: .failed, .suspended: .paused
        ],
        .completing: [
            .finished: .completed, .sessionEnded: .completing, .phaseBegan: .completing, .cuePlayed: .completing,
            .underrun: .completing, .fail: .failed,
            .deviceLost: .failed, .suspended: .completing
        ],
        .completed: [:],
        .failed: [.deviceReturned: .paused, .stop: .failed, .finished: .completed]
    ]

    @Test func everyStateTakesExactlyTheInputsTheDesignListsAndGoesWhereItSays() throws {
        for state in SessionState.Kind.allCases {
            let expected = try #require(Self.expectedTransitions[state], "the list covers \(state)")
            for input in SessionInput.Kind.allCases {
                var machine = try Self.machine(in: state)
                let before = (machine.state, machine.summary)
                if let next = expected[input] {
                    #expect(throws: Never.self, "\(input) in \(state)") { try machine.handle(Self.sample(input)) }
                    #expect(
                        machine.state.kind == next, "\(input) in \(state) goes to \(next), not \(machine.state.kind)")
                } else {
                    #expect(throws: InvalidTransition(from: state, input: input), "\(input) in \(state)") {
                        try machine.handle(Self.sample(input))
                    }
                    #expect(
                        machine.state == before.0 && machine.summary == before.1,
                        "a rejected \(input) in \(state) changes nothing")
                }
            }
        }
    }

    @Test func anInvalidTransitionSaysWhatWasRefusedWhere() {
        #expect(
            InvalidTransition(from: .completing, input: .pause).description
                == "cannot pause a session that is completing")
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
        try machine.handle(.sessionEnded())
        let effects = try machine.handle(.finished(playedFrames: 48000 * 40))
        #expect(effects.contains(.closeDevice))
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
        let effects = try ending.handle(.sessionEnded())
        #expect(ending.state == .completing)
        #expect(
            effects.contains(.sendToAudio(.resume)), "a paused renderer would hold the tails, and the session, open")
        try ending.handle(.finished(playedFrames: 10))
        #expect(ending.state.kind == .completed)
    }

    @Test func stopSendsStopToAudioAndRecordsAnEarlyEnd() throws {
        var machine = try Self.machine(in: .active)
        let effects = try machine.handle(.stop)
        #expect(effects == [.announce(.completing), .sendToAudio(.stop)])
        // A phase a skip jumped to just before the stop reached the renderer still arrives: it
        // neither reopens the session nor counts as completed.
        #expect(try machine.handle(.phaseBegan(phase: 1, cycle: 0)) == [])
        #expect(machine.state == .completing && machine.summary.phasesCompleted == 0)
        // The renderer then jumps to the end and reports reaching it, as it does every end.
        #expect(try machine.handle(.sessionEnded()) == [])
        #expect(machine.state == .completing && machine.summary.phasesCompleted == 0)
        try machine.handle(.finished(playedFrames: 1))
        guard case .completed(let summary) = machine.state else { Issue.record("not completed"); return }
        #expect(summary.stoppedEarly)
    }

    static let lostDevice = SessionInput.fail(SessionFailure(.deviceLost, "unplugged"))

    /// A machine in `active` at phase 2 of cycle 1, `paused` there, or `completing`.
    static func machine(at kind: SessionState.Kind) throws -> SessionMachine {
        var machine = try Self.machine(in: .active)
        try machine.handle(.phaseBegan(phase: 2, cycle: 1))
        switch kind {
        case .active: break
        case .paused: try machine.handle(.pause)
        case .completing: try machine.handle(.sessionEnded())
        default: Issue.record("faults are tested in active, paused and completing")
        }
        return machine
    }

    // MARK: Faults: a device lost, an underrun, a suspend — in each state they can arrive in

    @Test func aFailureRemembersTheStateItInterrupted() throws {
        for kind in [SessionState.Kind.active, .paused, .completing] {
            var machine = try Self.machine(at: kind)
            let interrupted = machine.state
            let effects = try machine.handle(Self.lostDevice)
            #expect(machine.state == .failed(SessionFailure(.deviceLost, "unplugged"), interrupted: interrupted))
            #expect(effects.contains(.closeDevice) && effects.contains(.reopenDevice))
            #expect(machine.summary.deviceLosses == 1)
        }
    }

    /// The device-loss policy is the machine's: the renderer is paused where the loss broke in
    /// before the device is closed and opened again, and the attempts back off from 100 ms,
    /// doubling, to 5 s, as docs/sessions.md promises.
    @Test func aLostDeviceIsPausedClosedAndReopenedWithTheMachinesBackoff() throws {
        var machine = try Self.machine(at: .active)
        let effects = try machine.handle(Self.lostDevice)
        #expect(
            effects.filter { if case .announce = $0 { false } else { true } } == [
                .sendToAudio(.pause), .closeDevice, .reopenDevice
            ])
        let delays = (1...9).map { SessionMachine.DeviceLoss.retryDelayMilliseconds(beforeAttempt: $0) }
        #expect(delays == [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000])
        #expect(SessionMachine.DeviceLoss.stallSeconds == 2)
    }

    @Test func aDeviceLostWhilePlayingComesBackPausedForAPersonAndPlayingWhenHeadless() throws {
        var interactive = try Self.machine(at: .active)
        try interactive.handle(Self.lostDevice)
        let waiting = try interactive.handle(.deviceReturned(resume: false))
        #expect(interactive.state == .paused(resumePhase: 2, cycle: 1))
        #expect(!waiting.contains(.sendToAudio(.resume)), "the renderer stays paused until the person resumes")

        var headless = try Self.machine(at: .active)
        try headless.handle(Self.lostDevice)
        let effects = try headless.handle(.deviceReturned(resume: true))
        #expect(headless.state == .active(phase: 2, cycle: 1))
        #expect(effects.contains(.sendToAudio(.resume)))
    }

    @Test func aDeviceLostWhilePausedComesBackStillPaused() throws {
        for resume in [false, true] {
            var machine = try Self.machine(at: .paused)
            try machine.handle(Self.lostDevice)
            let effects = try machine.handle(.deviceReturned(resume: resume))
            #expect(machine.state == .paused(resumePhase: 2, cycle: 1), "resume: \(resume)")
            #expect(!effects.contains(.sendToAudio(.resume)), "the person paused it: only they resume it")
            #expect(machine.summary.pauses == 1, "the loss is not a pause of the person's")
        }
    }

    @Test func aDeviceLostDuringTheRingOutResumesTheRingOutAndTheSessionEnds() throws {
        for resume in [false, true] {
            var machine = try Self.machine(at: .completing)
            try machine.handle(Self.lostDevice)
            let effects = try machine.handle(.deviceReturned(resume: resume))
            #expect(machine.state == .completing, "resume: \(resume)")
            #expect(
                effects.contains(.sendToAudio(.resume)), "the renderer was paused by the loss; the tails must ring out")
            try machine.handle(.finished(playedFrames: 48000 * 40))
            guard case .completed(let summary) = machine.state else {
                Issue.record("not completed: \(machine.state)"); continue
            }
            #expect(summary.deviceLosses == 1 && !summary.stoppedEarly && summary.playedFrames == 48000 * 40)
        }
    }

    @Test func anUnderrunIsCountedAndChangesNoState() throws {
        for kind in [SessionState.Kind.active, .paused, .completing] {
            var machine = try Self.machine(at: kind)
            let before = machine.state
            let effects = try machine.handle(.underrun(lostFrames: 480))
            #expect(effects.isEmpty && machine.state == before, "in \(kind)")
            #expect(machine.summary.xruns == 1 && machine.summary.framesLost == 480)
        }
        var ringingOut = try Self.machine(at: .completing)
        try ringingOut.handle(.underrun(lostFrames: 480))
        try ringingOut.handle(.finished(playedFrames: 10))
        #expect(ringingOut.state.kind == .completed, "an underrun in the ring-out still lets the session end")
    }

    @Test func aSuspendPausesAnInteractiveSessionThatWasPlayingAndNothingElse() throws {
        var interactive = try Self.machine(at: .active)
        let effects = try interactive.handle(.suspended(resume: false))
        #expect(interactive.state == .paused(resumePhase: 2, cycle: 1))
        #expect(effects == [.announce(.paused(resumePhase: 2, cycle: 1)), .sendToAudio(.pause)])
        #expect(interactive.summary.suspends == 1 && interactive.summary.pauses == 0)

        var headless = try Self.machine(at: .active)
        let carriedOn = try headless.handle(.suspended(resume: true))
        #expect(carriedOn.isEmpty)
        #expect(headless.state == .active(phase: 2, cycle: 1))

        for resume in [false, true] {
            var paused = try Self.machine(at: .paused)
            let stillPaused = try paused.handle(.suspended(resume: resume))
            #expect(stillPaused.isEmpty)
            #expect(paused.state == .paused(resumePhase: 2, cycle: 1))

            var ringingOut = try Self.machine(at: .completing)
            let ringingOn = try ringingOut.handle(.suspended(resume: resume))
            #expect(ringingOn.isEmpty, "a ring-out is not paused")
            #expect(ringingOut.state == .completing)
            try ringingOut.handle(.finished(playedFrames: 10))
            #expect(ringingOut.state.kind == .completed && ringingOut.summary.suspends == 1)
        }
    }

    @Test func theRendererFinishingWhileTheDeviceIsLostAfterAStopEndsTheSession() throws {
        var machine = try Self.machine(at: .active)
        try machine.handle(Self.lostDevice)
        let effects = try machine.handle(.stop)
        #expect(effects.contains(.sendToAudio(.stop)), "the audio side must stop retrying the device")
        #expect(machine.state == .failed(SessionFailure(.deviceLost, "unplugged"), interrupted: .completing))
        try machine.handle(.finished(playedFrames: 4800))
        guard case .completed(let summary) = machine.state else {
            Issue.record("not completed: \(machine.state)"); return
        }
        #expect(summary.stoppedEarly && summary.playedFrames == 4800 && summary.deviceLosses == 1)
    }

    @Test func aStopWhileTheDeviceIsLostDuringTheRingOutIsNotAnEarlyEnd() throws {
        var machine = try Self.machine(at: .completing)
        try machine.handle(Self.lostDevice)
        try machine.handle(.stop)
        try machine.handle(.finished(playedFrames: 10))
        guard case .completed(let summary) = machine.state else {
            Issue.record("not completed: \(machine.state)"); return
        }
        #expect(!summary.stoppedEarly, "the planned session was over before the stop")
    }

    @Test func aDeviceThatComesBackAfterAStopRingsOutTheEndCue() throws {
        var machine = try Self.machine(at: .active)
        try machine.handle(Self.lostDevice)
        try machine.handle(.stop)
        let effects = try machine.handle(.deviceReturned(resume: false))
        #expect(machine.state == .completing && effects.contains(.sendToAudio(.resume)))
    }

    @Test func aFatalFailureCannotBeResumedByADeviceReturn() throws {
        var machine = try Self.machine(in: .active)
        try machine.handle(.fail(SessionFailure(.fatal, "sound unreadable")))
        #expect(throws: InvalidTransition.self) { try machine.handle(.deviceReturned(resume: true)) }
    }
}
