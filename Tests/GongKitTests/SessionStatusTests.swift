import Foundation
import GongAudio
import GongCore
import Testing

@testable import GongKit
@testable import GongPractice

/// Where a session's status says it stands. Pulled, where the frames its host pulled end: the
/// host's frames are the session's clock, however fast it pulls, whatever its block size, whether
/// or not it says when they are heard, and without waiting for the session's reports to be taken
/// in. On a device, what is heard; phase, cycle and elapsed time always from one frame.
@Suite struct SessionStatusTests {
    /// Ten 1-second phases, one a cycle.
    static let seconds = Pattern(
        name: "seconds", phases: [Phase("second", length: 1, cue: Cue("click"))], length: .cycles(10))
    static let rate = 48000

    /// Pulls `frames` frames, `sizes` frames per call in turn (the last call shorter if it must
    /// be), as fast as this thread can; `heardIn` seconds from now, if given, is when each
    /// buffer is said to be heard.
    static func pull(
        _ session: GongSession, frames: Int, sizes: [Int], heardIn: Double? = nil,
        afterEach check: (Int) -> Void = { _ in }
    ) {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: PullFormat.maximumFrames * 2)
        defer { buffer.deallocate() }
        var pulled = 0
        var call = 0
        while pulled < frames {
            let size = min(sizes[call % sizes.count], frames - pulled)
            call += 1
            let heard = heardIn.map { MonotonicTime(nanoseconds: MonotonicTime.now().nanoseconds + Int64($0 * 1e9)) }
            let result = session.render(into: buffer, frames: size, heardAt: heard)
            #expect(result == .playing || result == .over, "\(result)")
            pulled += size
            check(pulled)
        }
    }

    static func started() throws -> GongSession {
        let session = try GongSessionPullTests.pulled(seconds)
        session.start()
        return session
    }

    @Test(arguments: [[1], [7], [480], [4096], [8192], [1000, 7, 8192, 441, 1, 64, 4096, 333]], [nil, 60.0])
    func afterPulling5_5SecondsOf1SecondPhasesTheStatusIsCycle6HalfASecondIn(sizes: [Int], heardIn: Double?)
        throws
    {
        let session = try Self.started()
        Self.pull(session, frames: Self.rate * 11 / 2, sizes: sizes, heardIn: heardIn)
        let status = session.status
        #expect(status.elapsedSeconds == 5.5 && status.cycle == 6 && status.phaseElapsedSeconds == 0.5, "\(status)")
        #expect(status.state == .active && status.phase == "second" && status.phaseSeconds == 1)
    }

    /// After every call, all the way through the ring-out: elapsed, cycle and the phase's time
    /// are the frames pulled so far, and stay at the planned end once it is passed.
    @Test func theStatusFollowsEveryCallToTheEnd() throws {
        let session = try Self.started()
        var wrong: [String] = []
        let planned = 10 * Self.rate
        Self.pull(session, frames: planned + Self.rate / 2, sizes: [4801, 1, 333, 8192, 7]) { pulled in
            let status = session.status
            let at = min(pulled, planned)
            let cycle = at == planned ? 10 : at / Self.rate + 1
            let into = at == planned ? Self.rate : at % Self.rate
            if status.elapsedSeconds != Double(at) / Double(Self.rate) || status.cycle != cycle
                || status.phaseElapsedSeconds != Double(into) / Double(Self.rate), wrong.count < 5
            {
                wrong.append("after \(pulled) frames: \(status)")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    /// Over the control socket, as `gong ctl` asks: a pause and a resume carried out by the
    /// server's thread leave out exactly the frames pulled while paused.
    @Test func theControlChannelsStatusOfAPulledSessionLeavesOutThePausedFrames() throws {
        let session = try Self.started()
        let scratch = try ScratchDirectory()
        let server = try ControlServer(session: session, directory: scratch.path)
        defer { server.close() }
        let client = try ControlSockets.connect(server.path)
        defer { close(client) }
        var lines = ControlSockets.LineReader(descriptor: client)
        func ask(_ line: String) -> [String: Any]? {
            _ = (line + "\n").withCString { send(client, $0, strlen($0), 0) }
            return lines.next().flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        func status() -> (elapsed: Double?, cycle: Int?, phaseElapsed: Double?, state: String?) {
            let status = ask(#"{"id": 1, "command": "status"}"#)?["status"] as? [String: Any]
            return (
                status?["elapsedSeconds"] as? Double, status?["cycle"] as? Int,
                status?["phaseElapsedSeconds"] as? Double,
                status?["state"] as? String
            )
        }

        Self.pull(session, frames: Self.rate * 5 / 4, sizes: [480])
        #expect(ask(#"{"id": 2, "command": "pause"}"#)?["ok"] as? Bool == true)
        Self.pull(session, frames: Self.rate * 3 / 4, sizes: [480])
        let paused = status()
        #expect(paused.elapsed == 1.25 && paused.cycle == 2 && paused.phaseElapsed == 0.25, "\(paused)")
        #expect(paused.state == "paused")
        #expect(ask(#"{"id": 3, "command": "resume"}"#)?["ok"] as? Bool == true)
        Self.pull(session, frames: Self.rate * 17 / 4, sizes: [480])
        let resumed = status()
        #expect(resumed.elapsed == 5.5 && resumed.cycle == 6 && resumed.phaseElapsed == 0.5, "\(resumed)")
        #expect(resumed.state == "active")
    }

    /// ALSA's `null` takes frames at once and has no clock: it is taken to hear what it is given,
    /// so once it is over the status says the session's end, not the start it began from.
    @Test func aDeviceSessionWithNoClockStandsAtItsEndOnceItIsOver() async throws {
        let session = try GongSessionTests.open(Self.seconds)
        session.start()
        _ = await session.report()
        let status = session.status
        #expect(status.elapsedSeconds == 10 && status.cycle == 10 && status.phaseElapsedSeconds == 1, "\(status)")
        #expect(status.state == .completed)
    }

    /// On `null` paced as a sound card: once the third phase is told the status is at least there,
    /// and its cycle and the phase's time agree with its elapsed time to the frame.
    @Test func aDeviceSessionsCycleAndPhaseTimeAgreeWithItsElapsedTime() async throws {
        let session = try GongSessionTests.openPaced(Self.seconds)
        var iterator = session.events().makeAsyncIterator()
        session.start()
        _ = try #require(
            await GongSessionTests.first(&iterator) {
                if case .phaseBegan(_, let cycle, _, _) = $0.kind { return cycle == 3 }
                return false
            })
        let status = session.status
        #expect(status.elapsedSeconds >= 2, "\(status)")
        #expect(status.cycle >= 3, "\(status)")
        let fromCycle = Double(status.cycle - 1) + status.phaseElapsedSeconds
        #expect(abs(fromCycle - status.elapsedSeconds) < 1e-9, "\(status)")
        // Cut short; a machine slow enough may have played it to its end already.
        try? session.send(.halt)
        _ = await session.report()
    }
}
