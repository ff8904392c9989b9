import Foundation
import GongAudio
import GongCore
import Synchronization
import Testing

@testable import GongKit

/// A session a host pulls from its own callback, through the facade an embedding program uses.
@Suite struct GongSessionPullTests {
    /// Four seconds: bowl, chime at 2 s, and the end bowl at 4 s rung out.
    static let short = Pattern(
        name: "short", phases: [Phase("a", length: 2, cue: Cue("bowl")), Phase("b", length: 2, cue: Cue("chime"))],
        length: .cycles(1), endCue: Cue("bowl"))

    static func pulled(_ pattern: Pattern, gainDB: Double = 0, rate: Int = 48000, channels: Int = 2) throws
        -> GongSession
    {
        try GongSession(
            pattern: pattern, options: SessionOptions(gainDB: gainDB),
            pulling: PullFormat(rate: rate, channels: channels),
            bank: shippedBank)
    }

    /// What `gong render` writes for the same pattern and gain, as float samples.
    static func offline(_ pattern: Pattern, gainDB: Double, rate: Int, channels: Int) throws -> [Float] {
        let scratch = try ScratchDirectory()
        var request = RenderRequest(pattern: pattern, outputPath: scratch.file("session.wav"))
        request.sampleRate = rate
        request.channels = channels
        request.encoding = .float32
        request.masterGainDB = gainDB
        _ = try OfflineRender.run(request, bank: shippedBank)
        return try loadSound(path: request.outputPath).samples
    }

    /// Pulls until the session is over, `sizes` frames per call in turn, on this thread.
    static func pullToTheEnd(_ session: GongSession, channels: Int, sizes: [Int]) -> [Float] {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: PullFormat.maximumFrames * channels)
        defer { buffer.deallocate() }
        var samples: [Float] = []
        var call = 0
        while true {
            let frames = sizes[call % sizes.count]
            call += 1
            if session.render(into: buffer, frames: frames) == .over { return samples }
            samples += buffer[0..<(frames * channels)]
        }
    }

    @Test(arguments: [(48000, 2, [256]), (44100, 1, [1000, 7, 8192, 441, 1, 64, 4096, 333])])
    func aPulledSessionGivesTheSamplesOfGongRender(rate: Int, channels: Int, sizes: [Int]) async throws {
        let reference = try Self.offline(Self.short, gainDB: -6, rate: rate, channels: channels)
        let session = try Self.pulled(Self.short, gainDB: -6, rate: rate, channels: channels)
        #expect(session.output.device == "pull" && session.output.rate == rate && session.output.channels == channels)
        let events = session.events()
        session.start()
        let samples = Self.pullToTheEnd(session, channels: channels, sizes: sizes)
        try #require(samples.count >= reference.count)
        let mismatch = zip(samples, reference).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(mismatch == nil, "first differing sample \(mismatch.map { "\($0.offset): \($0.element)" } ?? "")")
        #expect(samples[reference.count...].allSatisfy { $0 == 0 })

        var seen: [SessionEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.first?.type == "started")
        #expect(seen.last?.type == "finished")
        #expect(seen.filter { $0.type == "cue" }.count == 3)
        let report = await session.report()
        #expect(report.cues == 3)
        #expect(report.failure == nil)
    }

    @Test func pullingBeforeStartGivesSilenceAndADeviceSessionRefusesToBePulled() throws {
        let session = try Self.pulled(Self.short)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 1)
        #expect(session.render(into: buffer, frames: 256) == .notStarted)
        #expect(buffer.allSatisfy { $0 == 0 })
        #expect(session.status.state == .idle)

        let device = try GongSession(pattern: Self.short, options: SessionOptions(device: "null"), bank: shippedBank)
        buffer.update(repeating: 1)
        #expect(device.render(into: buffer, frames: 256) == .refused)
        #expect(buffer.allSatisfy { $0 == 1 })
    }

    /// A host thread pulls (paced a little faster than real time) while commands come from this
    /// task: each is taken at the host's next call and the events say so, in order.
    @Test func commandsReachAPulledSessionWhileAHostThreadPulls() async throws {
        let session = try Self.pulled(GongSessionTests.long)
        let events = session.events()
        session.start()
        let hostDone = DispatchSemaphore(value: 0)
        let host = Thread {
            defer { hostDone.signal() }
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 480 * 2)
            defer { buffer.deallocate() }
            var pulled: Int64 = 0
            let origin = MonotonicTime.now().nanoseconds
            while true {
                let heard = origin + FrameTime.nanoseconds(ofFrames: pulled, rate: 48000)
                if session.render(into: buffer, frames: 480, heardAt: MonotonicTime(nanoseconds: heard)) == .over {
                    return
                }
                pulled += 480
                usleep(2_000)  // 10 ms of audio every 2 ms or so
            }
        }
        host.start()
        var iterator = events.makeAsyncIterator()
        _ = try #require(await GongSessionTests.first(&iterator) { $0.type == "cue" })
        #expect(session.pauseAndWait(timeoutSeconds: 10))
        #expect(session.status.state == .paused)
        try session.send(.resume)
        _ = try #require(await GongSessionTests.first(&iterator) { $0.type == "resumed" })
        try session.send(.skip)
        _ = try #require(await GongSessionTests.first(&iterator) { $0.type == "skipped" })
        try session.send(.stop)
        var rest: [SessionEvent] = []
        while let event = await iterator.next() { rest.append(event) }
        #expect(rest.last?.type == "finished")
        let report = await session.report()
        #expect(report.failure == nil)
        // The host's next call (a few milliseconds away) sees the session over and returns.
        #expect(hostDone.wait(timeout: .now() + 10) == .success, "the host saw the session over")
    }

    /// A host that stops pulling and lets the session go before its end: every stream still
    /// ends with `finished`, as when a device session is dropped.
    @Test func aPulledSessionLetGoBeforeItsEndFinishesItsStreams() async throws {
        var session: GongSession? = try Self.pulled(GongSessionTests.long)
        let events = session!.events()
        session!.start()
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024 * 2)
        defer { buffer.deallocate() }
        for _ in 0..<10 { #expect(session!.render(into: buffer, frames: 1024) == .playing) }
        session = nil
        var seen: [SessionEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen.first?.type == "started")
        #expect(seen.last?.type == "finished")
    }
}

/// A pulled session's announcements, judged at a device's pace: among the real-time tests, which
/// run alone (the Makefile's REALTIME_TESTS), because what it pins is timing. Beside the whole
/// unit suite and two busy loops, the session's control side was held off longer than a cue's
/// second, so cues were pulled before they could be announced: the machine's doing, not gong's.
@Suite struct LivePulledAnnouncementTests {
    /// Each cue is announced (`cueAhead`) before its `cue` event, for the second its event then
    /// says it was heard; a pause withdraws what was announced (`cuesWithdrawn`) before the audio
    /// side has even taken it, nothing is announced while paused, and announcing starts again
    /// from the resume. Judged as a display would: a mark set for each announcement, dropped at
    /// each withdrawal, and each cue event must find its mark set for the second it was heard.
    @Test func cuesAreAnnouncedAheadAtTheSecondTheyAreHeardAndAPauseWithdrawsThem() async throws {
        // Twelve cues a second apart of session time, pulled at about a device's pace (a cue is
        // announced when the session's control side next runs: pulled five times faster, a
        // loaded run's control side was held off longer than a second of session took, and
        // three cues were pulled before their announcement), each heard a minute after it is
        // pulled (so still ahead however slowly a busy machine runs the host); the host waits at
        // 2.5 s for the pause. The last cue a woodblock: the session ends when its sound does, and
        // a bowl's 36 s tail pins nothing here.
        let pattern = Pattern(
            name: "quick",
            phases: [Phase("a", length: 1, cue: Cue("chime")), Phase("b", length: 1, cue: Cue("woodblock"))],
            length: .cycles(6))
        let session = try GongSessionPullTests.pulled(pattern)
        let events = session.events()
        session.start()
        let paused = DispatchSemaphore(value: 0)
        let host = Thread {
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 480 * 2)
            defer { buffer.deallocate() }
            var pulled: Int64 = 0
            let origin = MonotonicTime.now().nanoseconds + 60_000_000_000
            while true {
                let heard = origin + FrameTime.nanoseconds(ofFrames: pulled, rate: 48000)
                if session.render(into: buffer, frames: 480, heardAt: MonotonicTime(nanoseconds: heard)) == .over {
                    return
                }
                pulled += 480
                if pulled == 120_000 { paused.wait() }
                usleep(10_000)
            }
        }
        host.start()
        var seen: [SessionEvent] = []
        var iterator = events.makeAsyncIterator()
        _ = try #require(
            await GongSessionTests.first(&iterator) {
                seen.append($0)
                return $0.type == "cueAhead" && $0.frame! > 120_000
            })
        // One who starts listening now is told first what was announced and is still ahead.
        var late = session.events().makeAsyncIterator()
        let told = await late.next()
        #expect(told?.type == "cueAhead" && seen.contains(told!), "a late listener is told \(String(describing: told))")
        try session.send(.pause)
        paused.signal()
        _ = try #require(
            await GongSessionTests.first(&iterator) {
                seen.append($0)
                return $0.type == "paused"
            })
        try session.send(.resume)
        while let event = await iterator.next() { seen.append(event) }

        let pauseAt = try #require(seen.firstIndex { $0.type == "paused" })
        let withdrawnAt = try #require(
            seen.firstIndex { $0.type == "cuesWithdrawn" }, "the pause withdrew the cues announced")
        #expect(withdrawnAt < pauseAt, "withdrawn as the pause was taken, before the audio side reported it")
        let resumedAt = try #require(seen.firstIndex { $0.type == "resumed" })
        #expect(!seen[withdrawnAt..<resumedAt].contains { $0.type == "cueAhead" }, "nothing announced while paused")

        var marks: [Int64: Double] = [:]
        var announcedCues = 0
        var cues = 0
        for event in seen {
            switch event.kind {
            case .cueAhead: marks[event.frame!] = event.audible!
            case .cuesWithdrawn: marks.removeAll()
            case .cue(_, let late, _):
                cues += 1
                guard let mark = marks.removeValue(forKey: event.frame! - late) else { continue }
                announcedCues += 1
                #expect(
                    abs(mark - event.audible!) < 0.000_1,
                    "cue at \(event.frame!): announced \(mark), heard \(event.audible!)")
            default: break
            }
        }
        #expect(marks.isEmpty, "no cue announced that never sounded: \(marks)")
        // The first (on the first frame, before the host's clock is known) and the first after
        // the resume may be told only by their events.
        #expect(cues == 12 && announcedCues >= cues - 2, "\(announcedCues) of \(cues) cues announced ahead")
    }
}
