import FoundationEssentials

/// Where a cue starts in a recording, found by its own waveform.
public struct Onset: Sendable, Equatable {
    /// The recording's frame the cue's first sample landed on.
    public var frame: Int
    /// How loud it was against the template (1: as loud).
    public var gain: Double
    /// How alike the recording and the cue are there, once the cues found before are taken out
    /// (1: the cue alone).
    public var correlation: Double
}

/// Finds every onset of a known cue in a recording, to the frame, by cross-correlation with the
/// cue's own waveform — the way to judge a player by what was heard: a threshold on loudness
/// finds a cue a few frames late, later the softer it starts, and cannot tell two that overlap.
///
/// The correlation is taken by FFT (overlap-save), so a ten-minute recording costs a fraction of
/// a second. Onsets are then taken greedily, as matching pursuit does: the strongest peak is a
/// cue at that frame with gain `peak / energy`; the cue, so scaled, is taken out of the
/// recording and of the correlation (its autocorrelation, around the frame), and the next
/// strongest is looked at — so a cue that overlaps another's tail is still found at its own
/// frame. A peak is a cue only where the recording, once the cues already found are taken out,
/// is mostly the cue (normalised correlation at least `minimumCorrelation`): noise alone never
/// is. The search ends when the next peak is weaker than `minimumRelativeGain` times the
/// strongest cue found.
public struct OnsetFinder: Sendable {
    /// The cue, trimmed to where 99.9 % of its energy has arrived, at most half a second: the
    /// attack is what places it, and a shorter template sets overlapping cues apart better.
    public let template: [Float]
    public let minimumRelativeGain: Double
    public let minimumCorrelation: Double

    public init(template: [Float], minimumRelativeGain: Double = 0.25, minimumCorrelation: Double = 0.5) {
        let total = template.reduce(0.0) { $0 + Double($1) * Double($1) }
        var kept = 0
        var energy = 0.0
        while kept < template.count && energy < 0.999 * total {
            energy += Double(template[kept]) * Double(template[kept])
            kept += 1
        }
        self.template = Array(template.prefix(min(max(kept, 1), 24_000)))
        self.minimumRelativeGain = minimumRelativeGain
        self.minimumCorrelation = minimumCorrelation
    }

    /// Frames either side of a peak that was not the cue, set aside with it.
    static let rejectedSpread = 32

    /// Every onset, in order of frame.
    public func onsets(in recording: [Float]) -> [Onset] {
        let length = template.count
        let templateEnergy = template.reduce(0.0) { $0 + Double($1) * Double($1) }
        guard templateEnergy > 0, recording.count >= length, length > 0 else { return [] }
        var correlation = correlate(recording)
        let autocorrelation = autocorrelate()
        var residual = recording.map(Double.init)
        var windowEnergy = slidingEnergy(residual, window: length)
        var blocks = BlockMaxima(correlation)
        var found: [Onset] = []
        var strongest = 0.0
        var rejected = 0
        while let frame = blocks.argmax(correlation), rejected < 100_000 {
            let gain = correlation[frame] / templateEnergy
            guard gain > 0, gain >= minimumRelativeGain * strongest else { break }
            let alike = correlation[frame] / (templateEnergy * windowEnergy[frame]).squareRoot()
            guard alike >= minimumCorrelation else {
                // Not the cue here (noise, or a cue's own ringing): look past this peak and the
                // frames beside it, which belong to it.
                let spread = OnsetFinder.rejectedSpread
                for index in max(0, frame - spread)...min(correlation.count - 1, frame + spread) {
                    correlation[index] = -.infinity
                }
                blocks.update(correlation, around: frame, radius: spread)
                rejected += 1
                continue
            }
            found.append(Onset(frame: frame, gain: gain, correlation: min(1, alike)))
            strongest = max(strongest, gain)
            // Take the cue out: of the correlation, of the recording, and of its energy.
            let low = max(0, frame - length + 1)
            let high = min(correlation.count - 1, frame + length - 1)
            for index in low...high where correlation[index] > -.infinity {
                correlation[index] -= gain * autocorrelation[abs(index - frame)]
            }
            correlation[frame] = -.infinity
            for offset in 0..<length where frame + offset < residual.count {
                residual[frame + offset] -= gain * Double(template[offset])
            }
            windowEnergy.replaceSubrange(
                low...min(windowEnergy.count - 1, frame + length - 1),
                with: energies(
                    residual, window: length, from: low, through: min(windowEnergy.count - 1, frame + length - 1)))
            blocks.update(correlation, around: frame, radius: length)
        }
        return found.sorted { $0.frame < $1.frame }
    }

    /// c[n] = Σ_k recording[n + k] · template[k] for every start n in the recording (zeros
    /// past its end), by overlap-save: the convolution with the reversed template.
    private func correlate(_ recording: [Float]) -> [Double] {
        let length = template.count
        let size = FFT.size(atLeast: max(4 * length, 1 << 15))
        let fft = FFT(size: size)
        let step = size - length + 1
        var kernelRe = [Double](repeating: 0, count: size)
        var kernelIm = [Double](repeating: 0, count: size)
        for index in 0..<length { kernelRe[index] = Double(template[length - 1 - index]) }
        fft.transform(real: &kernelRe, imaginary: &kernelIm)
        var result = [Double](repeating: 0, count: recording.count)
        var blockRe = [Double](repeating: 0, count: size)
        var blockIm = [Double](repeating: 0, count: size)
        // Output y[m + length − 1] = c[m]; block b gives y[b·step ..< b·step + step] from the
        // input padded with length − 1 zeros in front.
        var start = 0
        while start < recording.count + length - 1 {
            for index in 0..<size {
                let source = start + index - (length - 1)
                blockRe[index] = source >= 0 && source < recording.count ? Double(recording[source]) : 0
                blockIm[index] = 0
            }
            fft.transform(real: &blockRe, imaginary: &blockIm)
            for index in 0..<size {
                let re = blockRe[index] * kernelRe[index] - blockIm[index] * kernelIm[index]
                let im = blockRe[index] * kernelIm[index] + blockIm[index] * kernelRe[index]
                blockRe[index] = re
                blockIm[index] = im
            }
            fft.transform(real: &blockRe, imaginary: &blockIm, inverse: true)
            for offset in 0..<step {
                let m = start + offset - (length - 1)
                if m >= 0 && m < result.count { result[m] = blockRe[length - 1 + offset] }
            }
            start += step
        }
        return result
    }

    /// R[k] = Σ_j template[j] · template[j + k], for k from 0 to the template's length − 1.
    private func autocorrelate() -> [Double] {
        let length = template.count
        let size = FFT.size(atLeast: 2 * length)
        let fft = FFT(size: size)
        var re = [Double](repeating: 0, count: size)
        var im = [Double](repeating: 0, count: size)
        for index in 0..<length { re[index] = Double(template[index]) }
        fft.transform(real: &re, imaginary: &im)
        for index in 0..<size {
            re[index] = re[index] * re[index] + im[index] * im[index]
            im[index] = 0
        }
        fft.transform(real: &re, imaginary: &im, inverse: true)
        return Array(re.prefix(length))
    }

    /// Σ x[n ..< n + window]² for every n.
    private func slidingEnergy(_ samples: [Double], window: Int) -> [Double] {
        energies(samples, window: window, from: 0, through: samples.count - 1)
    }

    private func energies(_ samples: [Double], window: Int, from first: Int, through last: Int) -> [Double] {
        guard first <= last else { return [] }
        var sum = 0.0
        for index in first..<min(samples.count, first + window) { sum += samples[index] * samples[index] }
        var result = [max(0, sum)]
        result.reserveCapacity(last - first + 1)
        for n in (first + 1)..<(last + 1) {
            let leaving = samples[n - 1]
            sum -= leaving * leaving
            if n + window - 1 < samples.count { sum += samples[n + window - 1] * samples[n + window - 1] }
            result.append(max(0, sum))
        }
        return result
    }
}

/// The largest value of each block of a long array, so the largest of all is found without
/// reading it all again after every small change.
private struct BlockMaxima {
    static let blockSize = 4096
    private var maxima: [Double]

    init(_ values: [Double]) {
        maxima = stride(from: 0, to: values.count, by: BlockMaxima.blockSize).map {
            values[$0..<min(values.count, $0 + BlockMaxima.blockSize)].max() ?? -.infinity
        }
    }

    /// Where the largest finite value is; nil when none is left.
    func argmax(_ values: [Double]) -> Int? {
        guard let block = maxima.indices.max(by: { maxima[$0] < maxima[$1] }), maxima[block] > -.infinity else {
            return nil
        }
        let start = block * BlockMaxima.blockSize
        let range = start..<min(values.count, start + BlockMaxima.blockSize)
        return range.max { values[$0] < values[$1] }
    }

    /// The blocks that hold `center ± radius` read again.
    mutating func update(_ values: [Double], around center: Int, radius: Int) {
        let first = max(0, center - radius) / BlockMaxima.blockSize
        let last = min(values.count - 1, center + radius) / BlockMaxima.blockSize
        for block in first...last {
            let start = block * BlockMaxima.blockSize
            maxima[block] = values[start..<min(values.count, start + BlockMaxima.blockSize)].max() ?? -.infinity
        }
    }
}
