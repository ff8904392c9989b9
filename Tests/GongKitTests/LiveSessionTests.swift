import Foundation
import GongAudio
import GongCore
import GongTestSupport
import Synchronization
import Testing

@testable import GongKit

/// A live session whose device goes away mid-session and comes back: ALSA's `null` device paced
/// in real time, with `-ENODEV` injected, then two failed attempts to reopen it.
@Suite(.serialized) struct LiveSessionDeviceLossTests {
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

    static func start(interactive: Bool, devices: Devices) throws -> (DeviceSession<FaultInjectingPCM>, [LiveNotice]) {
        let session = try DeviceSession<FaultInjectingPCM>(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: interactive
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        return (session, session.start())
    }

    /// Polls until `condition` holds for the notices so far, or the session is over.
    static func poll(
        _ session: DeviceSession<FaultInjectingPCM>, into notices: inout [LiveNotice], seconds: Double,
        until condition: ([LiveNotice]) -> Bool = { _ in false }
    ) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !session.isOver, !condition(notices) {
            notices += session.poll()
            usleep(5000)
        }
        notices += session.poll()
    }

    static func summary(_ notices: [LiveNotice]) -> SessionSummary? {
        notices.compactMap { if case .finished(let summary, _) = $0 { summary } else { nil } }.first
    }

    /// Where the device came back, saying the session resumed by itself (or waits).
    static func deviceBack(in notices: [LiveNotice], resumed: Bool) -> Int? {
        notices.firstIndex { if case .deviceBack(resumed, _) = $0 { true } else { false } }
    }

    static func phasesBegun(_ notices: ArraySlice<LiveNotice>) -> Int {
        notices.filter { if case .phaseBegan = $0 { true } else { false } }.count
    }

    /// A program reading the events acts on why the device went away, not on its words: the
    /// notice and its JSON line carry the reason and the errno the device gave.
    @Test func aLostDeviceReachesTheJSONLineWithItsReasonAndErrno() throws {
        let devices = Devices(failedReopens: 0)
        var (session, notices) = try Self.start(interactive: false, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) { notices in
            notices.contains { if case .deviceLost = $0 { true } else { false } }
        }
        notices += session.send(.stop)
        Self.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        let lost = try #require(
            notices.first { if case .deviceLost = $0 { true } else { false } }, "\(notices)")
        guard case .deviceLost(let message, let reason, let errno, _) = lost else { return }
        #expect(reason == .disconnected && errno == ENODEV && message.hasSuffix(String(cString: strerror(ENODEV))))
        let event = try #require(SessionEvent(lost, pattern: "ticks"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(event.jsonLine().utf8)) as? [String: Any])
        #expect(object["type"] as? String == "deviceLost")
        #expect(object["reason"] as? String == "disconnected", "\(object)")
        #expect(object["errno"] as? Int == Int(ENODEV), "\(object)")
    }

    @Test func aHeadlessSessionResumesByItselfWhenTheDeviceReturns() throws {
        let devices = Devices()
        var (session, notices) = try Self.start(interactive: false, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        notices += session.poll()

        let lost = try #require(notices.firstIndex { if case .deviceLost = $0 { true } else { false } }, "\(notices)")
        let back = try #require(Self.deviceBack(in: notices, resumed: true), "it said it resumed by itself: \(notices)")
        #expect(lost < back)
        // The session carried on from the frame where it broke off.
        guard case .deviceLost(_, _, _, let lostAt) = notices[lost], case .deviceBack(_, let backAt) = notices[back]
        else {
            return
        }
        #expect(lostAt.sessionFrame == backAt.sessionFrame && lostAt.sessionFrame > 0, "\(lostAt) \(backAt)")
        let nextPhase = notices[back...].compactMap {
            if case .phaseBegan(_, _, _, _, let at) = $0 { at.sessionFrame } else { nil }
        }.first
        #expect(nextPhase.map { $0 >= backAt.sessionFrame } == true)
        #expect(devices.opens.load(ordering: .relaxed) == 4, "opened, two failed retries, reopened")
        #expect(Self.phasesBegun(notices[back...]) > 0, "the session went on after the device came back")
        let summary = try #require(Self.summary(notices))
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
        let audioThread = session.engine.audioThreadID
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
        var (session, notices) = try Self.start(interactive: true, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) { Self.deviceBack(in: $0, resumed: false) != nil }
        let back = try #require(Self.deviceBack(in: notices, resumed: false), "\(notices)")
        #expect(session.state.kind == .paused, "the device is back, the session waits")

        // A second and a half later it still waits: no phase began, no cue played.
        Self.poll(session, into: &notices, seconds: 1.5)
        #expect(session.state.kind == .paused)
        #expect(
            !notices[back...].contains {
                if case .phaseBegan = $0 { true } else if case .cue = $0 { true } else { false }
            })

        // The person resumes; the session plays to its end with nothing skipped.
        notices += session.send(.resume)
        Self.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        notices += session.poll()
        #expect(notices.contains { if case .resumed = $0 { true } else { false } })
        let summary = try #require(Self.summary(notices))
        #expect(
            summary.deviceLosses == 1 && summary.cyclesCompleted == 3 && summary.phasesCompleted == 24, "\(summary)")
    }

    @Test func stoppingWhileTheDeviceIsGoneEndsTheSession() throws {
        let devices = Devices(failedReopens: 1000)
        var (session, notices) = try Self.start(interactive: true, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) {
            $0.contains { if case .deviceLost = $0 { true } else { false } }
        }
        #expect(session.state.kind == .failed)
        notices += session.send(.stop)
        Self.poll(session, into: &notices, seconds: 10) { _ in session.isOver }
        #expect(session.isOver)
        let summary = try #require(Self.summary(notices))
        #expect(summary.stoppedEarly && summary.deviceLosses == 1)
    }
}

/// Each fault — a lost device, an underrun, a suspend — injected into a live session on ALSA's
/// `null` device (paced in real time) while it plays, while it is paused and while its end cue
/// rings out, and what the session does next: carry on, stay paused, or ring out and complete.
@Suite(.serialized) struct LiveSessionFaultTests {
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
            let deadline = Date().addingTimeInterval(10)
            while !device.requestedFaultFired, Date() < deadline { usleep(2000) }
            #expect(device.requestedFaultFired, "the device took a write after the fault was asked for")
        }
    }

    /// A session driven into `state` (`active`, `paused` or `completing`) with the fault injected
    /// there; returns the notices up to the moment the session has dealt with it.
    static func session(in state: SessionState.Kind, fault: Fault, interactive: Bool, devices: Devices) throws
        -> (DeviceSession<FaultInjectingPCM>, [LiveNotice])
    {
        let session = try DeviceSession<FaultInjectingPCM>(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: interactive
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var notices = session.start()
        typealias Poll = LiveSessionDeviceLossTests
        switch state {
        case .active:
            // Into the second phase: well inside the session.
            Poll.poll(session, into: &notices, seconds: 10) {
                $0.contains { if case .phaseBegan(name: "p1", _, _, _, _) = $0 { true } else { false } }
            }
        case .paused:
            Poll.poll(session, into: &notices, seconds: 10) {
                $0.contains { if case .phaseBegan(name: "p1", _, _, _, _) = $0 { true } else { false } }
            }
            notices += session.send(.pause)
            Poll.poll(session, into: &notices, seconds: 10) { $0.contains(where: \.isPaused) }
        case .completing:
            Poll.poll(session, into: &notices, seconds: 10) { _ in session.state == .completing }
        default:
            Issue.record("faults are injected while active, paused or completing")
        }
        #expect(session.state.kind == state, "\(notices)")
        let before = notices.count
        try devices.inject(fault.injected)
        switch fault {
        case .deviceLost:
            Poll.poll(session, into: &notices, seconds: 10) {
                $0[before...].contains { if case .deviceBack = $0 { true } else { false } }
            }
        case .suspend:
            Poll.poll(session, into: &notices, seconds: 10) {
                $0[before...].contains { if case .suspendRecovered = $0 { true } else { false } }
            }
        case .underrun where state == .paused:
            // Silence lost says nothing: give the audio thread's report time to arrive, had it
            // anything to say (it writes every 5 ms).
            Poll.poll(session, into: &notices, seconds: 0.5)
        case .underrun:
            Poll.poll(session, into: &notices, seconds: 10) {
                $0[before...].contains { if case .underrun = $0 { true } else { false } }
            }
        }
        return (session, notices)
    }

    /// Plays the session to its end (resuming it if it waits) and returns its summary.
    static func finish(_ session: DeviceSession<FaultInjectingPCM>, _ notices: inout [LiveNotice]) throws
        -> SessionSummary
    {
        if session.state.kind == .paused { notices += session.send(.resume) }
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        notices += session.poll()
        #expect(!notices.contains { if case .internalError = $0 { true } else { false } }, "\(notices)")
        return try #require(LiveSessionDeviceLossTests.summary(notices), "the session completed: \(notices)")
    }

    static func count(_ notices: [LiveNotice], _ matches: (LiveNotice) -> Bool) -> Int { notices.filter(matches).count }

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
        var (session, notices) = try Self.session(in: .active, fault: .deviceLost, interactive: true, devices: devices)
        #expect(notices.contains { if case .deviceBack(resumed: false, _) = $0 { true } else { false } }, "\(notices)")
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "lost while playing")
        #expect(summary.deviceLosses == 1 && devices.opens.load(ordering: .relaxed) == 2)
    }

    @Test(arguments: [false, true])
    func aDeviceLostWhilePausedComesBackStillPaused(interactive: Bool) throws {
        let devices = Devices()
        var (session, notices) = try Self.session(
            in: .paused, fault: .deviceLost, interactive: interactive, devices: devices)
        #expect(notices.contains { if case .deviceBack(resumed: false, _) = $0 { true } else { false } }, "\(notices)")
        #expect(session.state.kind == .paused, "paused by the person, it stays paused (interactive: \(interactive))")
        // Half a second later it still waits: no phase began, no cue played.
        let waited = notices.count
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 0.5)
        #expect(session.state.kind == .paused)
        #expect(
            !notices[waited...].contains {
                if case .phaseBegan = $0 { true } else if case .cue = $0 { true } else { false }
            })
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "lost while paused")
        #expect(summary.deviceLosses == 1 && summary.pauses == 1)
    }

    @Test(arguments: [false, true])
    func aDeviceLostDuringTheRingOutComesBackRingingOutAndTheSessionCompletes(interactive: Bool) throws {
        let devices = Devices()
        var (session, notices) = try Self.session(
            in: .completing, fault: .deviceLost, interactive: interactive, devices: devices)
        #expect(
            notices.contains { if case .deviceBack(resumed: true, _) = $0 { true } else { false } },
            "nothing is left but the tail: it rings out without a key (interactive: \(interactive)): \(notices)")
        #expect(session.state == .completing)
        // No resume is sent: the session ends by itself.
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        #expect(session.isOver, "the ring-out ended the session: \(notices)")
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "lost during the ring-out")
        #expect(summary.deviceLosses == 1)
    }

    // MARK: An underrun

    @Test func anUnderrunWhilePlayingIsCountedAndTheSessionCarriesOn() throws {
        var (session, notices) = try Self.session(in: .active, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state.kind == .active)
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "underrun while playing")
        let reported = Self.count(notices) { if case .underrun = $0 { true } else { false } }
        #expect(summary.xruns == 1 && reported == 1, "\(notices)")
    }

    @Test func anUnderrunWhilePausedLosesNothingAndTheSessionStaysPaused() throws {
        var (session, notices) = try Self.session(in: .paused, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "underrun while paused")
        #expect(summary.xruns == 0 && summary.framesLost == 0, "silence lost is not audio lost: \(summary)")
        #expect(Self.count(notices) { if case .underrun = $0 { true } else { false } } == 0)
    }

    @Test func anUnderrunDuringTheRingOutIsCountedAndTheSessionCompletes() throws {
        var (session, notices) = try Self.session(
            in: .completing, fault: .underrun, interactive: true, devices: Devices())
        #expect(session.state == .completing)
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "underrun during the ring-out")
        #expect(
            summary.xruns == 1 && Self.count(notices) { if case .underrun = $0 { true } else { false } } == 1,
            "\(notices)")
    }

    // MARK: A suspend

    @Test func aSuspendWhilePlayingPausesAnInteractiveSessionAndNotAHeadlessOne() throws {
        var (interactive, notices) = try Self.session(
            in: .active, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            notices.contains { if case .suspendRecovered(paused: true, _) = $0 { true } else { false } }, "\(notices)")
        #expect(interactive.state.kind == .paused)
        let summary = try Self.finish(interactive, &notices)
        Self.expectWhole(summary, "suspended while playing")
        #expect(summary.suspends == 1 && summary.pauses == 0)

        var (headless, heard) = try Self.session(in: .active, fault: .suspend, interactive: false, devices: Devices())
        #expect(heard.contains { if case .suspendRecovered(paused: false, _) = $0 { true } else { false } }, "\(heard)")
        #expect(headless.state.kind == .active)
        #expect(try Self.finish(headless, &heard).suspends == 1)
    }

    @Test func aSuspendWhilePausedStaysPaused() throws {
        var (session, notices) = try Self.session(in: .paused, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            notices.contains { if case .suspendRecovered(paused: false, _) = $0 { true } else { false } }, "\(notices)")
        #expect(session.state.kind == .paused)
        let summary = try Self.finish(session, &notices)
        Self.expectWhole(summary, "suspended while paused")
        #expect(summary.suspends == 1 && summary.pauses == 1)
    }

    @Test func aSuspendDuringTheRingOutStillCompletes() throws {
        var (session, notices) = try Self.session(
            in: .completing, fault: .suspend, interactive: true, devices: Devices())
        #expect(
            notices.contains { if case .suspendRecovered(paused: false, _) = $0 { true } else { false } }, "\(notices)")
        #expect(session.state == .completing)
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        #expect(session.isOver, "no key was needed: \(notices)")
        let summary = try Self.finish(session, &notices)
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
        let session = try DeviceSession<FaultInjectingPCM>(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: true
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var notices = session.start()
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 10) {
            $0.contains { if case .phaseBegan(name: "p1", _, _, _, _) = $0 { true } else { false } }
        }
        notices += session.send(.stop)
        let summary = try Self.finish(session, &notices)
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
        let session = try LiveSession<PullEngine>(
            pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: false, pullingAt: 48000,
            channels: 2)
        _ = session.start()
        #expect(session.engine.events.tryPush(.eventsDropped(count: 7)))
        let notices = session.poll()
        #expect(notices == [.eventsLost(count: 7)], "\(notices)")
        let line = try #require(notices.first.flatMap { SessionEvent($0, pattern: "p") }).jsonLine()
        #expect(line.contains(#""type":"eventsLost""#) && line.contains(#""count":7"#), "\(line)")
        session.abandon()
    }

    @Test func aCommandTheSessionDoesNotTakeIsReportedNotDropped() throws {
        let devices = Devices()
        let session = try DeviceSession<FaultInjectingPCM>(
            pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: true
        ) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        var notices = session.start()
        #expect(session.send(.resume) == [.ignored(InvalidTransition(from: .active, input: .resume))])
        LiveSessionDeviceLossTests.poll(session, into: &notices, seconds: 10) { _ in session.state == .completing }
        #expect(
            session.togglePause() == [.ignored(InvalidTransition(from: .completing, input: .pause))],
            "the ring-out is not paused")
        #expect(
            session.send(.stop) == [.ignored(InvalidTransition(from: .completing, input: .stop))],
            "and not a stop either: no `stopping`")
        #expect(session.state == .completing)
        let summary = try Self.finish(session, &notices)
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
        let session = try DeviceSession<FaultInjectingPCM>(
            pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: false, startSeconds: startSeconds
        ) { () throws(AudioDeviceError) -> FaultInjectingPCM in
            do { return try FaultInjectingPCM(writeFaults: [:], realTime: false) } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
        var notices = session.start()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !session.isOver {
            notices += session.poll()
            usleep(2000)
        }
        notices += session.poll()
        return notices.compactMap { if case .phaseBegan(_, _, _, let length, _) = $0 { length } else { nil } }
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
