import CSndFile
import FoundationEssentials
import GongCore

/// A sound file's samples as found on disk, decoded to floats.
public struct DecodedSound: Sendable {
    /// Interleaved, `channels` per frame, nominally within −1…1.
    public var samples: [Float]
    public var channels: Int
    public var frames: Int
    public var sampleRate: Int
}

/// A sound ready for the mixer: at the output rate, first frame = onset. A mono file stays
/// mono (the mixer plays it on every channel, which halves the memory a bank of long gongs
/// takes); a stereo one has the output's channel count.
public struct PreparedSound: Sendable {
    public var samples: SoundSamples
    public var frames: Int
    public var channels: Int
    public var path: String
}

/// Reads a WAV, FLAC, OGG/Vorbis or AIFF file (anything libsndfile reads) into floats.
public func loadSound(path: String) throws(SoundFileError) -> DecodedSound {
    var isDirectory = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw SoundFileError(.notFound, path: path, message: "file not found")
    }
    guard !isDirectory else {
        throw SoundFileError(.unusable, path: path, message: "is a directory, not a sound file")
    }
    guard FileManager.default.isReadableFile(atPath: path) else {
        throw SoundFileError(.notFound, path: path, message: "permission denied")
    }

    var info = SF_INFO()
    guard let file = sndfileOpen(path, mode: Int32(SFM_READ), info: &info) else {
        throw SoundFileError(
            .unusable, path: path,
            message: "not a sound file libsndfile can read (WAV, FLAC, OGG/Vorbis, AIFF): \(sndfileErrorMessage(nil))")
    }
    defer { _ = sndfileClose(file) }

    let channels = Int(info.channels), rate = Int(info.samplerate), frames = Int(info.frames)
    guard (1...2).contains(channels) else {
        throw SoundFileError(.unusable, path: path, message: "has \(channels) channels; 1 or 2 are supported")
    }
    guard Timeline.sampleRates.contains(rate) else {
        throw SoundFileError(
            .unusable, path: path, message: "sample rate \(rate) Hz is outside \(Timeline.sampleRatesAllowed)")
    }
    if let promised = truncatedAudioChunk(sndfileLog(file)) {
        throw SoundFileError(
            .unusable, path: path,
            message:
                "truncated: the header promises \(promised.header) bytes of audio, the file holds \(promised.actual)")
    }
    guard frames > 0 else { throw SoundFileError(.unusable, path: path, message: "file is empty (0 frames)") }
    // A day of stereo at 384 kHz would be 66 GB of floats: cap at ten minutes, far beyond any bell.
    guard frames <= 600 * rate else {
        throw SoundFileError(
            .unusable, path: path, message: "is \(frames / rate) s long; cue sounds may be at most 10 minutes")
    }

    var samples = [Float](repeating: 0, count: frames * channels)
    let read = samples.withUnsafeMutableBufferPointer { buffer in
        buffer.baseAddress.map { sndfileReadFloatFrames(file, $0, frames: frames) } ?? 0
    }
    guard read == frames else {
        let detail = sndfileErrorCode(file) != 0 ? " (\(sndfileErrorMessage(file)))" : ""
        throw SoundFileError(
            .unusable, path: path,
            message: "truncated: header says \(frames) frames, only \(max(0, read)) could be read\(detail)")
    }
    return DecodedSound(samples: samples, channels: channels, frames: frames, sampleRate: rate)
}

/// libsndfile silently shortens a WAV or AIFF whose audio chunk is cut off, and notes it in its
/// log as `data : 96000 (should be 20000)`. A cut-off bell would play as a click, so gong refuses it.
func truncatedAudioChunk(_ log: String) -> (header: Int, actual: Int)? {
    for line in log.split(separator: "\n") {
        let trimmed = line.trimmingSpaces()
        guard trimmed.hasPrefix("data") || trimmed.hasPrefix("SSND"), let open = trimmed.firstRange(of: "(should be ")
        else {
            continue
        }
        let header = Int(
            trimmed[trimmed.index(trimmed.startIndex, offsetBy: 4)..<open.lowerBound]
                .trimming { $0 == " " || $0 == ":" })
        let actual = Int(trimmed[open.upperBound...].prefix { $0.isNumber })
        if let header, let actual, actual < header { return (header, actual) }
    }
    return nil
}

/// Loads a sound and converts it for the mixer: a stereo file is mixed down first when the
/// output is mono (cheaper to resample one channel), then the rate is converted.
///
/// With a cache, the result is looked up there first (by the file's content, the output rate and
/// channel count) and stored there once made, so the next session neither decodes nor converts.
public func prepareSound(
    path: String, outputRate: Int, outputChannels: Int,
    cache: PreparedSoundCache? = nil
) throws(SoundFileError) -> PreparedSound {
    let key = cache == nil ? nil : preparedSoundKey(path: path, outputRate: outputRate, outputChannels: outputChannels)
    if let cache, let key, let cached = cache.load(key) {
        return PreparedSound(
            samples: cached.samples, frames: cached.samples.count / cached.channels, channels: cached.channels,
            path: path)
    }
    let decoded = try loadSound(path: path)
    let channels = min(decoded.channels, outputChannels)
    let remixed = convertChannels(decoded.samples, from: decoded.channels, to: channels)
    let samples = try resample(remixed, channels: channels, from: decoded.sampleRate, to: outputRate, path: path)
    if let cache, let key {
        cache.store(samples, channels: channels, for: key)
    }
    return PreparedSound(
        samples: SoundSamples(samples), frames: samples.count / channels, channels: channels, path: path)
}

/// Mono becomes both channels; stereo becomes mono by averaging, which keeps a sound panned
/// to one side at half level rather than dropping it, and never clips.
public func convertChannels(_ samples: [Float], from input: Int, to output: Int) -> [Float] {
    guard input != output else { return samples }
    if input == 1 && output == 2 {
        var result = [Float](repeating: 0, count: samples.count * 2)
        for (index, sample) in samples.enumerated() {
            result[2 * index] = sample
            result[2 * index + 1] = sample
        }
        return result
    }
    // 2 → 1
    let frames = samples.count / 2
    var result = [Float](repeating: 0, count: frames)
    for frame in 0..<frames { result[frame] = 0.5 * (samples[2 * frame] + samples[2 * frame + 1]) }
    return result
}

/// Band-limited resampling with libsoxr (see `SoxrRecipe` for the settings and how they compare).
///
/// Same-rate input is returned untouched. soxr compensates its filter's delay, so a strike on
/// the first input frame stays on the first output frame; the test suite pins this.
public func resample(_ samples: [Float], channels: Int, from inputRate: Int, to outputRate: Int, path: String = "")
    throws(SoundFileError) -> [Float]
{
    guard inputRate != outputRate else { return samples }
    let inputFrames = samples.count / channels
    let capacity = Int((Double(inputFrames) * Double(outputRate) / Double(inputRate)).rounded(.up)) + 64
    var output = [Float](repeating: 0, count: capacity * channels)
    let result = samples.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { out in
            guard let inputBase = input.baseAddress, let outputBase = out.baseAddress else {
                return Result<Int, ResamplerFailure>.failure(ResamplerFailure(message: "empty buffer"))
            }
            return soxrResample(
                input: inputBase, inputFrames: inputFrames, inputRate: inputRate,
                output: outputBase, outputCapacity: capacity, outputRate: outputRate, channels: channels)
        }
    }
    switch result {
    case .failure(let failure):
        throw SoundFileError(
            .unusable, path: path, message: "cannot resample from \(inputRate) to \(outputRate) Hz: \(failure.message)")
    case .success(let produced):
        output.removeSubrange((produced * channels)...)
        return output
    }
}
