import Foundation
import GongAudio
import Testing

/// A scratch directory per test, removed afterwards.
final class ScratchDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gong-audio-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

func writeSound(
    _ samples: [Float], to path: String, format: AudioFileFormat = .wav, encoding: SampleEncoding = .float32,
    rate: Int = 48000, channels: Int = 1
) throws {
    let writer = try AudioFileWriter(
        path: path, format: format, encoding: encoding, sampleRate: rate, channels: channels)
    try samples.withUnsafeBufferPointer { try writer.write($0) }
    try writer.close()
}

/// Runs sox (installed by scripts/install-deps.sh test) to make files in formats gong does not write.
func sox(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0, "sox \(arguments.joined(separator: " "))")
}

func sine(frequency: Double, rate: Int, frames: Int, level: Float = 0.5) -> [Float] {
    (0..<frames).map { level * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
}

@Suite struct SoundFileReadWriteTests {
    @Test(arguments: [
        (AudioFileFormat.wav, SampleEncoding.pcm16), (.wav, .pcm24), (.wav, .float32), (.flac, .pcm16), (.flac, .pcm24)
    ])
    func writtenFilesReadBackWithinOneStep(format: AudioFileFormat, encoding: SampleEncoding) throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("x.\(format.rawValue)")
        let original = sine(frequency: 440, rate: 44100, frames: 44100, level: 0.9).enumerated().flatMap {
            [$0.element, -$0.element * 0.5]
        }
        try writeSound(original, to: path, format: format, encoding: encoding, rate: 44100, channels: 2)
        let decoded = try loadSound(path: path)
        #expect(decoded.channels == 2 && decoded.frames == 44100 && decoded.sampleRate == 44100)
        let step: Float =
            switch encoding {
            case .pcm16: 0.5 / 32768;
            case .pcm24: 1.0 / 8_388_607;
            case .float32: 0
            }
        let worst = zip(decoded.samples, original).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= step * 1.01)
    }

    @Test(arguments: ["ogg", "aiff"])
    func oggAndAiffFilesLoad(ext: String) throws {
        let scratch = try ScratchDirectory()
        try sox(["-n", "-r", "44100", "-c", "1", scratch.file("x.\(ext)"), "synth", "0.5", "sine", "440"])
        let decoded = try loadSound(path: scratch.file("x.\(ext)"))
        #expect(decoded.sampleRate == 44100 && decoded.channels == 1)
        #expect(abs(decoded.frames - 22050) <= 1)
    }

    @Test func monoBecomesStereoWithBothChannelsEqualAndStereoBecomesMonoByAveraging() {
        #expect(convertChannels([0.1, 0.2], from: 1, to: 2) == [0.1, 0.1, 0.2, 0.2])
        #expect(convertChannels([0.2, 0.4, -1, 1], from: 2, to: 1) == [0.3, 0])
        #expect(convertChannels([0.5], from: 1, to: 1) == [0.5])
    }

    @Test func sixteenBitConversionRoundsAndClamps() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("clip.wav")
        try writeSound([2, -2, 1, -1, 0.6 / 32768, 1.5 / 32768, 0], to: path, encoding: .pcm16)
        let decoded = try loadSound(path: path)
        let steps = decoded.samples.map { Int(($0 * 32768).rounded()) }
        #expect(steps == [32767, -32768, 32767, -32768, 1, 2, 0])
    }
}

@Suite struct ResamplingTests {
    static func zeroCrossings(_ samples: [Float]) -> Int {
        zip(samples, samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
    }

    @Test func aSineKeepsItsFrequencyAndTheLengthScales() throws {
        let input = sine(frequency: 1000, rate: 44100, frames: 44100)
        let output = try resample(input, channels: 1, from: 44100, to: 48000)
        #expect(abs(output.count - 48000) <= 1)
        // 1 kHz for one second: 2000 zero crossings at any rate.
        #expect(abs(Self.zeroCrossings(Array(output[100..<47900])) - Self.zeroCrossings(Array(input[92..<44008]))) <= 2)
        let peak = output[1000..<47000].map(abs).max() ?? 0
        #expect(abs(peak - 0.5) < 0.005, "no loss of level in the pass band")
    }

    @Test(arguments: [(44100, 48000), (48000, 44100), (22050, 96000), (96000, 48000)])
    func aStrikeOnTheFirstFrameStaysOnTheFirstFrame(from: Int, to: Int) throws {
        // A decaying tone that starts at full level on frame 0, like a bell strike.
        let input = (0..<from).map {
            Float(exp(-Double($0) / Double(from) * 8) * cos(2 * Double.pi * 300 * Double($0) / Double(from)))
        }
        let output = try resample(input, channels: 1, from: from, to: to)
        // The first output frame is the strike: nothing leaks ahead of it, and it is already loud.
        #expect(abs(output[0]) > 0.5)
        // and the envelope peaks at the start, not later (no delay).
        let firstMillisecond = to / 1000
        let loudest = output.prefix(to / 10).enumerated().max { abs($0.element) < abs($1.element) }?.offset ?? -1
        #expect(loudest <= firstMillisecond)
    }

    /// The level of `frequency` in `samples` in dB relative to a sine of amplitude `reference`:
    /// one bin of a Hann-windowed DFT, which leaks less than −200 dB from tones 1 kHz away.
    static func level(of frequency: Double, in samples: ArraySlice<Float>, rate: Int, reference: Double = 0.5) -> Double
    {
        var real = 0.0, imaginary = 0.0, windowSum = 0.0
        let count = samples.count
        for (index, sample) in samples.enumerated() {
            let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(index) / Double(count - 1))
            let phase = 2 * Double.pi * frequency * Double(index) / Double(rate)
            real += window * Double(sample) * cos(phase)
            imaginary += window * Double(sample) * sin(phase)
            windowSum += window
        }
        let amplitude = 2 * (real * real + imaginary * imaginary).squareRoot() / windowSum
        return 20 * log10(max(amplitude, 1e-30) / reference)
    }

    /// The converter's error on a pure tone, in dB below the tone: the output against the same
    /// sine computed directly at the new rate, over all but the first and last 50 ms (where the
    /// abruptly cut input rings). A wrong frequency, level or delay shows here at once. Measured:
    /// −149 to −152 dB, the limit of 32-bit floats.
    @Test(arguments: [(48000, 44100), (48000, 96000), (44100, 48000), (48000, 22050)])
    func aSineComesOutAsTheSameSineAtTheNewRate(from: Int, to: Int) throws {
        let output = try resample(sine(frequency: 1000, rate: from, frames: 2 * from), channels: 1, from: from, to: to)
        #expect(output.count == 2 * to)
        let ideal = sine(frequency: 1000, rate: to, frames: 2 * to)
        let margin = to / 20
        var squaredError = 0.0
        for index in margin..<(output.count - margin) {
            squaredError += Double(output[index] - ideal[index]) * Double(output[index] - ideal[index])
        }
        let rmsError = (squaredError / Double(output.count - 2 * margin)).squareRoot()
        let errorDB = 20 * log10(rmsError / (0.5 / 2.squareRoot()))
        #expect(errorDB < -130, "error \(errorDB) dB")
    }

    /// Going down to 44.1 kHz: tones up to 21.5 kHz (97.5 % of the new Nyquist frequency) keep
    /// their level, and tones above 22.05 kHz are removed, not folded back as aliases.
    @Test func downToFortyFourOneTheBandIsKeptAndNothingFoldsBack() throws {
        for frequency in [1000.0, 20000, 21500] {
            let output = try resample(
                sine(frequency: frequency, rate: 48000, frames: 48000), channels: 1, from: 48000, to: 44100)
            let level = Self.level(of: frequency, in: output[2000..<42100], rate: 44100)
            #expect(abs(level) < 0.05, "\(frequency) Hz at \(level) dB")
        }
        for frequency in [22500.0, 23000, 23900] {
            let output = try resample(
                sine(frequency: frequency, rate: 48000, frames: 48000), channels: 1, from: 48000, to: 44100)
            let alias = Self.level(of: 44100 - frequency, in: output[2000..<42100], rate: 44100)
            #expect(alias < -150, "\(frequency) Hz folds back to \(44100 - frequency) Hz at \(alias) dB")
        }
    }

    /// Going up to 96 kHz: the whole band up to 23 kHz keeps its level, and no image appears
    /// above the old Nyquist frequency.
    @Test func upToNinetySixTheBandIsKeptAndNoImagesAppear() throws {
        for frequency in [1000.0, 20000, 23000] {
            let output = try resample(
                sine(frequency: frequency, rate: 48000, frames: 48000), channels: 1, from: 48000, to: 96000)
            let level = Self.level(of: frequency, in: output[4000..<92000], rate: 96000)
            let image = Self.level(of: 48000 - frequency, in: output[4000..<92000], rate: 96000)
            #expect(abs(level) < 0.05, "\(frequency) Hz at \(level) dB")
            #expect(image < -150, "image of \(frequency) Hz at \(48000 - frequency) Hz: \(image) dB")
        }
    }

    @Test func theSameRatePassesThroughUntouched() throws {
        let input = sine(frequency: 1234, rate: 48000, frames: 4800)
        #expect(try resample(input, channels: 1, from: 48000, to: 48000) == input)
    }

    @Test func prepareSoundConvertsChannelsAndRateTogether() throws {
        let scratch = try ScratchDirectory()
        let mono = scratch.file("bell.flac")
        try writeSound(
            sine(frequency: 500, rate: 44100, frames: 4410), to: mono, format: .flac, encoding: .pcm24, rate: 44100)
        // A mono file stays mono for a stereo output: the mixer plays it on both channels.
        let prepared = try prepareSound(path: mono, outputRate: 48000, outputChannels: 2)
        #expect(prepared.channels == 1)
        #expect(abs(prepared.frames - 4800) <= 1)
        #expect(prepared.samples.count == prepared.frames)

        // A stereo file for a mono output is mixed down, then resampled.
        let stereo = scratch.file("wide.wav")
        let tone = sine(frequency: 500, rate: 44100, frames: 4410)
        try writeSound(
            zip(tone, tone).flatMap { [$0, $1 * 0.5] }, to: stereo, format: .wav, encoding: .float32, rate: 44100,
            channels: 2)
        let down = try prepareSound(path: stereo, outputRate: 48000, outputChannels: 1)
        #expect(down.channels == 1 && abs(down.frames - 4800) <= 1)
        let kept = try prepareSound(path: stereo, outputRate: 48000, outputChannels: 2)
        #expect(kept.channels == 2 && kept.samples.count == kept.frames * 2)
        #expect(abs(kept.samples[400] - 2 * kept.samples[401]) < 1e-4, "left and right stay apart")
    }
}

@Suite struct SoundFileErrorTests {
    static func message(_ path: String) -> String {
        do {
            _ = try loadSound(path: path)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func aMissingFileSaysNotFound() {
        #expect(Self.message("/nonexistent/bell.wav") == "cannot read sound '/nonexistent/bell.wav': file not found")
    }

    @Test func aDirectoryIsNotASound() throws {
        let scratch = try ScratchDirectory()
        #expect(Self.message(scratch.path).hasSuffix("is a directory, not a sound file"))
    }

    @Test func aTextFileNamedWavIsNotASoundFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("fake.wav")
        try "hello, I am not audio".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Self.message(path).contains("not a sound file libsndfile can read (WAV, FLAC, OGG/Vorbis, AIFF)"))
    }

    @Test func anEmptyWavIsRejected() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("empty.wav")
        try writeSound([], to: path)
        #expect(Self.message(path).hasSuffix("file is empty (0 frames)"))
    }

    @Test func aTruncatedWavSaysHowMuchIsMissing() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("cut.wav")
        try writeSound([Float](repeating: 0.25, count: 48000), to: path, encoding: .pcm16)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 44 + 2 * 10000)
        try handle.close()
        let message = Self.message(path)
        #expect(
            message
                == "cannot read sound '\(path)': truncated: the header promises 96000 bytes of audio, the file holds 20000"
        )
    }

    @Test func threeChannelsAreRejectedWithWhatIsSupported() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("three.wav")
        try sox(["-n", "-r", "48000", "-c", "3", path, "synth", "0.1", "sine", "440"])
        #expect(Self.message(path).hasSuffix("has 3 channels; 1 or 2 are supported"))
    }

    @Test func anUnwritableOutputSaysWhy() throws {
        #expect(
            throws: SoundFileError(
                .cannotCreate, path: "/nonexistent/dir/out.wav", message: "directory '/nonexistent/dir' does not exist")
        ) {
            _ = try AudioFileWriter(
                path: "/nonexistent/dir/out.wav", format: .wav, encoding: .pcm16, sampleRate: 48000, channels: 2)
        }
        #expect(throws: SoundFileError.self) {
            _ = try AudioFileWriter(
                path: "/tmp/x.flac", format: .flac, encoding: .float32, sampleRate: 48000, channels: 2)
        }
    }
}

@Suite struct LongFileTests {
    @Test func aWavFileTooLargeForFourGigabytesIsWrittenAsRF64AndReadsBack() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("day.wav")
        // A day of stereo 16-bit at 48 kHz is 16.6 GB: announced, it switches the format.
        let writer = try AudioFileWriter(
            path: path, format: .wav, encoding: .pcm16, sampleRate: 48000, channels: 2,
            expectedFrames: 86400 * 48000)
        let block = [Float](repeating: 0.25, count: 9600)
        try block.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
        let header = try #require(FileManager.default.contents(atPath: path)).prefix(4)
        #expect(String(decoding: header, as: UTF8.self) == "RF64")
        #expect(try loadSound(path: path).frames == 4800)
        // A short session stays a plain WAV that every tool reads.
        try writeSound([0.5], to: scratch.file("short.wav"), encoding: .pcm16)
        #expect(
            String(
                decoding: try #require(FileManager.default.contents(atPath: scratch.file("short.wav"))).prefix(4),
                as: UTF8.self) == "RIFF")
    }
}
