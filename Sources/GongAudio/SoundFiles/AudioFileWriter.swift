import CSndFile
import FoundationEssentials

public enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav, flac

    /// The format a file name asks for, by its extension.
    public init?(path: String) {
        self.init(rawValue: URL(fileURLWithPath: path).pathExtension.lowercased())
    }
}

public enum SampleEncoding: Sendable, CaseIterable {
    case pcm16, pcm24, float32
}

/// Writes interleaved float blocks to a WAV or FLAC file through libsndfile.
///
/// 16-bit output is converted here rather than by libsndfile: a plain clamp-and-round loop over
/// a reusable buffer, written in large chunks, is what keeps an hour-long render faster than
/// the disk. No dither: the renderer's output is deterministic and reproducible sample for
/// sample, and the tails of the bank's sounds fade to true zero; use 24-bit for masters.
public final class AudioFileWriter {
    public let path: String
    public let channels: Int
    public let encoding: SampleEncoding
    private var file: OpaquePointer?
    private var shorts: UnsafeMutableBufferPointer<Int16>
    private var silence: UnsafeMutableBufferPointer<Float>
    /// Whether `shorts` holds zeros (it is reused for conversion, so silence re-zeroes it).
    private var silenceReady = false
    public private(set) var framesWritten = 0

    /// - Parameter expectedFrames: how long the file will be, when known: WAV files too large for
    ///   the 4 GiB format are then written as RF64.
    public init(
        path: String, format: AudioFileFormat, encoding: SampleEncoding, sampleRate: Int, channels: Int,
        expectedFrames: Int? = nil
    ) throws(SoundFileError) {
        guard (1...2).contains(channels) else {
            throw SoundFileError(.cannotCreate, path: path, message: "\(channels) channels; 1 or 2 are supported")
        }
        guard !(format == .flac && encoding == .float32) else {
            throw SoundFileError(
                .cannotCreate, path: path, message: "FLAC stores integers only; use 16 or 24 bits, or WAV for float")
        }
        // A WAV file cannot exceed 4 GiB (about 6 h of 16-bit stereo at 48 kHz); a longer
        // session is written as RF64, the 64-bit WAV that players read alike.
        let bytesPerSample = encoding == .pcm16 ? 2 : (encoding == .pcm24 ? 3 : 4)
        let needsRF64 = (expectedFrames ?? 0) * channels * bytesPerSample > Int(UInt32.max) - 1024
        let major = format == .flac ? SF_FORMAT_FLAC : (needsRF64 ? SF_FORMAT_RF64 : SF_FORMAT_WAV)
        let minor =
            switch encoding {
            case .pcm16: SF_FORMAT_PCM_16
            case .pcm24: SF_FORMAT_PCM_24
            case .float32: SF_FORMAT_FLOAT
            }
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = Int32(major | minor)
        guard sndfileFormatCheck(&info) else {
            throw SoundFileError(
                .cannotCreate, path: path,
                message: "libsndfile cannot write \(format.rawValue) at \(sampleRate) Hz, \(channels) channels")
        }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory else {
            throw SoundFileError(.cannotCreate, path: path, message: "directory '\(directory)' does not exist")
        }
        guard let opened = sndfileOpen(path, mode: Int32(SFM_WRITE), info: &info) else {
            let reason =
                FileManager.default.isWritableFile(atPath: directory) ? sndfileErrorMessage(nil) : "permission denied"
            throw SoundFileError(.cannotCreate, path: path, message: reason)
        }
        // Where libsndfile converts (24-bit), clip instead of wrapping around.
        _ = sndfileCommand(opened, Int32(SFC_SET_CLIPPING), flag: true)
        self.path = path
        self.channels = channels
        self.encoding = encoding
        file = opened
        shorts = .allocate(capacity: AudioFileWriter.chunkFrames * channels)
        silence = .allocate(capacity: AudioFileWriter.chunkFrames * channels)
    }

    deinit {
        if let file { _ = sndfileClose(file) }
        shorts.deallocate()
        silence.deallocate()
    }

    private static let chunkFrames = 65536

    /// Appends interleaved frames (`block.count` must be a multiple of `channels`).
    public func write(_ block: UnsafeBufferPointer<Float>) throws(SoundFileError) {
        guard let file else { throw SoundFileError(.writeFailed, path: path, message: "file already closed") }
        guard let base = block.baseAddress, !block.isEmpty else { return }
        let frames = block.count / channels
        var done = 0
        while done < frames {
            let count = min(AudioFileWriter.chunkFrames, frames - done)
            let source = base + done * channels
            let written: Int
            if encoding == .pcm16 {
                silenceReady = false
                AudioFileWriter.convertToInt16(source, into: shorts.baseAddress!, count: count * channels)
                written = sndfileWriteShortFrames(file, shorts.baseAddress!, frames: count)
            } else {
                written = sndfileWriteFloatFrames(file, source, frames: count)
            }
            guard written == count else {
                throw SoundFileError(.writeFailed, path: path, message: "\(sndfileErrorMessage(file)) (disk full?)")
            }
            done += count
        }
        framesWritten += frames
    }

    /// Appends `frames` frames of silence without converting anything.
    public func writeSilence(frames: Int) throws(SoundFileError) {
        guard let file else { throw SoundFileError(.writeFailed, path: path, message: "file already closed") }
        if !silenceReady {
            shorts.update(repeating: 0)
            silence.update(repeating: 0)
            silenceReady = true
        }
        var done = 0
        while done < frames {
            let count = min(AudioFileWriter.chunkFrames, frames - done)
            let written =
                encoding == .pcm16
                ? sndfileWriteShortFrames(file, shorts.baseAddress!, frames: count)
                : sndfileWriteFloatFrames(file, silence.baseAddress!, frames: count)
            guard written == count else {
                throw SoundFileError(.writeFailed, path: path, message: "\(sndfileErrorMessage(file)) (disk full?)")
            }
            done += count
        }
        framesWritten += frames
    }

    /// Finishes the file (headers are completed on close).
    public func close() throws(SoundFileError) {
        guard let file else { return }
        self.file = nil
        guard sndfileClose(file) == 0 else {
            throw SoundFileError(.writeFailed, path: path, message: sndfileErrorMessage(nil))
        }
    }

    /// Scale by 32768 (as libsndfile does when it reads shorts back as floats, so a round trip is
    /// within half a step), round to nearest, clamp to the 16-bit range.
    @inline(__always)
    static func convertToInt16(
        _ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Int16>, count: Int
    ) {
        for index in 0..<count {
            let scaled = min(max(source[index] * 32768, -32768), 32767)
            destination[index] = Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
        }
    }
}
