import Foundation
import GongCore
import Testing

@Suite struct RenderOnsetTests {
    /// Renders a pattern with marker sounds and checks that the onsets heard in the output are
    /// exactly the timeline's cue frames — scanning every sample as it is produced.
    static func checkOnsets(_ pattern: Pattern, rate: Int, blockFrames: Int, channels: Int = 1) throws {
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        var renderer = SessionRenderer(
            timeline: timeline, sounds: markerSounds(count: timeline.sounds.count, channels: channels),
            channels: channels)
        var heard: [Int64] = []
        var previousSilent = true
        renderSession(&renderer, blockFrames: blockFrames) { block, start in
            for frame in 0..<(block.count / channels) {
                let silent = block[frame * channels] == 0
                if previousSilent && !silent { heard.append(start + Int64(frame)) }
                previousSilent = silent
            }
        }
        // Cues on the same frame (start cue and first phase cue) are heard as one onset.
        var expected: [Int64] = []
        for onset in timeline.cueOnsets.map(\.frame) where expected.last != onset { expected.append(onset) }
        #expect(heard.count == expected.count)
        #expect(heard == expected, "every onset on its scheduled frame")
    }

    @Test(arguments: [44100, 48000, 96000])
    func anHourOfResonantBreathingHasEveryOnsetOnItsFrame(rate: Int) throws {
        var pattern = BuiltInPatterns.resonant
        pattern.length = .duration(3600)
        try Self.checkOnsets(pattern, rate: rate, blockFrames: 4096)
    }

    @Test func twoPhaseHasEveryOnsetOnItsFrame() throws {
        try Self.checkOnsets(BuiltInPatterns.twoPhase, rate: 48000, blockFrames: 256, channels: 2)
    }

    @Test func aRampHasEveryOnsetOnItsFrame() throws {
        var pattern = BuiltInPatterns.resonant
        pattern.pace = Pace(from: 6, to: Rational(9, 2)!, over: 600)
        pattern.length = .duration(900)
        try Self.checkOnsets(pattern, rate: 44100, blockFrames: 1000)
    }

    @Test func manyCuesInOneBlockEachStartAtTheirOffset() throws {
        let pattern = Pattern(
            name: "fast",
            phases: [
                Phase("a", length: Rational(1, 4)!, cue: Cue("click")),
                Phase("b", length: Rational(3, 10)!, cue: Cue("chime"))
            ],
            length: .cycles(40))
        try Self.checkOnsets(pattern, rate: 8000, blockFrames: 8192)
        try Self.checkOnsets(pattern, rate: 8000, blockFrames: 1)
    }
}

@Suite struct RenderMixTests {
    /// The reference: every sound added at its scheduled frame, nothing else.
    static func referenceMix(_ timeline: Timeline, sounds: [[Float]], length: Int) -> [Float] {
        var mix = [Float](repeating: 0, count: length)
        for (frame, trigger) in timeline.cueOnsets {
            for (offset, sample) in sounds[Int(trigger.sound)].enumerated() where Int(frame) + offset < length {
                mix[Int(frame) + offset] += sample * trigger.gain
            }
        }
        return mix
    }

    static func renderAll(
        _ timeline: Timeline, sounds: [[Float]], blockFrames: Int, masterGainDB: Double = 0,
        commands: [Int64: RenderCommand] = [:]
    ) -> (samples: [Float], events: [RenderEvent]) {
        var renderer = SessionRenderer(timeline: timeline, sounds: sounds, channels: 1, masterGainDB: masterGainDB)
        var output: [Float] = []
        let events = renderSession(&renderer, blockFrames: blockFrames, commands: commands) { block, _ in
            output.append(contentsOf: block)
        }
        return (output, events)
    }

    /// A decaying tone, quiet enough that the limiter never engages: the mix is then exactly linear.
    static func tail(frames: Int, level: Float) -> [Float] {
        (0..<frames).map { i in
            level * Float(1 - Double(i) / Double(frames)) * (i % 3 == 0 ? 1 : -0.5) + (i == 0 ? 0.01 : 0)
        }
    }

    @Test func aTailRingingAcrossPhaseBoundariesAndTheEndIsNeverCut() throws {
        let pattern = Pattern(
            name: "tails", phases: [Phase("a", length: 1, cue: Cue("long")), Phase("b", length: 1, cue: Cue("short"))],
            length: .cycles(3), endCue: Cue("end"))
        let rate = 8000
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        let sounds = [
            Self.tail(frames: 3 * rate + 17, level: 0.1), Self.tail(frames: 500, level: 0.1),
            Self.tail(frames: 5 * rate + 3, level: 0.1)
        ]
        let (samples, events) = Self.renderAll(timeline, sounds: sounds, blockFrames: 333)
        // The session lasts until the end cue has rung out completely.
        #expect(samples.count == Int(timeline.plannedEndFrame) + sounds[2].count)
        let reference = Self.referenceMix(timeline, sounds: sounds, length: samples.count)
        #expect(samples == reference)
        #expect(samples.last == sounds[2].last)
        #expect(events.last?.kind == .finished)
        #expect(events.last?.outputFrame == Int64(samples.count))
    }

    @Test func overlappingLoudCuesNeverClip() throws {
        let pattern = Pattern(
            name: "loud", phases: [Phase("a", length: Rational(1, 4)!, cue: Cue("x", gainDB: 12))], length: .cycles(20))
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        let (samples, _) = Self.renderAll(
            timeline, sounds: [[Float](repeating: 0.9, count: 8000)], blockFrames: 64, masterGainDB: 6)
        #expect(samples.map(abs).max() ?? 0 <= SessionRenderer.ceiling + 1e-6)
        #expect(samples.map(abs).max() ?? 0 > 0.9, "the limiter holds the peak at the ceiling, not far below")
    }

    @Test func masterGainScalesTheMix() throws {
        let pattern = Pattern(name: "gain", phases: [Phase("a", length: 1, cue: Cue("x"))], length: .cycles(1))
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        let sound = Self.tail(frames: 100, level: 0.5)
        let (samples, _) = Self.renderAll(timeline, sounds: [sound], blockFrames: 64, masterGainDB: -20)
        for (rendered, original) in zip(samples, sound) { #expect(abs(rendered - original * 0.1) < 1e-6) }
    }

    /// The renderer plays from the sound's own memory, not a copy, and keeps it alive after the
    /// caller has let go of it; the memory is given back when the renderer goes.
    @Test func theRendererPlaysTheSoundsOwnSamplesAndHoldsThemWhileItLives() throws {
        let pattern = Pattern(name: "held", phases: [Phase("a", length: 1, cue: Cue("x"))], length: .cycles(1))
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        let original = Self.tail(frames: 700, level: 0.5)
        weak var held: SoundSamples?
        var renderer: SessionRenderer
        do {
            let samples = SoundSamples(original)
            held = samples
            renderer = SessionRenderer(
                timeline: timeline, sounds: [RenderSound(samples: samples, channels: 1)], channels: 1)
        }
        #expect(held != nil, "the renderer holds the sound")
        var output: [Float] = []
        renderSession(&renderer, blockFrames: 64) { block, _ in output.append(contentsOf: block) }
        #expect(Array(output.prefix(original.count)) == original)
        _ = consume renderer
        #expect(held == nil, "and lets it go with itself")
    }

    @Test func aSoundWhoseFillFailsIsNoSound() {
        var offered = 0
        let refused = SoundSamples(count: 10) { buffer in
            offered = buffer.count
            return false
        }
        #expect(refused == nil)
        #expect(offered == 10)
        let filled = SoundSamples(count: 3) { buffer in
            for index in buffer.indices { buffer[index] = Float(index) }
            return true
        }
        #expect(filled.map(Array.init) == [0, 1, 2])
    }

    @Test func moreOverlappingSoundsThanVoicesStealsTheOldestAndSaysSo() throws {
        let pattern = Pattern(
            name: "crowd", phases: [Phase("a", length: Rational(1, 4)!, cue: Cue("x"))], length: .cycles(80))
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        var renderer = SessionRenderer(
            timeline: timeline, sounds: [Self.tail(frames: 8000 * 30, level: 0.001)], channels: 1, voiceCapacity: 64)
        let events = renderSession(&renderer, blockFrames: 512)
        let stolen = events.filter { if case .voiceStolen = $0.kind { true } else { false } }
        #expect(stolen.count == 80 - 64)
    }

    /// The limiter as specified, one frame at a time: master gain, then gain reduction that
    /// holds the peak at the ceiling and recovers over 100 ms, reset by a silent frame.
    static func referenceLimiter(_ mix: [Float], channels: Int, gain: Float, rate: Int) -> [Float] {
        let release = Float(1 / (0.1 * Double(rate)))
        var limiter: Float = 1
        var output = mix
        for frame in 0..<(mix.count / channels) {
            var peak: Float = 0
            for channel in 0..<channels {
                output[frame * channels + channel] *= gain
                peak = max(peak, abs(output[frame * channels + channel]))
            }
            if peak == 0 {
                limiter = 1
            } else {
                if limiter < 1 {
                    // Recovered once a step no longer moves it (it would stop a rounding step short of 1).
                    let next = limiter + (1 - limiter) * release
                    limiter = next > limiter ? min(1, next) : 1
                }
                if peak * limiter > SessionRenderer.ceiling { limiter = SessionRenderer.ceiling / peak }
            }
            if limiter != 1 { for channel in 0..<channels { output[frame * channels + channel] *= limiter } }
        }
        return output
    }

    /// Quiet stretches take a shortcut (one multiply, no per-frame limiter); loud ones the
    /// per-frame path. Both must give exactly what the limiter's definition gives.
    @Test(arguments: [-20.0, 0.0, 9.0])
    func theMixAndLimiterMatchTheirDefinitionExactly(masterGainDB: Double) throws {
        let pattern = Pattern(
            name: "swell",
            phases: [
                Phase("a", length: Rational(1, 2)!, cue: Cue("x")),
                Phase("b", length: Rational(3, 10)!, cue: Cue("y", gainDB: -3))
            ],
            length: .cycles(6))
        let rate = 8000
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        // Swells that cross the ceiling at +9 dB and stay far below it at −20 dB.
        let swell: [Float] = (0..<6000).map { (i: Int) -> Float in
            let envelope = Float(6000 - i) / 6000
            return 0.35 * sinf(Float(i) * 0.05) * envelope
        }
        let gapped: [Float] = (0..<2500).map { (i: Int) -> Float in i % 7 == 0 ? 0 : 0.5 * cosf(Float(i) * 0.013) }
        let sounds = [swell, gapped]
        let (samples, _) = Self.renderAll(timeline, sounds: sounds, blockFrames: 97, masterGainDB: masterGainDB)
        let mix = Self.referenceMix(timeline, sounds: sounds, length: samples.count)
        let expected = Self.referenceLimiter(mix, channels: 1, gain: decibelsToGain(masterGainDB), rate: rate)
        #expect(samples == expected)
        if masterGainDB > 0 {
            let peak = samples.map(abs).max() ?? 0
            #expect(peak > 0.9 && peak <= SessionRenderer.ceiling + 1e-6, "the limiter engaged and held the ceiling")
        }
    }

    /// After limiting, the gain comes all the way back: a long tail that never falls silent is
    /// played at exactly the master gain once the limiter has recovered. (The recovery step used
    /// to round away a little short of 1, about −0.001 dB, and then every later frame of the
    /// tail took the limiter's frame-by-frame path for nothing.)
    @Test func theLimiterRecoversFullyUnderAToneThatNeverFallsSilent() throws {
        let pattern = Pattern(
            name: "burst", phases: [Phase("a", length: Rational(4), cue: Cue("x"))], length: .cycles(1))
        let rate = 8000
        let timeline = try Timeline(pattern: pattern, sampleRate: rate)
        // A burst far over the ceiling, then three seconds of a quiet tone that is never zero.
        let sound: [Float] = (0..<(4 * rate)).map { (i: Int) -> Float in
            i < 200 ? 0.9 : 0.01 * (1.5 + sinf(Float(i) * 0.05))
        }
        let gain = decibelsToGain(6)
        let (samples, _) = Self.renderAll(timeline, sounds: [sound], blockFrames: 256, masterGainDB: 6)
        let mix = Self.referenceMix(timeline, sounds: [sound], length: samples.count)
        #expect(samples == Self.referenceLimiter(mix, channels: 1, gain: gain, rate: rate))
        // The last second: the tone at the master gain exactly, the limiter long gone.
        let lastSecond = (3 * rate)..<(4 * rate)
        #expect(samples.count >= lastSecond.upperBound)
        #expect(Array(samples[lastSecond]) == lastSecond.map { mix[$0] * gain })
        #expect(samples[0..<200].allSatisfy { abs($0) <= SessionRenderer.ceiling + 1e-6 }, "the burst was limited")
    }

    /// Mono sounds stay mono in memory and play on every channel: the output is bit-identical to
    /// mixing the same sounds duplicated to every channel, loud or quiet, stereo or more.
    @Test(arguments: [(-6.0, 2), (12.0, 2), (-6.0, 4)])
    func aMonoSoundIsTheSameSoundOnEveryChannel(masterGainDB: Double, channels: Int) throws {
        let pattern = Pattern(
            name: "pair",
            phases: [
                Phase("a", length: Rational(1, 4)!, cue: Cue("mono")),
                Phase("b", length: Rational(3, 10)!, cue: Cue("wide"))
            ],
            length: .cycles(8), endCue: Cue("mono"))
        let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
        let mono = Self.tail(frames: 3000, level: 0.6)
        let wide: [Float] = (0..<1800).flatMap { (i: Int) -> [Float] in
            (0..<channels).map { channel in 0.5 * sinf(Float(i) * (0.1 + 0.03 * Float(channel))) }
        }
        func render(_ sounds: [RenderSound]) -> [Float] {
            var renderer = SessionRenderer(
                timeline: timeline, sounds: sounds, channels: channels, masterGainDB: masterGainDB)
            var output: [Float] = []
            renderSession(&renderer, blockFrames: 300) { block, _ in output.append(contentsOf: block) }
            return output
        }
        let fromMono = render([RenderSound(samples: mono, channels: 1), RenderSound(samples: wide, channels: channels)])
        let duplicated = mono.flatMap { Array(repeating: $0, count: channels) }
        let fromStereo = render([
            RenderSound(samples: duplicated, channels: channels), RenderSound(samples: wide, channels: channels)
        ])
        #expect(fromMono.count == fromStereo.count && fromMono.count > 0)
        #expect(fromMono == fromStereo)
    }

    @Test func theSameSamplesComeOutWhateverTheBlockSize() throws {
        var generator = SeededGenerator(seed: 0x60_6E_67)
        for trial in 0..<12 {
            let pattern = RandomPatterns.make(using: &generator)
            let rate = [8000, 11025, 16000][trial % 3]
            let timeline = try Timeline(pattern: pattern, sampleRate: rate)
            let sounds = (0..<timeline.sounds.count).map { index in
                Self.tail(frames: Int.random(in: 50...(rate * 3), using: &generator), level: 0.3 + 0.1 * Float(index))
            }
            let sizes = [
                1, Int.random(in: 2...300, using: &generator), Int.random(in: 301...8192, using: &generator), 8192
            ]
            let reference = Self.renderAll(timeline, sounds: sounds, blockFrames: sizes[0]).samples
            for size in sizes.dropFirst() {
                let other = Self.renderAll(timeline, sounds: sounds, blockFrames: size).samples
                #expect(other == reference, "trial \(trial): block size \(size) differs from block size 1")
            }
        }
    }

    @Test func everyCueFiresExactlyOnceOnItsFrameForRandomPatterns() throws {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<40 {
            let pattern = RandomPatterns.make(using: &generator)
            let timeline = try Timeline(pattern: pattern, sampleRate: 8000)
            let frames = timeline.phaseBoundaries.map(\.frame)
            #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 < $1 }, "boundaries strictly increase")
            var renderer = SessionRenderer(
                timeline: timeline, sounds: markerSounds(count: timeline.sounds.count), channels: 1)
            let events = renderSession(&renderer, blockFrames: Int.random(in: 1...8192, using: &generator))
            let started = events.compactMap { event -> Int64? in
                guard case .cueStarted(_, let scheduled) = event.kind else { return nil }
                #expect(event.sessionFrame == scheduled)
                return scheduled
            }
            #expect(started == timeline.cueOnsets.map(\.frame))
        }
    }
}

/// Random but valid patterns for property tests.
enum RandomPatterns {
    static func make(using generator: inout SeededGenerator) -> Pattern {
        let sounds = ["gong", "bowl", "chime", "click"]
        let phaseCount = Int.random(in: 1...5, using: &generator)
        let paced = Bool.random(using: &generator)
        var phases: [Phase] = []
        for index in 0..<phaseCount {
            let tenths = Int64.random(in: 3...60, using: &generator)
            let cue =
                Int.random(in: 0...3, using: &generator) == 0
                ? nil
                : Cue(
                    sounds.randomElement(using: &generator) ?? "gong",
                    gainDB: Double(Int.random(in: -12...0, using: &generator)))
            var phase = Phase("p\(index)", length: Rational(tenths, 10) ?? 1, cue: cue)
            if !paced, tenths > 30, Bool.random(using: &generator) {
                phase.bell = IntervalBell(every: 1, cue: Cue("bell"))
            }
            phases.append(phase)
        }
        var pattern = Pattern(
            name: "random", phases: phases, length: .cycles(Int.random(in: 1...12, using: &generator)),
            endCue: Cue("end"))
        if Bool.random(using: &generator) {
            pattern.warmUp = Rational(Int64.random(in: 0...30, using: &generator), 10) ?? 0
        }
        if Bool.random(using: &generator) { pattern.startCue = Cue("start") }
        if paced {
            // Keep every phase ≥ 0.25 s: the shortest share is ≥ 0.3/(5 × 6) of the breath.
            let bpm = Rational(Int64.random(in: 20...80, using: &generator), 10) ?? 6
            pattern.pace =
                Bool.random(using: &generator) ? Pace(bpm: bpm) : Pace(from: bpm, to: Rational(40, 10)!, over: 60)
            let breath = 60 / max(bpm.doubleValue, 4)
            let total = phases.reduce(0) { $0 + $1.length.doubleValue }
            let shortest = phases.map(\.length.doubleValue).min() ?? 1
            if shortest / total * breath < 0.25 { pattern.pace = nil }
        }
        return pattern
    }
}
