import GongCore
import Testing

@Suite struct RenderCommandTests {
    static let rate = 8000
    static func twoPhaseShort() throws -> Timeline {
        let pattern = Pattern(
            name: "short",
            phases: [Phase("sit", length: 10, cue: Cue("a")), Phase("reflect", length: 5, cue: Cue("b"))],
            length: .cycles(1), endCue: Cue("end"))
        return try Timeline(pattern: pattern, sampleRate: rate)
    }

    static func sounds() -> [[Float]] {
        [
            [Float](repeating: 0.2, count: 2 * rate), [Float](repeating: 0.3, count: 100),
            [Float](repeating: 0.1, count: rate)
        ]
    }

    @Test func pauseFadesOutStopsTheClockAndResumeCarriesOn() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        var events = RenderEventBuffer()
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 800)
        defer { block.deallocate() }
        _ = renderer.render(into: block, events: &events)  // 0.1 s in, the gong is ringing
        renderer.apply(.pause, events: &events)
        _ = renderer.render(into: block, events: &events)  // fades out within 15 ms (120 frames)
        #expect(renderer.lifecycle == .paused)
        #expect(block[0] != 0 && block[119...].allSatisfy { $0 == 0 }, "a short fade, then silence")
        let frozen = renderer.sessionFrame
        for _ in 0..<50 {  // 5 s of pause
            #expect(renderer.render(into: block, events: &events) == 800)
            #expect(block.allSatisfy { $0 == 0 })
        }
        #expect(renderer.sessionFrame == frozen, "the session clock does not move while paused")
        renderer.apply(.resume, events: &events)
        _ = renderer.render(into: block, events: &events)
        #expect(block[200...].allSatisfy { abs($0 - 0.2) < 1e-6 }, "the gong carries on where it was")
        #expect(renderer.sessionFrame == frozen + 800)
        var kinds: [RenderEvent.Kind] = []
        for index in 0..<events.count { kinds.append(events[index].kind) }
        #expect(kinds.contains(.paused) && kinds.contains(.resumed))
    }

    /// A resume that comes while the pause is still fading out (a program that pauses and
    /// resumes at once) is told after the pause, never instead of it: paused, then resumed.
    @Test func aResumeDuringThePausesFadeIsToldAfterThePause() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        var events = RenderEventBuffer()
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 800)
        defer { block.deallocate() }
        _ = renderer.render(into: block, events: &events)
        renderer.apply(.pause, events: &events)
        renderer.apply(.resume, events: &events)
        _ = renderer.render(into: block, events: &events)
        var kinds: [RenderEvent.Kind] = []
        for index in 0..<events.count { kinds.append(events[index].kind) }
        #expect(kinds.filter { $0 == .paused || $0 == .resumed } == [.paused, .resumed], "\(kinds)")
        #expect(renderer.lifecycle == .playing)
    }

    @Test func skipJumpsToTheNextPhaseAndPlaysItsCue() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        let events = renderSession(&renderer, blockFrames: 400, commands: [800: .skipPhase])
        let began = events.compactMap { event -> (Int32, Int64)? in
            guard case .phaseBegan(let phase, _) = event.kind else { return nil }
            return (phase, event.outputFrame)
        }
        #expect(began.map(\.0) == [0, 1])
        #expect(began[1].1 == 800, "reflection begins right where the skip was asked")
        #expect(events.contains { $0.kind == .skipped(frames: Int64(10 * Self.rate - 800)) })
    }

    @Test func stopPlaysTheEndCueNowAndLetsItRingOut() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        var total: Int64 = 0
        let events = renderSession(&renderer, blockFrames: 400, commands: [4000: .stop]) { block, _ in
            total += Int64(block.count)
        }
        let ended = try #require(events.first { $0.kind == .sessionEnded })
        #expect(ended.outputFrame == 4000)
        // The first gong (2 s) still rings past the stop, so the session ends with the longer tail.
        #expect(total == Int64(2 * Self.rate))
        #expect(events.last?.kind == .finished)
    }

    @Test func haltFadesQuicklyAndFinishesCuttingTails() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        var total: Int64 = 0
        renderSession(&renderer, blockFrames: 400, commands: [800: .halt]) { block, _ in total += Int64(block.count) }
        #expect(total == 800 + 120)
    }

    @Test func anUnderrunAdvancesTheClockAndAGapCuePlaysLateButPlays() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        let lost = Int64(2000)
        // At 9.9 s, 2000 frames are lost: the reflection cue (due at 10 s) falls in the gap.
        let events = renderSession(&renderer, blockFrames: 400, commands: [79_200: .advance(frames: lost)])
        let cue = try #require(events.first { if case .cueStarted(1, _) = $0.kind { true } else { false } })
        guard case .cueStarted(_, let scheduled) = cue.kind else { return }
        #expect(scheduled == 80_000)
        #expect(cue.sessionFrame == 79_200 + lost, "played at once after the gap, 1200 frames late")
        #expect(cue.outputFrame == 79_200)
        let end = try #require(events.first { $0.kind == .sessionEnded })
        #expect(end.sessionFrame == timeline.plannedEndFrame, "later phases stay on the session's schedule")
    }

    @Test func setGainRampsToTheNewLevel() throws {
        let timeline = try Self.twoPhaseShort()
        var renderer = SessionRenderer(timeline: timeline, sounds: Self.sounds(), channels: 1)
        var events = RenderEventBuffer()
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 400)
        defer { block.deallocate() }
        _ = renderer.render(into: block, events: &events)
        renderer.apply(.setGain(0.5), events: &events)
        _ = renderer.render(into: block, events: &events)
        #expect(block[0] > 0.1 && block[0] < 0.2)
        #expect(abs(block[399] - 0.1) < 1e-6)
    }
}
