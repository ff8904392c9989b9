import GongAudio
import GongCore
import Testing

@testable import GongKit

/// A bed looped under the session: seamless at its loop point, faded, and never moving a cue.
@Suite struct BedTests {
    static func sit(bed: Bed?) -> Pattern {
        var pattern = GongSessionPullTests.short
        pattern.bed = bed
        return pattern
    }

    /// The shipped brown noise, and a chime — a struck sound that ends near silence and starts on
    /// its strike, the worst file a person could bring — each looped three times alone at 0 dB:
    /// the step across each loop point is no larger than the largest step inside the bed itself.
    @Test(arguments: ["brown-noise", "chime"])
    func theLoopPointStepsNoMoreThanTheBedItself(sound: String) throws {
        let plan = try SessionPlan(
            pattern: Pattern(name: "bed", phases: [Phase("sit", length: 40)]).with(
                bed: Bed(sound, gainDB: 0, fadeIn: 0, fadeOut: 0)),
            sampleRate: 48000, channels: 1, bank: shippedBank)
        let bed = try #require(plan.bed)
        let loop = Array(bed.sound.samples.buffer)
        let largest = zip(loop.dropFirst(), loop).map { abs($0 - $1) }.max() ?? 0
        var renderer = plan.makeRenderer()
        var events = RenderEventBuffer()
        let length = loop.count
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: length * 3 + 1)
        defer { output.deallocate() }
        _ = renderer.render(into: output, events: &events)
        for point in [length, 2 * length, 3 * length] where point < output.count {
            let step = abs(output[point] - output[point - 1])
            #expect(step <= largest, "loop point \(point): step \(step) above the bed's own \(largest)")
        }
        #expect(output[length] == loop[0] && output[length - 1] == loop[length - 1], "the loop is played as made")
    }

    /// Rendered with a bed and without: every cue on the same frame, and the difference between
    /// the two renders is the bed alone (fading in from silence on frame 0).
    @Test func cuesStayOnTheirFramesAboveTheBed() throws {
        let plain = try GongSessionPullTests.offline(Self.sit(bed: nil), gainDB: -6, rate: 48000, channels: 1)
        let bedded = try GongSessionPullTests.offline(
            Self.sit(bed: Bed("brown-noise", gainDB: -24, fadeIn: 1, fadeOut: 2)), gainDB: -6, rate: 48000, channels: 1)
        // Where each render started every cue, against its schedule: the same frames, none late.
        var started: [[Int64]] = []
        for bed in [nil, Bed("brown-noise", gainDB: -24, fadeIn: 1, fadeOut: 2)] {
            let scratch = try ScratchDirectory()
            let report = try OfflineRender.run(
                RenderRequest(pattern: Self.sit(bed: bed), outputPath: scratch.file("s.wav")), bank: shippedBank)
            #expect(report.cues.allSatisfy { $0.sessionFrame == $0.scheduledFrame })
            started.append(report.cues.map(\.sessionFrame))
        }
        #expect(started[0] == [0, 96000, 192000] && started[1] == started[0])
        #expect(bedded.count >= plain.count)
        #expect(bedded[0] == plain[0], "the bed fades in from silence")
        let bedAlone = try GongSessionPullTests.offline(
            Pattern(name: "bed", phases: [Phase("a", length: 2), Phase("b", length: 2)]).with(
                bed: Bed("brown-noise", gainDB: -24, fadeIn: 1, fadeOut: 2)), gainDB: -6, rate: 48000, channels: 1)
        var worst: Float = 0
        for index in 0..<min(bedAlone.count, plain.count) {
            worst = max(worst, abs(bedded[index] - plain[index] - bedAlone[index]))
        }
        #expect(worst < 1e-6, "the bed only adds itself: cues neither move nor change (\(worst))")
        #expect(bedAlone.count == 4 * 48000 + 2 * 48000, "the fade-out runs from the end cue for its 2 s")
    }

    /// The bed alone is heard, as made: its loop at its gain between the fades, rising from
    /// silence over the fade-in and falling to silence over the fade-out from the end. (Every bed
    /// with a fade-out was silent from its first frame until this was checked: the renders
    /// compared above were all silence where the bed should be, and agreed.)
    @Test func theBedIsItsLoopAtItsGainBetweenItsFades() throws {
        let pattern = Pattern(name: "bed", phases: [Phase("a", length: 2), Phase("b", length: 2)]).with(
            bed: Bed("brown-noise", gainDB: -24, fadeIn: 1, fadeOut: 2))
        let plan = try SessionPlan(pattern: pattern, sampleRate: 48000, channels: 1, bank: shippedBank)
        let loop = Array(try #require(plan.bed).sound.samples.buffer)
        let gain = Float(decibelsToGain(-24))
        let rendered = try GongSessionPullTests.offline(pattern, gainDB: 0, rate: 48000, channels: 1)
        #expect(rendered.count == 6 * 48000, "the fade-out runs from the end for its 2 s")
        var worst: Float = 0
        for frame in 0..<min(rendered.count, 6 * 48000) {
            let fade = min(1, Float(frame) / 48000, Float(6 * 48000 - frame) / 96000)
            worst = max(worst, abs(rendered[frame] - loop[frame % loop.count] * gain * fade))
        }
        #expect(worst < 1e-6, "the bed as its loop at its gain and fades (worst difference \(worst))")
        let peak = rendered[48000..<(4 * 48000)].map(abs).max() ?? 0
        #expect(peak > gain * 0.1, "the bed is heard between its fades (peak \(peak))")
    }

    /// The bed's fades and loop are counted per frame: any block size renders the same samples.
    @Test func aBedRendersTheSameSamplesWhateverTheBlockSize() throws {
        let scratch = try ScratchDirectory()
        var renders: [[Float]] = []
        for (index, block) in [16384, 1000, 7].enumerated() {
            var request = RenderRequest(
                pattern: Self.sit(
                    bed: Bed("brown-noise", gainDB: -12, fadeIn: Rational(1, 3)!, fadeOut: Rational(7, 4)!)),
                outputPath: scratch.file("\(index).wav"))
            request.encoding = .float32
            request.blockFrames = block
            _ = try OfflineRender.run(request, bank: shippedBank)
            renders.append(try loadSound(path: request.outputPath).samples)
        }
        #expect(renders[1] == renders[0] && renders[2] == renders[0])
    }

    @Test func aBedFileReadsItsKeysAndBadValuesAreOneLineWithFileAndLine() throws {
        let base = "[[phases]]\nname = \"sit\"\nlength = \"20m\"\n"
        let pattern = try PatternFile.parse(
            "bed = { sound = \"brown-noise\", gain = -20, fade_in = \"5s\", fade_out = \"30s\" }\n" + base,
            path: "bed.toml", defaultName: "bed")
        #expect(pattern.bed == Bed("brown-noise", gainDB: -20, fadeIn: 5, fadeOut: 30))
        #expect(
            try PatternFile.parse("bed = \"brown-noise\"\n" + base, path: "b.toml", defaultName: "b").bed
                == Bed("brown-noise"))
        func error(_ bed: String) -> String {
            do {
                _ = try PatternFile.parse("bed = \(bed)\n" + base, path: "bed.toml", defaultName: "bed")
                return "no error"
            } catch { return error.description }
        }
        #expect(
            error("{ sound = \"brown-noise\", gain = -90 }").hasPrefix("bed.toml:1: bed.gain = -90.0: is out of range"))
        #expect(
            error("{ sound = \"brown-noise\", fade_in = \"5m\" }").hasPrefix(
                "bed.toml:1: bed.fade_in = \"5m\": is out of range; use a fade from 0s to 2m"))
        #expect(
            error("{ sound = \"brown-noise\", fade_out = \"soon\" }").hasPrefix(
                "bed.toml:1: bed.fade_out = \"soon\": not a duration"))
        #expect(error("{ gain = -20 }").hasPrefix("bed.toml:1: bed.sound: missing"))
        #expect(error("{ sound = \"brown-noise\", loop = true }").hasPrefix("bed.toml:1: bed.loop: unknown key"))
        #expect(error("3").hasPrefix("bed.toml:1: bed = 3: not a bed"))
    }
}

extension Pattern {
    fileprivate func with(bed: Bed?) -> Pattern {
        var pattern = self
        pattern.bed = bed
        return pattern
    }
}
