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
                kind: .fileNotFound, sound: "/no/bell.wav", usedBy: "end", searched: shippedBank.directories)
        ) {
            try shippedBank.resolve("/no/bell.wav", usedBy: "end")
        }
        #expect(
            SoundBankError(kind: .fileNotFound, sound: "/no/bell.wav", usedBy: "end").description
                == "end: sound file '/no/bell.wav' not found")
    }

    @Test func anUnknownSoundSaysWhatTheBankHasOrWhereNoneWasFound() {
        do {
            _ = try shippedBank.resolve("nosuch", usedBy: "end")
            Issue.record("an unknown sound resolved")
        } catch {
            #expect(error.kind == .unknownSound && error.available.contains("gong"))
            #expect(error.description.hasPrefix("end: unknown sound \"nosuch\"; use one of "))
        }
        let empty = SoundBank(directories: ["/nonexistent/a"])
        do {
            _ = try empty.resolve("gong", usedBy: "start")
            Issue.record("a sound resolved from no bank")
        } catch {
            #expect(error.available.isEmpty && error.searched == ["/nonexistent/a"])
            #expect(
                error.description == "start: unknown sound \"gong\"; no sound bank was found (searched /nonexistent/a)")
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

    /// An installed bank is found beside the running program wherever it was unpacked, before
    /// $XDG_DATA_DIRS (an older package's bank there must not shadow the tarball's own), and the
    /// source tree comes last; each place says why it is searched.
    @Test func theInstalledBankIsFoundBesideTheProgramBeforeTheDataDirectories() {
        let bank = SoundBank.standard(
            extra: ["/zen"], environment: [:],
            gongDirectories: GongDirectories(environment: ["HOME": "/home/me", "XDG_DATA_DIRS": "/a:/b"]))
        #expect(
            bank.places.map(\.origin) == [.config, .user, .installed, .dataDirs, .dataDirs, .sourceTree],
            "\(bank.places)")
        // The test runner is .build/CONFIGURATION/NAME: its prefix is .build.
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let prefix = program.deletingLastPathComponent().deletingLastPathComponent().path
        #expect(bank.places[2].path == prefix + "/share/gong/sounds")
        #expect(bank.places[3] == SoundBank.Place("/a/gong/sounds", .dataDirs))
    }

    @Test func aSoundNamesThePlaceItCameFrom() throws {
        let scratch = try ScratchDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.file("gong.wav")))
        let bank = SoundBank(places: [.init(scratch.path, .user), .init(SoundBank.sourceTreeSounds, .sourceTree)])
        let sounds = bank.availableSounds()
        #expect(sounds.first { $0.name == "gong" }?.place.origin == .user)
        #expect(sounds.first { $0.name == "bowl" }?.place.origin == .sourceTree)
    }
}
