import Foundation
import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongAudio

@Suite(.serialized) struct PullEngineTests {
    static let rate = 48000

    /// Cues every quarter second, 8 phases × `cycles`, ending with a cue.
    static func timeline(cycles: Int = 3) throws -> Timeline {
        let pattern = Pattern(
            name: "ticks", phases: (0..<8).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("tick")) },
            length: .cycles(cycles), endCue: Cue("tick"))
        return try Timeline(pattern: pattern, sampleRate: rate)
    }

    /// A sound that changes every sample and rings for 0.6 s: voices overlap (two or three at a
    /// time, loud enough for the limiter to act), so a block boundary in the wrong place, a voice
    /// mixed out of order or the limiter's state lost between calls would all change samples.
    static let ringing: [Float] = (0..<28800).map { index in
        let t = Float(index)
        return 0.8 * sin(t * 0.031) * exp(-t / 12000) + 0.1 * sin(t * 0.17)
    }

    static func renderer(_ timeline: Timeline, sound: [Float] = ringing) -> SessionRenderer {
        SessionRenderer(timeline: timeline, sounds: [RenderSound(samples: sound, channels: 1)], channels: 2)
    }

    /// What `gong render` writes: the renderer in 16384-frame blocks until it finishes, each
    /// block's session frames kept (OfflineRender's loop).
    static func offline(_ timeline: Timeline) -> [Float] {
        var renderer = renderer(timeline)
        var events = RenderEventBuffer()
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * 2)
        defer { block.deallocate() }
        var samples: [Float] = []
        while !renderer.isFinished {
            let produced = renderer.render(into: block, events: &events)
            samples += block[0..<(produced * 2)]
            events.removeAll()
        }
        return samples
    }

    /// Pulls a whole session, `sizes` frames per call in turn, until the engine says it is over.
    static func pull(_ engine: PullEngine, sizes: [Int]) -> (samples: [Float], statuses: [PullStatus]) {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: PullEngine.maximumFrames * 2)
        defer { buffer.deallocate() }
        var samples: [Float] = []
        var statuses: [PullStatus] = []
        var call = 0
        while true {
            let frames = sizes[call % sizes.count]
            call += 1
            let status = engine.render(into: buffer, frames: frames)
            statuses.append(status)
            if status == .over { break }
            samples += buffer[0..<(frames * 2)]
        }
        return (samples, statuses)
    }

    static func drain(_ engine: PullEngine) -> [EngineEvent] {
        var events: [EngineEvent] = []
        while let event = engine.events.tryPop() { events.append(event) }
        return events
    }

    static func renderEvents(_ events: [EngineEvent]) -> [RenderEvent] {
        events.compactMap { if case .render(let event, _) = $0 { event } else { nil } }
    }

    /// Deterministic sizes from 1 to 8192 (a small linear congruential generator).
    static func randomSizes(count: Int, seed: UInt64) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % PullEngine.maximumFrames + 1
        }
    }

    @Test(arguments: [[1], [7], [64], [441], [1000], [4096], [8192], randomSizes(count: 97, seed: 7)])
    func anyFrameCountPerCallGivesTheSamplesOfAnOfflineRender(sizes: [Int]) throws {
        let timeline = try Self.timeline()
        let reference = Self.offline(timeline)
        let engine = PullEngine(renderer: Self.renderer(timeline))
        engine.start()
        let (samples, statuses) = Self.pull(engine, sizes: sizes)
        #expect(statuses.dropLast().allSatisfy { $0 == .playing } && statuses.last == .over)
        // The session, sample for sample, then silence to the end of the buffer it ended in.
        try #require(samples.count >= reference.count)
        let mismatch = zip(samples, reference).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(mismatch == nil, "first differing sample \(mismatch.map { "\($0.offset): \($0.element)" } ?? "")")
        #expect(samples[reference.count...].allSatisfy { $0 == 0 })
        #expect(samples.count - reference.count <= sizes.max()! * 2, "at most the buffer the end was found in")

        let events = Self.drain(engine)
        let cues = Self.renderEvents(events).compactMap {
            if case .cueStarted(_, let scheduled) = $0.kind { ($0.outputFrame, scheduled) } else { nil }
        }
        #expect(cues.map(\.0) == timeline.cueOnsets.map(\.frame), "every cue on its frame of the host's stream")
        #expect(cues.map(\.1) == timeline.cueOnsets.map(\.frame))
        // In order: the renderer's events by frame, its own `finished` last among them, then the
        // engine's `finished`, once.
        let frames = Self.renderEvents(events).map(\.outputFrame)
        #expect(frames == frames.sorted())
        #expect(Self.renderEvents(events).last?.kind == .finished)
        #expect(events.last.map { if case .finished = $0 { true } else { false } } == true)
        #expect(events.filter { if case .finished = $0 { true } else { false } }.count == 1)
        #expect(!engine.isRunning)
    }

    @Test func pullingBeforeStartGivesSilenceAndAfterTheEndToo() throws {
        let engine = PullEngine(renderer: Self.renderer(try Self.timeline(cycles: 1)))
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512 * 2)
        defer { buffer.deallocate() }
        buffer.initialize(repeating: 1)
        #expect(engine.render(into: buffer, frames: 512) == .notStarted)
        #expect(buffer.allSatisfy { $0 == 0 })
        #expect(engine.events.tryPop() == nil, "nothing happened")
        #expect(!engine.isRunning)
        // Out of bounds: nothing written.
        buffer.update(repeating: 1)
        #expect(engine.render(into: buffer, frames: 0) == .refused)
        #expect(engine.render(into: buffer, frames: 513) == .refused, "the buffer holds 512 frames")
        #expect(engine.render(into: buffer, frames: PullEngine.maximumFrames + 1) == .refused)
        #expect(buffer.allSatisfy { $0 == 1 })

        engine.start()
        #expect(engine.isRunning)
        #expect(engine.render(into: buffer, frames: 512) == .playing)
        #expect(buffer.contains { $0 != 0 }, "the first cue is on frame 0")
        while engine.render(into: buffer, frames: 512) == .playing {}
        buffer.update(repeating: 1)
        #expect(engine.render(into: buffer, frames: 512) == .over)
        #expect(buffer.allSatisfy { $0 == 0 })
        #expect(!engine.isRunning)
    }

    @Test func theHostsHeardAtTimePlacesEveryEvent() throws {
        let timeline = try Self.timeline(cycles: 1)
        let engine = PullEngine(renderer: Self.renderer(timeline))
        engine.start()
        let origin: Int64 = 5_000_000_000_000
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 441 * 2)
        defer { buffer.deallocate() }
        var pulled: Int64 = 0
        while true {
            let heard = origin + FrameTime.nanoseconds(ofFrames: pulled, rate: Int64(Self.rate))
            if engine.render(into: buffer, frames: 441, heardAt: MonotonicTime(nanoseconds: heard)) == .over { break }
            pulled += 441
        }
        let events = Self.drain(engine)
        guard case .started(let first) = events.first else {
            Issue.record("the first event is not started: \(events.first.map { "\($0)" } ?? "none")")
            return
        }
        #expect(first.nanoseconds == origin)
        let renders = events.compactMap {
            if case .render(let event, let audible) = $0 { (event, audible) } else { nil }
        }
        #expect(renders.count > 8)
        for (event, audible) in renders {
            let expected = origin + FrameTime.nanoseconds(ofFrames: event.outputFrame, rate: Int64(Self.rate))
            #expect(abs(audible.nanoseconds - expected) <= 1, "\(event.kind) at \(event.outputFrame)")
        }
        guard case .finished(let last) = events.last, let end = renders.last else {
            Issue.record("the last event is not finished")
            return
        }
        #expect(last == end.1, "the last frame is heard when the renderer's end is")
    }

    /// A host thread pulls as fast as it can while the control side (this thread) sends pause,
    /// resume, skip and stop: each is taken at the next call, the session clock stops while
    /// paused (the host hears silence), and the session ends by itself after the stop. Run
    /// under the thread sanitizer too (`make test`).
    @Test func commandsFromAnotherThreadReachTheRendererWhileAHostThreadPulls() throws {
        // 4000 cycles: 8000 s, far longer than the test, so it ends only by the stop.
        let timeline = try Self.timeline(cycles: 4000)
        let engine = PullEngine(renderer: Self.renderer(timeline, sound: [Float](repeating: 0.1, count: 400)))
        engine.start()
        /// Where the host heard sound: the first frame of each block that was not silent.
        let audibleBlocks = Shared<[Int64]>([])
        let host = Thread {
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)
            defer { buffer.deallocate() }
            var pulled: Int64 = 0
            while engine.render(into: buffer, frames: 256) != .over {
                if buffer.contains(where: { $0 != 0 }) { audibleBlocks.withLock { $0.append(pulled) } }
                pulled += 256
                usleep(20)  // a host's pace, roughly: it leaves the control side a core to run on
            }
        }
        host.start()
        var events: [EngineEvent] = []
        /// Takes events until one matches, asleep on the event bell between them, for at most 60 s.
        func waitFor(_ matches: (RenderEvent.Kind) -> Bool) -> RenderEvent? {
            let deadline = Date().addingTimeInterval(60)
            repeat {
                engine.clearEventsReady()
                while let event = engine.events.tryPop() {
                    events.append(event)
                    if case .render(let render, _) = event, matches(render.kind) { return render }
                }
            } while Waiting.readable(engine.eventsReadyDescriptor, seconds: deadline.timeIntervalSinceNow)
            return nil
        }
        let cue = try #require(waitFor { if case .cueStarted = $0 { true } else { false } })
        #expect(cue.outputFrame == 0)
        _ = try #require(waitFor { if case .cueStarted = $0 { true } else { false } })
        #expect(engine.send(.pause))
        let paused = try #require(waitFor { $0 == .paused })
        // The host pulls on, in silence, for more than a block.
        let pulledWhenPaused = engine.framesRendered
        #expect(Waiting.until { engine.framesRendered > pulledWhenPaused + 512 }, "the host pulled on while paused")
        #expect(engine.send(.resume))
        let resumed = try #require(waitFor { $0 == .resumed })
        #expect(resumed.sessionFrame == paused.sessionFrame, "the session clock stood still")
        #expect(resumed.outputFrame > paused.outputFrame + 256, "while the host pulled silence")
        #expect(
            !audibleBlocks.withLock { $0 }.contains { $0 >= paused.outputFrame && $0 + 256 <= resumed.outputFrame },
            "nothing was heard while paused")
        #expect(engine.send(.skipPhase))
        let skipped = try #require(waitFor { if case .skipped = $0 { true } else { false } })
        #expect(skipped.outputFrame >= resumed.outputFrame)
        #expect(engine.send(.stop))
        _ = try #require(waitFor { $0 == .finished })
        engine.join()
        while let event = engine.events.tryPop() { events.append(event) }
        #expect(!engine.isRunning)
        let kinds = Self.renderEvents(events).map(\.kind)
        let order: [RenderEvent.Kind] = [.paused, .resumed, .sessionEnded, .finished]
        #expect(order.compactMap { kinds.firstIndex(of: $0) } == order.compactMap { kinds.firstIndex(of: $0) }.sorted())
        #expect(kinds.filter { $0 == .finished }.count == 1)
        let frames = Self.renderEvents(events).map(\.outputFrame)
        #expect(frames == frames.sorted(), "events come in the order they happened")
        #expect(events.last.map { if case .finished = $0 { true } else { false } } == true)
        // The stop reached the end long before 8000 s of the host's frames.
        #expect(engine.framesRendered < Int(timeline.plannedEndFrame) / 10)
        // The host thread has seen `.over` and ended.
        #expect(Waiting.until(seconds: 10) { host.isFinished }, "the host thread ended")
    }

    /// A control side that stops taking events loses them once the ring is full, and hears how
    /// many, ahead of the first event there is room for again (never silently, never a guess).
    @Test func eventsLostToAFullRingAreCountedAndToldWhenThereIsRoom() {
        let link = EngineLink()
        let capacity = link.events.capacity
        let moment = SessionMoment(sessionFrame: 0, audible: MonotonicTime(nanoseconds: 0))
        for frame in 0..<(capacity + 5) {
            link.audioSide.report(.underrun(lostFrames: Int64(frame), silent: false, at: moment))
        }
        for _ in 0..<10 { _ = link.events.tryPop() }
        link.audioSide.report(.finished(lastFrameAudible: MonotonicTime(nanoseconds: 1)))
        var rest: [EngineEvent] = []
        while let event = link.events.tryPop() { rest.append(event) }
        #expect(rest.count == capacity - 10 + 2)
        #expect(
            Array(rest.suffix(2)) == [
                .eventsDropped(count: 5), .finished(lastFrameAudible: MonotonicTime(nanoseconds: 1))
            ])
    }

    @Test func aPullEngineLetGoBeforeItsEndReportsFinished() throws {
        let engine = PullEngine(renderer: Self.renderer(try Self.timeline()))
        engine.abandon()
        #expect(engine.events.tryPop() == nil, "one never started has nothing to report")
        engine.start()
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)
        defer { buffer.deallocate() }
        #expect(engine.render(into: buffer, frames: 256) == .playing)
        engine.abandon()
        engine.join()
        let events = Self.drain(engine)
        #expect(events.last == .finished(lastFrameAudible: MonotonicTime(nanoseconds: 0)))
        #expect(engine.render(into: buffer, frames: 256) == .over)
    }
}

/// A value two threads of a test share, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let value: Locked<Value>
    init(_ value: Value) { self.value = Locked(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
