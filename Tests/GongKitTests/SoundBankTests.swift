import Foundation
import GongAudio
import GongCore
import Testing

@testable import GongKit

@Suite struct SoundBankTests {
    @Test func userSoundsReplaceShippedOnesByName() throws {
        let scratch = try ScratchDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.file("gong.wav")))
        let bank = SoundBank(directories: [scratch.path, SoundBank.sourceTreeSounds])
        #expect(bank.path(of: "gong") == scratch.file("gong.wav"))
        #expect(bank.path(of: "bowl") == SoundBank.sourceTreeSounds + "/bowl.flac")
        #expect(bank.path(of: "nosuch") == nil)
    }

    @Test func aCueFileThatDoesNotExistIsNamed() {
        #expect(
            throws: SoundBankError(
                kind: .fileNotFound, sound: "/no/bell.wav", usedBy: "end",
                message: "end: sound file '/no/bell.wav' not found")
        ) {
            try shippedBank.resolve("/no/bell.wav", usedBy: "end")
        }
    }

    @Test func theStandardBankKeepsConvertedSoundsUnderTheXDGCacheDirectory() {
        let home = GongDirectories(environment: ["HOME": "/home/me"])
        #expect(SoundBank.standard(gongDirectories: home).cache?.directory == "/home/me/.cache/gong/sounds")
        let set = GongDirectories(environment: ["HOME": "/home/me", "XDG_CACHE_HOME": "/scratch/cache"])
        #expect(SoundBank.standard(gongDirectories: set).cache?.directory == "/scratch/cache/gong/sounds")
        let relative = GongDirectories(environment: ["HOME": "/home/me", "XDG_CACHE_HOME": "cache"])
        #expect(relative.cache == "/home/me/.cache/gong", "a relative XDG path is ignored, as the spec says")
        #expect(shippedBank.cache == nil)
    }

    /// A plan at 44.1 kHz from a warm cache plays exactly what a plan converted afresh plays.
    @Test func aPlanFromAWarmCacheHasTheSamplesOfAFreshOne() throws {
        let scratch = try ScratchDirectory()
        let cached = SoundBank(
            directories: [SoundBank.sourceTreeSounds], cache: PreparedSoundCache(directory: scratch.file("sounds")))
        var pattern = BuiltInPatterns.box
        pattern.length = .cycles(1)
        let fresh = try SessionPlan(pattern: pattern, sampleRate: 44100, channels: 2, bank: shippedBank)
        _ = try SessionPlan(pattern: pattern, sampleRate: 44100, channels: 2, bank: cached)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("sounds")).count == fresh.sounds.count)
        let warm = try SessionPlan(pattern: pattern, sampleRate: 44100, channels: 2, bank: cached)
        #expect(warm.sounds.map(\.samples) == fresh.sounds.map(\.samples))
        #expect(warm.sounds.map(\.channels) == fresh.sounds.map(\.channels))
    }

    @Test func theStandardSearchPathPutsExplicitDirectoriesFirstAndTheSourceTreeLast() {
        let bank = SoundBank.standard(
            explicit: "/mine", environment: ["GONG_SOUNDS": "/env"],
            gongDirectories: GongDirectories(environment: ["HOME": "/home/me"]))
        #expect(Array(bank.directories.prefix(3)) == ["/mine", "/env", "/home/me/.local/share/gong/sounds"])
        #expect(bank.directories.last == SoundBank.sourceTreeSounds)
    }
}
