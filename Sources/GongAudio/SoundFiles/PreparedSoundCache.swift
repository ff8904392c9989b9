import Foundation
import GongCore

#if canImport(Glibc)
    import Glibc
#endif

/// Sounds already decoded and converted for an output (its rate and channel count), kept on disk
/// so that a session starts without doing either again: converting and decoding a bank sound
/// costs tens of milliseconds of CPU, reading an entry back a few. Sounds at the output's own
/// rate are kept too, since decoding alone would delay the first frame noticeably
/// (docs/benchmarks.md, "Start-up").
///
/// An entry is named by the hash of the sound file's bytes, the output rate and the channel count
/// asked for, so an edited or replaced file simply misses. Entries are written to a temporary
/// file and renamed into place, so a reader never sees half an entry, and every entry is checked
/// before it is used — magic, format version, what it was made from, by which converter, its
/// length and a checksum of its samples — so a damaged, truncated or foreign file is ignored and
/// written again. The cache is an optimisation only: a directory that cannot be created or
/// written means no cache, never an error.
public struct PreparedSoundCache: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// What a conversion was made from and for.
    public struct Key: Hashable, Sendable {
        /// A hash of the sound file's bytes (see `preparedSoundKey`), and their count.
        public var contentHash: UInt64
        public var byteCount: Int
        public var outputRate: Int
        /// The output's channel count: a mono file converted for a stereo output stays mono.
        public var outputChannels: Int
    }

    /// The file an entry for `key` lives in.
    public func entryPath(for key: Key) -> String {
        directory + "/" + String(key.contentHash, radix: 16)
            + "-\(key.byteCount)-\(key.outputRate)Hz-\(key.outputChannels)ch.f32"
    }

    /// The samples stored for `key` (interleaved, `channels` per frame), or nil when there is no
    /// entry or it is not one this build of gong wrote for exactly this key.
    public func load(_ key: Key) -> (samples: SoundSamples, channels: Int)? {
        guard Self.samplesAreLittleEndian else { return nil }
        let descriptor = open(entryPath(for: key), O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }

        var headerBytes = [UInt8](repeating: 0, count: EntryHeader.size)
        guard headerBytes.withUnsafeMutableBytes({ readFully(descriptor, $0) }),
            let header = EntryHeader(headerBytes),
            header.matches(key),
            Int(status.st_size) == EntryHeader.size + header.sampleCount * MemoryLayout<Float>.size
        else { return nil }

        // Read straight into the memory the session will play from: no copy after this one.
        let samples = SoundSamples(count: header.sampleCount) { buffer in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            return readFully(descriptor, bytes) && XXHash64.hash(UnsafeRawBufferPointer(bytes)) == header.checksum
        }
        return samples.map { ($0, header.channels) }
    }

    /// Stores `samples` for `key`, replacing any entry there. Returns whether it was written;
    /// a failure (read-only or full disk, no permission) leaves no temporary file behind.
    @discardableResult
    public func store(_ samples: [Float], channels: Int, for key: Key) -> Bool {
        guard Self.samplesAreLittleEndian, (1...2).contains(channels), channels <= key.outputChannels, !samples.isEmpty,
            samples.count % channels == 0
        else { return false }
        guard (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil
        else { return false }
        let header = samples.withUnsafeBytes { payload in
            EntryHeader(
                key: key, channels: channels, frames: samples.count / channels, checksum: XXHash64.hash(payload))
        }
        let finalPath = entryPath(for: key)
        let temporaryPath = directory + "/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        let written =
            header.bytes.withUnsafeBytes { writeFully(descriptor, $0) }
            && samples.withUnsafeBytes { writeFully(descriptor, $0) }
        let closed = close(descriptor) == 0
        guard written, closed, rename(temporaryPath, finalPath) == 0 else {
            unlink(temporaryPath)
            return false
        }
        return true
    }

    /// Everything that identifies how an entry's samples were made: a different converter or
    /// setting makes every entry foreign.
    static let converterIdentity = XXHash64.hash(SoxrRecipe.identity)

    /// Entries hold the samples as they are in memory, which is little-endian on every platform
    /// Swift runs Linux on; elsewhere there is no cache rather than a wrong one.
    static let samplesAreLittleEndian = 1.littleEndian == 1
}

/// The 64 bytes an entry starts with, little-endian, followed by its samples as 32-bit floats.
struct EntryHeader {
    static let size = 64
    static let magic: [UInt8] = Array("GONGSNDS".utf8)
    /// Raised whenever the layout or the meaning of an entry changes.
    static let formatVersion: UInt32 = 1
    /// The longest sound gong accepts (ten minutes at 384 kHz, stereo): a header that claims more
    /// is damaged, and no allocation is made for it.
    static let maximumSamples = 600 * 384_000 * 2

    var contentHash: UInt64
    var byteCount: UInt64
    var outputRate: UInt64
    var outputChannels: UInt32
    var channels: Int
    var frames: Int
    var converter: UInt64
    var checksum: UInt64

    var sampleCount: Int { frames * channels }

    init(key: PreparedSoundCache.Key, channels: Int, frames: Int, checksum: UInt64) {
        contentHash = key.contentHash
        byteCount = UInt64(key.byteCount)
        outputRate = UInt64(key.outputRate)
        outputChannels = UInt32(key.outputChannels)
        self.channels = channels
        self.frames = frames
        converter = PreparedSoundCache.converterIdentity
        self.checksum = checksum
    }

    /// Parses a header, or nil for anything that is not one: wrong magic or version, or counts
    /// out of range.
    init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.size, Array(bytes[0..<8]) == Self.magic else { return nil }
        func integer<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        }
        guard integer(8, UInt32.self) == Self.formatVersion else { return nil }
        let channels = Int(integer(12, UInt32.self))
        let frames = integer(24, UInt64.self)
        guard (1...2).contains(channels), frames > 0, frames <= UInt64(Self.maximumSamples / channels) else {
            return nil
        }
        outputChannels = integer(16, UInt32.self)
        self.channels = channels
        outputRate = UInt64(integer(20, UInt32.self))
        self.frames = Int(frames)
        contentHash = integer(32, UInt64.self)
        byteCount = integer(40, UInt64.self)
        converter = integer(48, UInt64.self)
        checksum = integer(56, UInt64.self)
    }

    var bytes: [UInt8] {
        var bytes = Self.magic
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        append(Self.formatVersion)  // 8
        append(UInt32(channels))  // 12
        append(outputChannels)  // 16
        append(UInt32(outputRate))  // 20
        append(UInt64(frames))  // 24
        append(contentHash)  // 32
        append(byteCount)  // 40
        append(converter)  // 48
        append(checksum)  // 56
        return bytes
    }

    func matches(_ key: PreparedSoundCache.Key) -> Bool {
        contentHash == key.contentHash && byteCount == UInt64(key.byteCount) && outputRate == UInt64(key.outputRate)
            && outputChannels == UInt32(key.outputChannels) && channels <= key.outputChannels
            && converter == PreparedSoundCache.converterIdentity
    }
}

/// The key for a sound file as it is now, or nil when it cannot be read (the decoder then
/// reports why). The content hash is XXH64 of the XXH64s of the file's 64 KiB pieces: read piece
/// by piece, so a long file is never held whole and a file cut short while it is read is a miss,
/// not a crash (as a memory map would make it).
func preparedSoundKey(path: String, outputRate: Int, outputChannels: Int) -> PreparedSoundCache.Key? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, status.st_size > 0 else { return nil }
    let size = Int(status.st_size)
    let pieceSize = 1 << 16
    let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 16)
    defer { piece.deallocate() }
    var pieceHashes: [UInt64] = []
    pieceHashes.reserveCapacity(size / pieceSize + 1)
    var offset = 0
    while offset < size {
        let part = UnsafeMutableRawBufferPointer(rebasing: piece[0..<min(pieceSize, size - offset)])
        guard readFully(descriptor, part) else { return nil }
        pieceHashes.append(XXHash64.hash(UnsafeRawBufferPointer(part)))
        offset += part.count
    }
    let contentHash = pieceHashes.withUnsafeBytes { XXHash64.hash($0, seed: UInt64(size)) }
    return PreparedSoundCache.Key(
        contentHash: contentHash, byteCount: size, outputRate: outputRate, outputChannels: outputChannels)
}

/// Reads until `buffer` is full; false on an error or an early end of file.
private func readFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Bool {
    guard let base = buffer.baseAddress else { return buffer.isEmpty }
    var done = 0
    while done < buffer.count {
        let result = read(descriptor, base + done, buffer.count - done)
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { return false }
        done += result
    }
    return true
}

private func writeFully(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
    guard let base = buffer.baseAddress else { return buffer.isEmpty }
    var done = 0
    while done < buffer.count {
        let result = write(descriptor, base + done, buffer.count - done)
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { return false }
        done += result
    }
    return true
}
