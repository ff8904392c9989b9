import Testing

/// The ramp's witness proven on recordings made by hand: each cue found by its frames, and where
/// its first frame fell, whatever came before or after.
@Suite struct RampCueTests {
    static let apart = 36_000

    /// A recording with the ramp at `starts`, scaled by `gain`, 40 000 frames after the last.
    static func recording(starts: [Int], gain: Float = 0.9) -> [Float] {
        var samples = [Float](repeating: 0, count: (starts.last ?? 0) + 40_000)
        for start in starts {
            for index in 0..<RampCue.frames { samples[start + index] = Float(index + 1) * RampCue.step * gain }
        }
        return samples
    }

    @Test func eachCueIsFoundWithTheFirstOfItsFramesHeard() {
        let starts = [2_000, 2_000 + Self.apart + 256, 2_000 + 2 * Self.apart, 2_000 + 3 * Self.apart]
        var samples = Self.recording(starts: starts)
        // Cue 1: its first 416 frames dropped, silence in their place, the rest on its frame.
        for frame in starts[1]..<(starts[1] + 416) { samples[frame] = 0 }
        // Cue 2: its first 1 024 frames in a hole of the tap's own; and from its frame 10 000 on,
        // heard 512 frames later (a loss within it: the voice rings on, later).
        for frame in starts[2]..<(starts[2] + 1_024) { samples[frame] = .nan }
        let later = starts[2] + 10_000
        samples.replaceSubrange(later..<(later + 20_000), with: samples[(later - 512)..<(later + 19_488)])
        // Cue 3: its first 3 000 frames recorded by calls in doubt.
        var doubtful = [UInt8](repeating: 0, count: samples.count)
        for frame in starts[3]..<(starts[3] + 3_000) { doubtful[frame] = 1 }
        let heard = RampCue.cues(
            in: TapRecording(samples: samples, missedFrames: 0, rereadCycles: 0, doubtful: doubtful), apart: Self.apart)
        #expect(
            heard == [
                0: RampCue.Heard(start: starts[0], firstHeard: 0),
                1: RampCue.Heard(start: starts[1], firstHeard: 416),
                2: RampCue.Heard(start: starts[2], firstHeard: 1_024),
                3: RampCue.Heard(start: starts[3], firstHeard: 3_000)
            ])
    }

    /// A cue heard a quantum early or late is placed so: the witness does not round it away.
    @Test func aCueOffItsFrameByAQuantumIsPlacedOffIt() {
        let starts = [5_000, 5_000 + Self.apart - 256, 5_000 + 2 * Self.apart + 256]
        let heard = RampCue.cues(
            in: TapRecording(samples: Self.recording(starts: starts, gain: 1), missedFrames: 0, rereadCycles: 0),
            apart: Self.apart)
        #expect(heard.mapValues(\.start) == [0: starts[0], 1: starts[1], 2: starts[2]])
    }
}
