import GongCore

/// A small deterministic generator so property tests replay exactly from a seed: the one random
/// bells are drawn from (SplitMix64).
typealias SeededGenerator = BellDraw

/// Test sounds whose onset is unmistakable: every sample is non-zero and the sound is short
/// enough (`frames`) to end before the next cue, so the first non-zero sample after silence is
/// the onset. Each sound has its own level so a mix-up of sounds shows.
func markerSounds(count: Int, frames: Int = 64, channels: Int = 1) -> [[Float]] {
    (0..<count).map { index in
        let level = 0.1 + 0.05 * Float(index % 8)
        return (0..<(frames * channels)).map { sample in level * (sample % 2 == 0 ? 1 : 0.5) }
    }
}

/// Renders a whole session in blocks of `blockFrames`, handing each produced block to `body`
/// with the output frame it starts on. Returns every event.
@discardableResult
func renderSession(
    _ renderer: inout SessionRenderer, blockFrames: Int,
    commands: [Int64: RenderCommand] = [:],
    body: (UnsafeBufferPointer<Float>, Int64) -> Void = { _, _ in }
) -> [RenderEvent] {
    let channels = renderer.channels
    let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockFrames * channels)
    defer { buffer.deallocate() }
    var eventBuffer = RenderEventBuffer()
    var events: [RenderEvent] = []
    var start: Int64 = 0
    var guardBlocks = 0
    while !renderer.isFinished {
        if let command = commands[start] { renderer.apply(command, events: &eventBuffer) }
        let produced = renderer.render(into: buffer, events: &eventBuffer)
        eventBuffer.drain(into: &events)
        body(UnsafeBufferPointer(rebasing: buffer[0..<(produced * channels)]), start)
        start += Int64(produced)
        guardBlocks += 1
        precondition(guardBlocks < 50_000_000, "render never finished")
    }
    return events
}

/// Frames at which a run of non-zero samples begins after at least one zero frame.
func onsets(in samples: [Float], channels: Int = 1) -> [Int64] {
    var result: [Int64] = []
    var previousSilent = true
    for frame in 0..<(samples.count / channels) {
        var silent = true
        for channel in 0..<channels where samples[frame * channels + channel] != 0 { silent = false }
        if previousSilent && !silent { result.append(Int64(frame)) }
        previousSilent = silent
    }
    return result
}
