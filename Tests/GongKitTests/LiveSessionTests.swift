import Foundation
import GongAudio
import GongCore
@testable import GongKit
import GongTestSupport
import Synchronization
import Testing

/// A live session whose device goes away mid-session and comes back: ALSA's `null` device paced
/// in real time, with `-ENODEV` injected, then two failed attempts to reopen it.
@Suite(.serialized) struct LiveSessionDeviceLossTests {
    /// A click every quarter second, 8 phases × 3 cycles, so the loss falls mid-session.
    static let pattern = Pattern(name: "ticks", phases: (0..<8).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("click")) },
                                 length: .cycles(3), endCue: Cue("click"))

    /// Opens the device: first a healthy one that disappears after `lostAfterWrites` writes,
    /// then `failedReopens` failures, then a healthy one again.
    final class Devices: Sendable {
        let opens = Atomic<Int>(0)
        let lostAfterWrites: Int
        let failedReopens: Int

        init(lostAfterWrites: Int = 150, failedReopens: Int = 2) {
            self.lostAfterWrites = lostAfterWrites
            self.failedReopens = failedReopens
        }

        func open() throws(AudioDeviceError) -> FaultInjectingPCM {
            let attempt = opens.add(1, ordering: .relaxed).newValue
            guard attempt == 1 || attempt > failedReopens + 1 else {
                throw AudioDeviceError(code: -ENODEV, operation: "snd_pcm_open", device: "null", message: "no such device")
            }
            do {
                return try FaultInjectingPCM(writeFaults: attempt == 1 ? [lostAfterWrites: .error(-ENODEV)] : [:], realTime: true)
            } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
    }

    static func start(interactive: Bool, devices: Devices) throws -> (LiveSession<FaultInjectingPCM>, [LiveNotice]) {
        let session = try LiveSession<FaultInjectingPCM>(pattern: pattern, bank: shippedBank, masterGainDB: 0, interactive: interactive) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in try devices.open()
        }
        return (session, session.start())
    }

    /// Polls until `condition` holds for the notices so far, or the session is over.
    static func poll(_ session: LiveSession<FaultInjectingPCM>, into notices: inout [LiveNotice], seconds: Double,
                     until condition: ([LiveNotice]) -> Bool = { _ in false }) {
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
        guard case .deviceLost(_, let lostAt) = notices[lost], case .deviceBack(_, let backAt) = notices[back] else { return }
        #expect(lostAt.sessionFrame == backAt.sessionFrame && lostAt.sessionFrame > 0, "\(lostAt) \(backAt)")
        let nextPhase = notices[back...].compactMap { if case .phaseBegan(_, _, _, _, let at) = $0 { at.sessionFrame } else { nil } }.first
        #expect(nextPhase.map { $0 >= backAt.sessionFrame } == true)
        #expect(devices.opens.load(ordering: .relaxed) == 4, "opened, two failed retries, reopened")
        #expect(Self.phasesBegun(notices[back...]) > 0, "the session went on after the device came back")
        let summary = try #require(Self.summary(notices))
        #expect(summary.deviceLosses == 1)
        #expect(summary.cyclesCompleted == 3 && summary.phasesCompleted == 24, "nothing was skipped: \(summary)")
        #expect(!summary.stoppedEarly)
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
        #expect(!notices[back...].contains { if case .phaseBegan = $0 { true } else if case .cue = $0 { true } else { false } })

        // The person resumes; the session plays to its end with nothing skipped.
        notices += session.send(.resume)
        Self.poll(session, into: &notices, seconds: 30) { _ in session.isOver }
        session.waitUntilDone()
        notices += session.poll()
        #expect(notices.contains { if case .resumed = $0 { true } else { false } })
        let summary = try #require(Self.summary(notices))
        #expect(summary.deviceLosses == 1 && summary.cyclesCompleted == 3 && summary.phasesCompleted == 24, "\(summary)")
    }

    @Test func stoppingWhileTheDeviceIsGoneEndsTheSession() throws {
        let devices = Devices(failedReopens: 1000)
        var (session, notices) = try Self.start(interactive: true, devices: devices)
        Self.poll(session, into: &notices, seconds: 30) { $0.contains { if case .deviceLost = $0 { true } else { false } } }
        #expect(session.state.kind == .failed)
        notices += session.send(.stop)
        Self.poll(session, into: &notices, seconds: 10) { _ in session.isOver }
        #expect(session.isOver)
        let summary = try #require(Self.summary(notices))
        #expect(summary.stoppedEarly && summary.deviceLosses == 1)
    }
}
