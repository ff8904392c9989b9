import Foundation
import Testing

@testable import GongAudio

@Suite struct ContentHashTests {
    /// Reference values from `xxhsum -H1` (xxHash 0.8.1); the 46-byte text takes every branch:
    /// the 32-byte stripes, an 8-byte word, a 4-byte word and single bytes.
    @Test(arguments: [
        ("", 0xEF46_DB37_51D8_E999 as UInt64), ("abc", 0x44BC_2CF5_AD77_0999),
        ("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", 0x4EFD_B622_D9F9_5091)
    ])
    func xxHash64MatchesTheReferenceImplementation(text: String, expected: UInt64) {
        #expect(XXHash64.hash(text) == expected)
    }
}

@Suite struct PreparedSoundCacheTests {
    /// A bell-like tone at 48 kHz written as FLAC, and a cache in the same scratch directory.
    struct Fixture {
        let scratch: ScratchDirectory
        let sound: String
        let cache: PreparedSoundCache

        init(seconds: Double = 0.5) throws {
            scratch = try ScratchDirectory()
            sound = scratch.file("bell.flac")
            let frames = Int(48000 * seconds)
            let tone = (0..<frames).map {
                Float(0.7 * exp(-Double($0) / 9600) * cos(2 * Double.pi * 440 * Double($0) / 48000))
            }
            try writeSound(tone, to: sound, format: .flac, encoding: .pcm24)
            cache = PreparedSoundCache(directory: scratch.file("cache/gong/sounds"))
        }

        func key(rate: Int = 44100, channels: Int = 2) throws -> PreparedSoundCache.Key {
            try #require(preparedSoundKey(path: sound, outputRate: rate, outputChannels: channels))
        }

        var entries: [String] { (try? FileManager.default.contentsOfDirectory(atPath: cache.directory)) ?? [] }
    }

    @Test func aCacheHitGivesTheSamplesOfAFreshConversion() throws {
        let fixture = try Fixture()
        let fresh = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2)
        let first = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        #expect(
            fixture.entries == [
                URL(fileURLWithPath: fixture.cache.entryPath(for: try fixture.key())).lastPathComponent
            ],
            "one entry, no temporary file left")
        let cached = try #require(fixture.cache.load(try fixture.key()))
        let second = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        #expect(cached.samples == fresh.samples && cached.channels == 1)
        #expect(first.samples == fresh.samples && second.samples == fresh.samples)
        #expect(second.frames == fresh.frames && second.channels == fresh.channels)
    }

    /// The key reads a long file in pieces: the same bytes give the same key, one changed byte
    /// in a later piece another.
    @Test func theKeyFollowsEveryByteOfALongFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("long.bin")
        var bytes = (0..<(2_500_000)).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let key = try #require(preparedSoundKey(path: path, outputRate: 44100, outputChannels: 2))
        #expect(preparedSoundKey(path: path, outputRate: 44100, outputChannels: 2) == key)
        #expect(key.byteCount == 2_500_000)
        bytes[2_000_001] ^= 1  // in the 31st of 39 pieces
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(preparedSoundKey(path: path, outputRate: 44100, outputChannels: 2)?.contentHash != key.contentHash)
    }

    @Test func aValidEntryIsUsedInsteadOfConvertingAgain() throws {
        let fixture = try Fixture()
        // Samples no conversion of this file would give: if they come back, the entry was read.
        let marker = [Float](repeating: 0.25, count: 1000)
        #expect(fixture.cache.store(marker, channels: 1, for: try fixture.key()))
        let prepared = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        #expect(Array(prepared.samples) == marker && prepared.frames == 1000 && prepared.channels == 1)
    }

    @Test func aChangedFileMissesAndIsConvertedAfresh() throws {
        let fixture = try Fixture()
        _ = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        try writeSound(
            sine(frequency: 1000, rate: 48000, frames: 4800), to: fixture.sound, format: .flac, encoding: .pcm24)
        let fresh = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2)
        let prepared = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        #expect(prepared.samples == fresh.samples)
        #expect(fixture.entries.count == 2, "the old file's entry and the new one's")
    }

    @Test func eachRateAndChannelCountHasItsOwnEntry() throws {
        let fixture = try Fixture()
        for (rate, channels) in [(44100, 2), (96000, 2), (44100, 1)] {
            let fresh = try prepareSound(path: fixture.sound, outputRate: rate, outputChannels: channels)
            _ = try prepareSound(path: fixture.sound, outputRate: rate, outputChannels: channels, cache: fixture.cache)
            let cached = try prepareSound(
                path: fixture.sound, outputRate: rate, outputChannels: channels, cache: fixture.cache)
            #expect(cached.samples == fresh.samples && cached.frames == fresh.frames)
        }
        #expect(fixture.entries.count == 3)
    }

    @Test func aFileAtTheOutputRateIsKeptDecoded() throws {
        let fixture = try Fixture()
        let decoded = try loadSound(path: fixture.sound)
        _ = try prepareSound(path: fixture.sound, outputRate: 48000, outputChannels: 2, cache: fixture.cache)
        let cached = try #require(fixture.cache.load(try fixture.key(rate: 48000)))
        let prepared = try prepareSound(path: fixture.sound, outputRate: 48000, outputChannels: 2, cache: fixture.cache)
        #expect(
            Array(cached.samples) == decoded.samples && Array(prepared.samples) == decoded.samples
                && prepared.frames == 24000)
    }

    /// Ways an entry on disk can be wrong, each applied to a good entry's bytes.
    enum Damage: String, CaseIterable {
        case flippedSample, truncatedSamples, truncatedHeader, empty, garbage, wrongMagic, newerFormat,
            framesBeyondAnySound, otherConverter, otherFilesEntry, extraBytes

        func apply(to entry: inout [UInt8], otherEntry: [UInt8]) {
            switch self {
            case .flippedSample: entry[EntryHeader.size + 4 * 100 + 1] ^= 0x10
            case .truncatedSamples: entry.removeLast(4 * 37)
            case .truncatedHeader: entry = Array(entry.prefix(20))
            case .empty: entry = []
            case .garbage: entry = (0..<entry.count).map { _ in UInt8.random(in: 0...255) }
            case .wrongMagic: entry[0] = UInt8(ascii: "X")
            case .newerFormat: entry[8] &+= 1
            case .framesBeyondAnySound: entry.replaceSubrange(24..<32, with: [UInt8](repeating: 0xFF, count: 8))
            case .otherConverter: entry[48] ^= 0x01
            case .otherFilesEntry: entry = otherEntry
            case .extraBytes: entry += [0, 0, 0, 0]
            }
        }
    }

    @Test(arguments: Damage.allCases)
    func aDamagedEntryIsIgnoredAndRebuilt(damage: Damage) throws {
        let fixture = try Fixture()
        let key = try fixture.key()
        let path = fixture.cache.entryPath(for: key)
        let fresh = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2)
        _ = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))

        // Another sound's valid entry, copied under this one's name.
        let other = fixture.scratch.file("other.wav")
        try writeSound(sine(frequency: 300, rate: 48000, frames: 9600), to: other)
        let otherKey = try #require(preparedSoundKey(path: other, outputRate: 44100, outputChannels: 2))
        _ = try prepareSound(path: other, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        let otherEntry = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture.cache.entryPath(for: otherKey))))

        var damaged = good
        damage.apply(to: &damaged, otherEntry: otherEntry)
        #expect(damaged != good)
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        #expect(fixture.cache.load(key) == nil, "the damaged entry is not trusted")

        let prepared = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
        #expect(prepared.samples == fresh.samples && prepared.frames == fresh.frames)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == good, "the entry was written again")
    }

    @Test(arguments: ["a regular file", "under a regular file"])
    func aCacheThatCannotBeWrittenMeansNoCache(where place: String) throws {
        let fixture = try Fixture()
        let blocker = fixture.scratch.file("blocker")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: blocker))
        let cache = PreparedSoundCache(directory: place == "a regular file" ? blocker : blocker + "/gong/sounds")
        let fresh = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2)
        for _ in 0..<2 {
            let prepared = try prepareSound(path: fixture.sound, outputRate: 44100, outputChannels: 2, cache: cache)
            #expect(prepared.samples == fresh.samples)
        }
        #expect(cache.load(try fixture.key()) == nil)
        #expect(try String(contentsOfFile: blocker, encoding: .utf8) == "not a directory")
    }

    @Test func aSoundThatCannotBeReadIsReportedAsWithoutACache() throws {
        let fixture = try Fixture()
        let missing = fixture.scratch.file("missing.flac")
        #expect(preparedSoundKey(path: missing, outputRate: 44100, outputChannels: 2) == nil)
        do {
            _ = try prepareSound(path: missing, outputRate: 44100, outputChannels: 2, cache: fixture.cache)
            Issue.record("a missing file was prepared")
        } catch {
            #expect(error.description.contains("file not found"))
        }
    }
}
