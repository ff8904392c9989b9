import Foundation
import GongAudio
import GongCore
import GongTestSupport
import Synchronization
import Testing

@testable import GongKit

/// A live session whose device goes away mid-session and comes back: ALSA's `null` device paced
/// in real time, with `-ENODEV` injected, then two failed attempts to reopen it.
@Suite(.onThreadsOfItsOwn) struct LiveSessionDeviceLossTests {
    /// A click every quarter second, 8 phases × 3 cycles, so the loss falls mid-session.
    static let pattern = Pattern(
        name: "ticks", phases: (0..<8).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("click")) },
        length: .cycles(3), endCue: Cue("click"))

    /// Opens the device: first a healthy one that disappears after `lostAfterWrites` writes,
    /// then `failedReopens` failures, then a healthy one again.
    final class Devices: Sendable {
        let opens = Atomic<Int>(0)
        /// Every device opened, in order.
        let opened = Locked<[FaultInjectingPCM]>([])
        let lostAfterWrites: Int
        let failedReopens: Int

        init(lostAfterWrites: Int = 150, failedReopens: Int = 2) {
            self.lostAfterWrites = lostAfterWrites
            self.failedReopens = failedReopens
        }

        func open() throws(AudioDeviceError) -> FaultInjectingPCM {
            let attempt = opens.add(1, ordering: .relaxed).newValue
            guard attempt == 1 || attempt > failedReopens + 1 else {
                throw AudioDeviceError(
                    code: -ENODEV, operation: "snd_pcm_open", device: "null", message: "no such device")
            }
            do {
                let device = try FaultInjectingPCM(
                    writeFaults: attempt == 1 ? [lostAfterWrites: .error(-ENODEV)] : [:], realTime: true)
                opened.withLock { $0.append(device) }
                return device
            } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
    }

    static func start(interactive: Bool, devices: Devices) throws -> (LiveSession, [SessionEvent]) {
        let session = try LiveSession(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: interactive
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        return (session, session.start())
    }

    /// Takes the session's events, asleep on its event bell between them, until `condition`
    /// holds for the events so far, the session is over, or `seconds` pass.
    static func poll(
        _ session: LiveSession, into events: inout [SessionEvent], seconds: Double,
        until condition: ([SessionEvent]) -> Bool = { _ in false }
    ) {
        let deadline = Date().addingTimeInterval(seconds)
        events += session.poll()
        while !session.isOver, !condition(events),
            Waiting.readable(session.eventsReadyDescriptor, seconds: max(0, deadline.timeIntervalSinceNow))
        {
            events += session.poll()
        }
        events += session.poll()
    }

    /// The session's summary, once an event has said it finished.
    static func summary(of session: LiveSession, _ events: [SessionEvent]) -> SessionSummary? {
        events.contains(where: \.isFinished) ? session.summary : nil
    }

    /// Where the device came back, saying the session resumed by itself (or waits).
    static func deviceBack(in events: [SessionEvent], resumed: Bool) -> Int? {
        events.firstIndex { if case .deviceBack(resumed) = $0.kind { true } else { false } }
    }

    static func phasesBegun(_ events: ArraySlice<SessionEvent>) -> Int {
        events.filter { if case .phaseBegan = $0.kind { true } else { false } }.count
    }

    /// A program reading the events acts on why the device went away, not on its words: the
    /// event and its JSON line carry the reason and the errno the device gave.
    @Test func aLostDeviceReachesTheJSONLineWithItsReasonAndErrno() throws {
        let devices = Devices(failedReopens: 0)
        var (session, events) = try Self.start(interactive: false, devices: devices)
        Self.poll(session, into: &events, seconds: 30) { events in
            events.contains { if case .deviceLost = $0.kind { true } else { false } }
        }
        events += try session.send(.stop)
        Self.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        let event = try #require(
            events.first { if case .deviceLost = $0.kind { true } else { false } }, "\(events)")
        guard case .deviceLost(let message, let reason, let errno) = event.kind else { return }
        #expect(reason == .disconnected && errno == ENODEV && message.hasSuffix(String(cString: strerror(ENODEV))))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(event.jsonLine().utf8)) as? [String: Any])
        #expect(object["type"] as? String == "deviceLost")
        #expect(object["reason"] as? String == "disconnected", "\(object)")
        #expect(object["errno"] as? Int == Int(ENODEV), "\(object)")
    }

    @Test func aHeadlessSessionResumesByItselfWhenTheDeviceReturns() throws {
        let devices = Devices()
        var (session, events) = try Self.start(interactive: false, devices: devices)
        Self.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        events += session.poll()

        let lost = try #require(
            events.firstIndex { if case .deviceLost = $0.kind { true } else { false } }, "\(events)")
        let back = try #require(Self.deviceBack(in: events, resumed: true), "it said it resumed by itself: \(events)")
        #expect(lost < back)
        // The session carried on from the frame where it broke off.
        let (lostAt, backAt) = (try #require(events[lost].frame), try #require(events[back].frame))
        #expect(lostAt == backAt && lostAt > 0, "\(lostAt) \(backAt)")
        let nextPhase = events[back...].compactMap { if case .phaseBegan = $0.kind { $0.frame } else { nil } }.first
        #expect(nextPhase.map { $0 >= backAt } == true)
        #expect(devices.opens.load(ordering: .relaxed) == 4, "opened, two failed retries, reopened")
        #expect(Self.phasesBegun(events[back...]) > 0, "the session went on after the device came back")
        let summary = try #require(Self.summary(of: session, events))
        #expect(summary.deviceLosses == 1)
        #expect(summary.cyclesCompleted == 3 && summary.phasesCompleted == 24, "nothing was skipped: \(summary)")
        #expect(!summary.stoppedEarly)
    }

    /// Opening and closing a device may allocate, take locks and wait on a server: never on the
    /// audio thread (miniaudio's first rule for an audio callback). The lost device is closed, the
    /// failed attempts are made and the replacement is opened on the control side.
    @Test func theDeviceIsNeverOpenedOrClosedOnTheAudioThread() throws {
        let devices = Devices()
        var (session, notices) = try Self.start(interactive: false, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        let audioThread = try #require(session.engine as? PlaybackEngine<FaultInjectingPCM>).audioThreadID
        #expect(audioThread > 0, "the audio thread published its id")
        let opened = devices.opened.withLock { $0 }
        #expect(opened.count == 2 && devices.opens.load(ordering: .relaxed) == 4, "\(notices)")
        #expect(
            opened.allSatisfy { $0.openedOnThread > 0 && $0.openedOnThread != audioThread },
            "opened on \(opened.map(\.openedOnThread)), the audio thread is \(audioThread)")
        let closers = opened.map(\.closedOnThreads)
        #expect(closers.allSatisfy { !$0.isEmpty }, "the lost device was closed, and the last once the session ended")
        #expect(closers.allSatisfy { !$0.contains(audioThread) }, "closed on \(closers), audio thread \(audioThread)")
    }

    @Test func anInteractiveSessionWaitsForThePersonWhenTheDeviceReturns() throws {
        let devices = Devices()
        var (session, events) = try Self.start(interactive: true, devices: devices)
        Self.poll(session, into: &events, seconds: 30) { Self.deviceBack(in: $0, resumed: false) != nil }
        let back = try #require(Self.deviceBack(in: events, resumed: false), "\(events)")
        #expect(session.state.kind == .paused, "the device is back, the session waits")

        // A second and a half later it still waits: no phase began, no cue played.
        Self.poll(session, into: &events, seconds: 1.5)
        #expect(session.state.kind == .paused)
        #expect(
            !events[back...].contains {
                if case .phaseBegan = $0.kind { true } else if case .cue = $0.kind { true } else { false }
            })

        // The person resumes; the session plays to its end with nothing skipped.
        events += try session.send(.resume)
        Self.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        events += session.poll()
        #expect(events.contains { if case .resumed = $0.kind { true } else { false } })
        let summary = try #require(Self.summary(of: session, events))
        #expect(
            summary.deviceLosses == 1 && summary.cyclesCompleted == 3 && summary.phasesCompleted == 24, "\(summary)")
    }

    @Test func stoppingWhileTheDeviceIsGoneEndsTheSession() throws {
        let devices = Devices(failedReopens: 1000)
        var (session, events) = try Self.start(interactive: true, devices: devices)
        Self.poll(session, into: &events, seconds: 30) {
            $0.contains { if case .deviceLost = $0.kind { true } else { false } }
        }
        #expect(session.state.kind == .failed)
        events += try session.send(.stop)
        Self.poll(session, into: &events, seconds: 10) { _ in session.isOver }
        #expect(session.isOver)
        let summary = try #require(Self.summary(of: session, events))
        #expect(summary.stoppedEarly && summary.deviceLosses == 1)
    }
}

/// Each fault — a lost device, an underrun, a suspend — injected into a live session on ALSA's
/// `null` device (paced in real time) while it plays, while it is paused and while its end cue
/// rings out, and what the session does next: carry on, stay paused, or ring out and complete.
@Suite(.onThreadsOfItsOwn) struct LiveSessionFaultTests {
    /// A click every quarter second for one second, then a 4.5 s chime rings out: long enough to
    /// inject a fault into the ring-out and still hear it end.
    static let pattern = Pattern(
        name: "ring-out", phases: (0..<4).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("click")) },
        length: .cycles(1), endCue: Cue("chime"))

    enum Fault: CaseIterable, CustomStringConvertible {
        case deviceLost, underrun, suspend
        var injected: FaultInjectingPCM.Fault {
            switch self {
            case .deviceLost: .error(-ENODEV)
            case .underrun: .error(-EPIPE)
            case .suspend: .error(-ESTRPIPE)
            }
        }
        var description: String { "\(injected)" }
    }

    /// Opens a healthy device each time (a lost one is back at the first retry), and keeps the
    /// latest so that a test can inject a fault into it.
    final class Devices: Sendable {
        let opens = Atomic<Int>(0)
        let latest = Locked<FaultInjectingPCM?>(nil)

        func open() throws(AudioDeviceError) -> FaultInjectingPCM {
            opens.add(1, ordering: .relaxed)
            do {
                let device = try FaultInjectingPCM(realTime: true)
                latest.withLock { $0 = device }
                return device
            } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }

        /// Injects `fault` into the open device's next write and waits until it has fired.
        func inject(_ fault: FaultInjectingPCM.Fault) throws {
            let device = try #require(latest.withLock { $0 })
            device.injectOnNextWrite(fault)
            #expect(
                Waiting.until(seconds: 10) { device.requestedFaultFired },
                "the device took a write after the fault was asked for")
        }
    }

    /// A session driven into `state` (`active`, `paused` or `completing`) with the fault injected
    /// there; returns the events up to the moment the session has dealt with it.
    static func session(in state: SessionState.Kind, fault: Fault, interactive: Bool, devices: Devices) throws
        -> (LiveSession, [SessionEvent])
    {
        let session = try LiveSession(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: interactive
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var events = session.start()
        typealias Poll = LiveSessionDeviceLossTests
        switch state {
        case .active:
            // Into the second phase: well inside the session.
            Poll.poll(session, into: &events, seconds: 10) {
                $0.contains { if case .phaseBegan(phase: "p1", _, _, _) = $0.kind { true } else { false } }
            }
        case .paused:
            Poll.poll(session, into: &events, seconds: 10) {
                $0.contains { if case .phaseBegan(phase: "p1", _, _, _) = $0.kind { true } else { false } }
            }
            events += try session.send(.pause)
            Poll.poll(session, into: &events, seconds: 10) { $0.contains { $0.kind == .paused } }
        case .completing:
            Poll.poll(session, into: &events, seconds: 10) { _ in session.state == .completing }
        default:
            Issue.record("faults are injected while active, paused or completing")
        }
        #expect(session.state.kind == state, "\(events)")
        let before = events.count
        try devices.inject(fault.injected)
        switch fault {
        case .deviceLost:
            Poll.poll(session, into: &events, seconds: 10) {
                $0[before...].contains { if case .deviceBack = $0.kind { true } else { false } }
            }
        case .suspend:
            Poll.poll(session, into: &events, seconds: 10) {
                $0[before...].contains { if case .suspendRecovered = $0.kind { true } else { false } }
            }
        case .underrun where state == .paused:
            // Silence lost says nothing: give the audio thread's report time to arrive, had it
            // anything to say (it writes every 5 ms).
            Poll.poll(session, into: &events, seconds: 0.5)
        case .underrun:
            Poll.poll(session, into: &events, seconds: 10) {
                $0[before...].contains { if case .xrun = $0.kind { true } else { false } }
            }
        }
        return (session, events)
    }

    /// Plays the session to its end (resuming it if it waits) and returns its summary.
    static func finish(_ session: LiveSession, _ events: inout [SessionEvent]) throws
        -> SessionSummary
    {
        if session.state.kind == .paused { events += try session.send(.resume) }
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        events += session.poll()
        #expect(!events.contains { if case .internalError = $0.kind { true } else { false } }, "\(events)")
        return try #require(
            LiveSessionDeviceLossTests.summary(of: session, events), "the session completed: \(events)")
    }

    static func count(_ events: [SessionEvent], _ matches: (SessionEvent) -> Bool) -> Int {
        events.filter(matches).count
    }

    /// Every phase and the end cue were heard: nothing was skipped, and the ring-out ran.
    static func expectWhole(_ summary: SessionSummary, _ context: String) {
        #expect(
            summary.phasesCompleted == 4 && summary.cyclesCompleted == 1 && !summary.stoppedEarly,
            "\(context): \(summary)")
        #expect(summary.cuesPlayed == 5, "four clicks and the chime: \(context): \(summary)")
        #expect(
            summary.playedFrames > summary.plannedFrames,
            "the chime rang out past the planned end: \(context): \(summary)")
    }

    // MARK: A lost device

    @Test func aDeviceLostWhilePlayingComesBackPausedAndThePersonResumesIt() throws {
        let devices = Devices()
        var (session, events) = try Self.session(in: .active, fault: .deviceLost, interactive: true, devices: devices)
        #expect(
            events.contains { if case .deviceBack(resumed: false) = $0.kind { true } else { false } }, "\(events)")
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "lost while playing")
        #expect(summary.deviceLosses == 1 && devices.opens.load(ordering: .relaxed) == 2)
    }

    @Test(arguments: [false, true])
    func aDeviceLostWhilePausedComesBackStillPaused(interactive: Bool) throws {
        let devices = Devices()
        var (session, events) = try Self.session(
            in: .paused, fault: .deviceLost, interactive: interactive, devices: devices)
        #expect(
            events.contains { if case .deviceBack(resumed: false) = $0.kind { true } else { false } }, "\(events)")
        #expect(session.state.kind == .paused, "paused by the person, it stays paused (interactive: \(interactive))")
        // Half a second later it still waits: no phase began, no cue played.
        let waited = events.count
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 0.5)
        #expect(session.state.kind == .paused)
        #expect(
            !events[waited...].contains {
                if case .phaseBegan = $0.kind { true } else if case .cue = $0.kind { true } else { false }
            })
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "lost while paused")
        #expect(summary.deviceLosses == 1 && summary.pauses == 1)
    }

    @Test(arguments: [false, true])
    func aDeviceLostDuringTheRingOutComesBackRingingOutAndTheSessionCompletes(interactive: Bool) throws {
        let devices = Devices()
        var (session, events) = try Self.session(
            in: .completing, fault: .deviceLost, interactive: interactive, devices: devices)
        #expect(
            events.contains { if case .deviceBack(resumed: true) = $0.kind { true } else { false } },
            "nothing is left but the tail: it rings out without a key (interactive: \(interactive)): \(events)")
        #expect(session.state == .completing)
        // No resume is sent: the session ends by itself.
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        #expect(session.isOver, "the ring-out ended the session: \(events)")
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "lost during the ring-out")
        #expect(summary.deviceLosses == 1)
    }

    // MARK: An underrun

    @Test func anUnderrunWhilePlayingIsCountedAndTheSessionCarriesOn() throws {
        var (session, events) = try Self.session(in: .active, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state.kind == .active)
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "underrun while playing")
        let reported = Self.count(events) { if case .xrun = $0.kind { true } else { false } }
        #expect(summary.xruns == 1 && reported == 1, "\(events)")
    }

    @Test func anUnderrunWhilePausedLosesNothingAndTheSessionStaysPaused() throws {
        var (session, events) = try Self.session(in: .paused, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "underrun while paused")
        #expect(summary.xruns == 0 && summary.framesLost == 0, "silence lost is not audio lost: \(summary)")
        #expect(Self.count(events) { if case .xrun = $0.kind { true } else { false } } == 0)
    }

    @Test func anUnderrunDuringTheRingOutIsCountedAndTheSessionCompletes() throws {
        var (session, events) = try Self.session(
            in: .completing, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state == .completing)
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "underrun during the ring-out")
        #expect(
            summary.xruns == 1 && Self.count(events) { if case .xrun = $0.kind { true } else { false } } == 1,
            "\(events)")
    }

    // MARK: A suspend

    @Test func aSuspendWhilePlayingPausesAnInteractiveSessionAndNotAHeadlessOne() throws {
        var (interactive, events) = try Self.session(
            in: .active, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            events.contains { if case .suspendRecovered(paused: true) = $0.kind { true } else { false } }, "\(events)"
        )
        #expect(interactive.state.kind == .paused)
        let summary = try Self.finish(interactive, &events)
        Self.expectWhole(summary, "suspended while playing")
        #expect(summary.suspends == 1 && summary.pauses == 0)

        var (headless, heard) = try Self.session(in: .active, fault: .suspend, interactive: false, devices: Devices())
        #expect(
            heard.contains { if case .suspendRecovered(paused: false) = $0.kind { true } else { false } }, "\(heard)")
        #expect(headless.state.kind == .active)
        #expect(try Self.finish(headless, &heard).suspends == 1)
    }

    @Test func aSuspendWhilePausedStaysPaused() throws {
        var (session, events) = try Self.session(in: .paused, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            events.contains { if case .suspendRecovered(paused: false) = $0.kind { true } else { false } },
            "\(events)")
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "suspended while paused")
        #expect(summary.suspends == 1 && summary.pauses == 1)
    }

    @Test func aSuspendDuringTheRingOutStillCompletes() throws {
        var (session, events) = try Self.session(
            in: .completing, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            events.contains { if case .suspendRecovered(paused: false) = $0.kind { true } else { false } },
            "\(events)")
        #expect(session.state == .completing)
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 30) { _ in session.isOver }
        #expect(session.isOver, "no key was needed: \(events)")
        let summary = try Self.finish(session, &events)
        Self.expectWhole(summary, "suspended during the ring-out")
        #expect(summary.suspends == 1)
    }

    // MARK: A stop

    /// A stop jumps to the end cue: the renderer then reports the session's end as it reaches it,
    /// which the ring-out the stop began takes in its stride (it once came out as an internal error).
    @Test func aStopWhilePlayingRingsOutTheEndCueAndNothingIsAmiss() throws {
        // Phases of a second, so that a stop sent in the second lands well before the end.
        let pattern = Pattern(
            name: "stopped", phases: (0..<4).map { Phase("p\($0)", length: .one, cue: Cue("click")) },
            length: .cycles(1), endCue: Cue("chime"))
        let devices = Devices()
        let session = try LiveSession(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: true
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var events = session.start()
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 10) {
            $0.contains { if case .phaseBegan(phase: "p1", _, _, _) = $0.kind { true } else { false } }
        }
        events += try session.send(.stop)
        let summary = try Self.finish(session, &events)
        // On a busy machine the stop may land a phase or two later; never at the end.
        #expect(summary.stoppedEarly && (1..<4).contains(summary.phasesCompleted), "\(summary)")
        #expect(
            summary.cuesPlayed == summary.phasesCompleted + 2, "a click for each phase begun, and the chime: \(summary)"
        )
        #expect(summary.playedFrames > 0)
    }

    // MARK: Commands that do not apply

    /// Events the audio side had no room for are told, with their count, as a line of their
    /// own: the reader learns that what it was told is incomplete.
    @Test func eventsTheAudioSideLostAreToldWithTheirCount() throws {
        // Pulled by nobody: the test is the audio side, the event ring's one producer.
        let session = try LiveSession.pulling(
            pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: false, rate: 48000, channels: 2
        ).session
        _ = session.start()
        #expect(session.engine.events.tryPush(.eventsDropped(count: 7)))
        let events = session.poll()
        #expect(events == [SessionEvent(.eventsLost(count: 7))], "\(events)")
        let line = try #require(events.first).jsonLine()
        #expect(line.contains(#""type":"eventsLost""#) && line.contains(#""count":7"#), "\(line)")
        session.abandon()
    }

    @Test func aCommandTheSessionDoesNotTakeIsReportedNotDropped() throws {
        let devices = Devices()
        let session = try LiveSession(
            pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: true
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var events = session.start()
        #expect(try session.send(.resume) == [SessionEvent(.ignored(command: .resume, state: .active))])
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 10) { _ in session.state == .completing }
        #expect(
            try session.togglePause() == [SessionEvent(.ignored(command: .pause, state: .completing))],
            "the ring-out is not paused")
        #expect(
            try session.send(.stop) == [SessionEvent(.ignored(command: .stop, state: .completing))],
            "and not a stop either: no `stopping`")
        #expect(session.state == .completing)
        let summary = try Self.finish(session, &events)
        #expect(!summary.stoppedEarly && summary.pauses == 0)
    }
}

/// A session resumed part way through (`gong resume`) shows every phase with its whole length:
/// the phase it cut into as well as every one after it, as the whole session has them.
@Suite struct LiveSessionResumeTests {
    /// 4-7-8 breathing, scaled down so it renders in moments on a device that is not paced.
    static let pattern = Pattern(
        name: "4-7-8",
        phases: [
            Phase("in", length: Rational(4, 10)!), Phase("hold", length: Rational(7, 10)!),
            Phase("out", length: Rational(8, 10)!)
        ],
        length: .cycles(3))

    static func phaseLengths(startSeconds: Double) throws -> [Double] {
        let session = try LiveSession(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: false, startSeconds: startSeconds
        ) { () throws(AudioDeviceError) -> FaultInjectingPCM in
            do { return try FaultInjectingPCM(writeFaults: [:], realTime: false) } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
        var events = session.start()
        LiveSessionDeviceLossTests.poll(session, into: &events, seconds: 30)
        return events.compactMap { if case .phaseBegan(_, _, _, let length) = $0.kind { length } else { nil } }
    }

    @Test(arguments: [0.2, 0.4, 0.9, 1.8, 2.6, 5.0])
    func everyPhaseKeepsItsWholeLengthAfterAResume(startSeconds: Double) throws {
        let whole = try Self.phaseLengths(startSeconds: 0)
        #expect(whole.count == 9)
        let resumed = try Self.phaseLengths(startSeconds: startSeconds)
        // The phase the resume cut into is told first, with its whole length; then the rest.
        #expect(!resumed.isEmpty && resumed == Array(whole.suffix(resumed.count)), "\(resumed) of \(whole)")
    }
}
