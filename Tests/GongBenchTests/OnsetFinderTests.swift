import Foundation
import Testing

@testable import GongBench

/// The onset finder on recordings made here, whose onsets are known to the frame.
@Suite struct OnsetFinderTests {
    /// A deterministic generator, so every run mixes the same noise.
    struct Noise {
        var state: UInt64
        mutating func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53) * 2 - 1
        }
    }

    /// Something like a woodblock: 40 ms of three inharmonic decaying partials over a short burst
    /// of decaying noise, at 48 kHz.
    static let woodblock: [Float] = {
        var noise = Noise(state: 7)
        return (0..<1920).map { index in
            let t = Double(index) / 48000
            let tone = sin(2 * .pi * 820 * t) + 0.6 * sin(2 * .pi * 1_370 * t) + 0.3 * sin(2 * .pi * 2_950 * t)
            return Float(0.5 * exp(-t / 0.008) * tone + 0.4 * exp(-t / 0.002) * noise.next())
        }
    }()

    func recording(seconds: Double, cues: [(frame: Int, gain: Float)], noiseLevel: Double = 0) -> [Float] {
        var samples = [Float](repeating: 0, count: Int(seconds * 48000))
        for cue in cues {
            for (offset, value) in Self.woodblock.enumerated() where cue.frame + offset < samples.count {
                samples[cue.frame + offset] += cue.gain * value
            }
        }
        if noiseLevel > 0 {
            var noise = Noise(state: 99)
            for index in samples.indices { samples[index] += Float(noiseLevel * noise.next()) }
        }
        return samples
    }

    @Test func cuesAtKnownFramesAreFoundOnThem() {
        let cues: [(frame: Int, gain: Float)] = [(4_800, 1), (52_813, 0.5), (100_001, 0.8), (143_999, 0.35)]
        let found = OnsetFinder(template: Self.woodblock).onsets(in: recording(seconds: 3.2, cues: cues))
        #expect(found.map(\.frame) == cues.map(\.frame))
        for (onset, cue) in zip(found, cues) {
            #expect(abs(onset.gain - Double(cue.gain)) < 0.01)
            #expect(onset.correlation > 0.99)
        }
    }

    @Test func noiseMixedInDoesNotMoveThem() {
        // The cues' peaks are about 0.5 and the noise is uniform at ±0.05 (20 dB below them).
        let cues: [(frame: Int, gain: Float)] = [(10_000, 1), (58_007, 1), (106_500, 0.7)]
        let found = OnsetFinder(template: Self.woodblock).onsets(
            in: recording(seconds: 2.6, cues: cues, noiseLevel: 0.05))
        #expect(found.map(\.frame) == cues.map(\.frame))
    }

    @Test func twoOverlappingCuesAreBothFound() {
        // The second starts 10 ms into the first, while it still rings.
        let cues: [(frame: Int, gain: Float)] = [(24_000, 1), (24_480, 0.9)]
        let found = OnsetFinder(template: Self.woodblock).onsets(
            in: recording(seconds: 1, cues: cues, noiseLevel: 0.01))
        #expect(found.map(\.frame) == [24_000, 24_480])
    }

    @Test func noiseAloneHasNoOnsets() {
        let found = OnsetFinder(template: Self.woodblock).onsets(in: recording(seconds: 2, cues: [], noiseLevel: 0.2))
        #expect(found.isEmpty)
    }

    @Test func emptyInputsFindNothing() {
        #expect(OnsetFinder(template: Self.woodblock).onsets(in: []).isEmpty)
        #expect(OnsetFinder(template: []).onsets(in: recording(seconds: 1, cues: [(100, 1)])).isEmpty)
        #expect(OnsetFinder(template: [Float](repeating: 0, count: 100)).onsets(in: [0.5, 0.1]).isEmpty)
        #expect(OnsetFinder(template: Self.woodblock).onsets(in: [Float](repeating: 0, count: 48_000)).isEmpty)
    }

    @Test func cuesAcrossBlockBoundariesAndAtTheEnds() {
        // Blocks of the correlation are 2^15 frames less the template: cues either side of the
        // first boundaries, at the very start, and cut off by the recording's end.
        let length = 6 * 48000
        let cues: [(frame: Int, gain: Float)] = [
            (0, 1), (30_800, 1), (30_850 + 1_900, 0.6), (61_700, 1), (200_000, 0.9), (length - 500, 1)
        ]
        let found = OnsetFinder(template: Self.woodblock).onsets(in: recording(seconds: 6, cues: cues))
        #expect(found.map(\.frame) == cues.map(\.frame))
    }

    @Test func theFFTInvertsAndCorrelatesAsDirectSums() {
        let fft = FFT(size: 64)
        var noise = Noise(state: 3)
        let original = (0..<64).map { _ in noise.next() }
        var re = original
        var im = [Double](repeating: 0, count: 64)
        fft.transform(real: &re, imaginary: &im)
        // Bin 0 is the sum.
        #expect(abs(re[0] - original.reduce(0, +)) < 1e-9)
        fft.transform(real: &re, imaginary: &im, inverse: true)
        for (back, value) in zip(re, original) { #expect(abs(back - value) < 1e-9) }
    }
}

@Suite struct SVGChartTests {
    @Test func aLogHistogramIsWellFormedAndLeavesOutWhatALogAxisCannotShow() throws {
        let svg = SVGChart.logHistogram(
            title: "latency <µs> & more", valueUnit: "µs",
            series: [
                ChartSeries(name: "wake-up", points: [.init(x: 0, y: 3), .init(x: 5, y: 100), .init(x: 40, y: 0)]),
                ChartSeries(name: "render", points: [.init(x: 12, y: 7), .init(x: -1, y: 2)]),
                ChartSeries(name: "empty", points: [])
            ])
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains("latency &lt;µs&gt; &amp; more"))
        #expect(svg.contains(">wake-up<") && svg.contains(">render<") && svg.contains(">empty<"))
        #expect(svg.lowercased().matches(of: /\b(nan|inf|infinity)\b/).isEmpty)
        // Two points left of the wake-up line (one at x 0, one at count 0), one of render's.
        #expect(svg.components(separatedBy: "<circle").count - 1 == 2)
        try expectWellFormed(svg)
    }

    @Test func aTimeSeriesTakesNegativeValuesOnePointAndNothing() throws {
        let svg = SVGChart.timeSeries(
            title: "error", xLabel: "s", yLabel: "ms",
            series: [
                ChartSeries(name: "gong", points: [.init(x: 0, y: 0), .init(x: 2, y: 0)]),
                ChartSeries(name: "loop", points: [.init(x: 0, y: -3.5), .init(x: 2, y: 250)]),
                ChartSeries(name: "one", points: [.init(x: 1, y: 1)])
            ])
        #expect(svg.lowercased().matches(of: /\b(nan|inf|infinity)\b/).isEmpty)
        try expectWellFormed(svg)
        let flat = SVGChart.timeSeries(title: "flat", xLabel: "s", yLabel: "ms", series: [])
        try expectWellFormed(flat)
        try expectWellFormed(SVGChart.stack([svg, flat]))
    }

    /// Every element opened is closed, in order, and every attribute value is quoted.
    private func expectWellFormed(_ svg: String) throws {
        var open: [String] = []
        let tags = svg.matches(of: /<(\/?)([a-z]+)([^>]*?)(\/?)>/)
        #expect(!tags.isEmpty)
        for tag in tags {
            let name = String(tag.2)
            if !tag.1.isEmpty {
                let last = open.popLast()
                #expect(last == name, "</\(name)> closes \(last ?? "nothing")")
            } else if tag.4.isEmpty {
                open.append(name)
            }
            #expect(tag.3.matches(of: /=[^"]/).isEmpty, "unquoted attribute in <\(name)\(tag.3)>")
        }
        #expect(open.isEmpty, "left open: \(open)")
        #expect(!svg.contains("<<"))
    }
}
