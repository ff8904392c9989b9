import GongCore
import Testing

/// Taking back audio rendered but not yet heard: rendering again from a checkpoint with a command
/// applied there must give exactly what one pass with the command at that frame gives.
@Suite struct RenderCheckpointTests {
    static let rate = 8000
    static let block = 100

    /// Plays like the engine: a checkpoint before every block; each command is noticed `lateBy`
    /// frames after its frame and taken back to it. Returns the output as heard (what the rewinds
    /// replaced is gone) and the events as given (those after the checkpoint taken back).
    static func renderWithRewinds(
        _ timeline: Timeline, sounds: [[Float]], masterGainDB: Double,
        commands: [(frame: Int64, lateBy: Int64, command: RenderCommand)]
    ) throws -> (samples: [Float], events: [RenderEvent]) {
        var renderer = SessionRenderer(timeline: timeline, sounds: sounds, channels: 1, masterGainDB: masterGainDB)
        var checkpoints = RenderCheckpoints(capacity: 64, for: renderer)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: block)
        defer { buffer.deallocate() }
        var eventBuffer = RenderEventBuffer()
        var samples: [Float] = []
        var events: [RenderEvent] = []
        var pending = commands[...]
        while !renderer.isFinished {
            if let next = pending.first, renderer.outputFrame >= next.frame + next.lateBy {
                pending.removeFirst()
                let found = checkpoints.oldest(atOrAfter: next.frame, minimumTag: 0)
                let index = try #require(found)
                #expect(checkpoints.outputFrame(at: index) == next.frame, "a checkpoint on every block")
                let tag = checkpoints.tag(at: index)
                renderer.restore(checkpoint: index, from: &checkpoints)
                #expect(renderer.outputFrame == next.frame)
                samples.removeLast(samples.count - Int(next.frame))
                events.removeLast(events.count - Int(tag))
                renderer.apply(next.command, events: &eventBuffer)
                eventBuffer.drain(into: &events)
                checkpoints.removeAll()
            }
            renderer.saveCheckpoint(into: &checkpoints, tag: Int64(events.count))
            let produced = renderer.render(into: buffer, events: &eventBuffer)
            eventBuffer.drain(into: &events)
            samples.append(contentsOf: buffer[0..<produced])
        }
        return (samples, events)
    }

    @Test func renderingAgainFromACheckpointWithACommandIsTheSameAsOnePass() throws {
        var generator = SeededGenerator(seed: 0x7e_31_4d)
        for trial in 0..<16 {
            let pattern = RandomPatterns.make(using: &generator)
            let timeline = try Timeline(pattern: pattern, sampleRate: Self.rate)
            // Loud, long, overlapping sounds: the limiter, the gain ramp and several voices all
            // carry state across the point taken back to.
            let sounds = (0..<timeline.sounds.count).map { index in
                RenderMixTests.tail(
                    frames: Int.random(in: 2000...(Self.rate * 4), using: &generator), level: 0.6 + 0.2 * Float(index))
            }
            let masterGainDB = [0.0, 9.0][trial % 2]
            // Ends with a stop, so a session left paused still ends.
            let choices: [RenderCommand] = [.pause, .resume, .skipPhase, .setGain(0.5), .pause, .resume]
            var frame: Int64 = 0
            var commands: [(frame: Int64, lateBy: Int64, command: RenderCommand)] = []
            for command in choices.prefix(Int.random(in: 1...choices.count, using: &generator)) + [.stop] {
                frame += Int64(Int.random(in: 5...40, using: &generator) * Self.block)
                commands.append((frame, Int64(Int.random(in: 1...30, using: &generator) * Self.block), command))
                frame += commands.last!.lateBy
            }
            var oneCommandPerFrame: [Int64: RenderCommand] = [:]
            for entry in commands { oneCommandPerFrame[entry.frame] = entry.command }
            let expected = RenderMixTests.renderAll(
                timeline, sounds: sounds, blockFrames: Self.block, masterGainDB: masterGainDB,
                commands: oneCommandPerFrame)
            let rewound = try Self.renderWithRewinds(
                timeline, sounds: sounds, masterGainDB: masterGainDB, commands: commands)
            #expect(rewound.samples.count == expected.samples.count, "trial \(trial)")
            let firstDifference = zip(rewound.samples, expected.samples).enumerated().first {
                $0.element.0 != $0.element.1
            }?.offset
            #expect(
                firstDifference == nil,
                "trial \(trial): samples after a rewind differ from one pass from frame \(firstDifference ?? -1)")
            #expect(rewound.events == expected.events, "trial \(trial): events after a rewind differ from one pass")
        }
    }

    @Test func theRingKeepsTheNewestAndFindsNoneBeforeWhatWasGivenAway() throws {
        let pattern = Pattern(name: "a", phases: [Phase("a", length: 1, cue: Cue("x"))], length: .cycles(20))
        let timeline = try Timeline(pattern: pattern, sampleRate: Self.rate)
        var renderer = SessionRenderer(
            timeline: timeline, sounds: [RenderMixTests.tail(frames: 500, level: 0.5)], channels: 1)
        var checkpoints = RenderCheckpoints(capacity: 4, for: renderer)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: Self.block)
        defer { buffer.deallocate() }
        var events = RenderEventBuffer()
        for tag in 0..<10 {
            renderer.saveCheckpoint(into: &checkpoints, tag: Int64(tag))
            _ = renderer.render(into: buffer, events: &events)
        }
        let count = checkpoints.count
        let frames = (0..<count).map { checkpoints.outputFrame(at: $0) }
        #expect(count == 4)
        #expect(frames == [600, 700, 800, 900])
        let fromStart = checkpoints.oldest(atOrAfter: 0, minimumTag: 0)
        let fromMiddle = checkpoints.oldest(atOrAfter: 750, minimumTag: 0)
        let boundedByTag = checkpoints.oldest(atOrAfter: 0, minimumTag: 9)
        let beyond = checkpoints.oldest(atOrAfter: 901, minimumTag: 0)
        #expect(fromStart == 0)
        #expect(fromMiddle == 2)
        #expect(boundedByTag == 3, "the tag bounds how far back")
        #expect(beyond == nil)
        renderer.restore(checkpoint: 1, from: &checkpoints)
        let left = checkpoints.count
        #expect(renderer.outputFrame == 700 && left == 2)
        checkpoints.removeAll()
        let afterRemoval = checkpoints.oldest(atOrAfter: 0, minimumTag: 0)
        #expect(afterRemoval == nil)
    }
}
