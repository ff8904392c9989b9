import Foundation
import GongCore
import Testing

@testable import GongKit

@Suite struct PatternFileTests {
    static func parse(_ text: String) throws(PatternError) -> Pattern {
        try PatternFile.parse(text, path: "calm.toml", defaultName: "calm")
    }

    static func error(_ text: String) -> String {
        do {
            _ = try parse(text)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func aFullPatternFileReadsEveryKey() throws {
        let pattern = try Self.parse(
            """
            summary = "an evening sit"
            warmup = "10s"
            start = { sound = "bowl", gain = -6 }
            end = "gong-end"
            cycles = 2

            [[phases]]
            name = "sit"
            length = "20m"
            cue = "gong"
            bell = { every = "5m", cue = "chime" }

            [[phases]]
            name = "rest"
            length = 90
            cue = "./my bell.wav"
            """)
        #expect(pattern.name == "calm")
        #expect(pattern.warmUp == 10)
        #expect(pattern.startCue == Cue("bowl", gainDB: -6))
        #expect(pattern.phases.map(\.length) == [1200, 90])
        #expect(pattern.phases[0].bell == IntervalBell(every: 300, cue: Cue("chime")))
        #expect(pattern.phases[1].cue?.isFile == true)
        #expect(pattern.length == .cycles(2))
    }

    @Test func aPacedRampingBreathFileReadsSharesAndTheRamp() throws {
        let pattern = try Self.parse(
            """
            duration = "15m"
            [pace]
            bpm = 6
            to = 4.5
            over = "10m"
            [[phases]]
            name = "in"
            share = 4
            motion = "inhale"
            [[phases]]
            name = "out"
            share = 6
            motion = "exhale"
            """)
        #expect(pattern.pace == Pace(from: 6, to: Rational(9, 2)!, over: 600))
        #expect(pattern.phases.map(\.length) == [4, 6])
        #expect(pattern.phases[0].motion == .inhale)
    }

    @Test func malformedTomlNamesTheLine() {
        let message = Self.error("name = \"x\"\n[[phases]\nname = 1")
        #expect(message.hasPrefix("calm.toml:2: malformed TOML"))
    }

    @Test func anUnknownKeyIsAnErrorWithItsLineAndTheAllowedKeys() {
        #expect(
            Self.error(
                """
                [[phases]]
                name = "sit"
                lenght = "20m"
                """) == "calm.toml:3: phases[0].lenght: unknown key; use one of name, length, share, cue, motion, bell")
    }

    @Test func aBadDurationNamesFileLineKeyValueAndWhatIsAllowed() {
        #expect(
            Self.error(
                """
                [[phases]]
                name = "sit"
                length = "20m"

                [[phases]]
                name = "rest"
                length = "-4s"
                """)
                == "calm.toml:7: phases[1].length = \"-4s\": must be positive; use a duration such as 4s, 4.5s, 90s, 15m, 1h30m or 250ms"
        )
        #expect(
            Self.error("[[phases]]\nname = \"a\"\nlength = \"soon\"").hasPrefix(
                "calm.toml:3: phases[0].length = \"soon\": not a duration"))
        #expect(Self.error("[[phases]]\nname = \"a\"\nlength = nan").contains("not a duration"))
        #expect(Self.error("[[phases]]\nname = \"a\"\nlength = 0").contains("must be positive"))
        #expect(Self.error("[[phases]]\nname = \"a\"\nlength = \"0.01s\"").contains("is too short"))
    }

    @Test func validationErrorsAfterParsingStillGetALine() {
        #expect(
            Self.error("cycles = 1000000000\n[[phases]]\nname = \"a\"\nlength = 4")
                == "calm.toml:1: cycles = 1000000000: is out of range; use a whole number of cycles from 1 to 100000")
        #expect(Self.error("cycles = 0\n[[phases]]\nname = \"a\"\nlength = 4").hasPrefix("calm.toml:1: cycles = 0"))
    }

    @Test func anEmptyOrMissingPhaseListIsAnError() {
        #expect(Self.error("name = \"x\"").contains("phases: a pattern needs at least one phase"))
        #expect(Self.error("phases = []").contains("at least one phase"))
    }

    @Test func wrongTypesAndConflictsSayWhatIsAllowed() {
        #expect(
            Self.error("cycles = \"three\"\n[[phases]]\nname = \"a\"\nlength = 4").contains(
                "cycles = \"three\": not a whole number"))
        #expect(
            Self.error("cycles = 2\nduration = \"5m\"\n[[phases]]\nname = \"a\"\nlength = 4").contains(
                "cannot both be set"))
        #expect(
            Self.error("[[phases]]\nname = \"a\"\nlength = 4\nmotion = \"sideways\"").contains(
                "one of inhale, hold, exhale, still"))
        #expect(Self.error("[[phases]]\nname = \"a\"\nshare = 4").contains("shares need a breathing rate"))
        #expect(
            Self.error("[pace]\nbpm = 6\n[[phases]]\nname = \"a\"\nlength = \"4s\"").contains(
                "measures phases in shares"))
        #expect(
            Self.error("[pace]\nbpm = 600\n[[phases]]\nname = \"a\"\nshare = 4").contains(
                "pace.bpm = 600: is out of range"))
        #expect(Self.error("[[phases]]\nname = \"a\"\nlength = 4\ncue = 7").contains("phases[0].cue = 7: not a cue"))
        #expect(
            Self.error("[[phases]]\nname = \"a\"\nlength = 4\ncue = { sound = \"gong\", gain = 99 }").contains(
                "phases[0].cue.gain"))
    }

    @Test func missingAndUnreadableFilesAreClearErrors() throws {
        var missing = PatternError(
            location: "/nonexistent/x.toml", problem: "file not found", allowed: "a readable pattern file (.toml)")
        missing.kind = .unreadableFile
        #expect(throws: missing) {
            try PatternFile.load(path: "/nonexistent/x.toml")
        }
        let directory = FileManager.default.temporaryDirectory.path
        #expect(throws: PatternError.self) { try PatternFile.load(path: directory) }
    }
}

@Suite struct PatternCatalogTests {
    @Test func userPatternsAreFoundByNameInTheXdgConfigDirectory() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("gong-catalog-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/gong/patterns", withIntermediateDirectories: true)
        try "[[phases]]\nname = \"sit\"\nlength = \"1m\"\ncue = \"bowl\"\n".write(
            toFile: root + "/gong/patterns/morning.toml", atomically: true, encoding: .utf8)
        let catalog = PatternCatalog(
            directories: GongDirectories(environment: ["HOME": "/nowhere", "XDG_CONFIG_HOME": root]))
        let pattern = try catalog.pattern(named: "morning")
        #expect(pattern.name == "morning")
        #expect(catalog.allNames().contains("morning"))
        #expect(try catalog.pattern(named: "box") == BuiltInPatterns.box)
        #expect(throws: PatternError.self) { try catalog.pattern(named: "nosuch") }
    }

    @Test func xdgDirectoriesFollowTheSpec() {
        let directories = GongDirectories(environment: ["HOME": "/home/me", "XDG_STATE_HOME": "relative/ignored"])
        #expect(directories.config == "/home/me/.config/gong")
        #expect(directories.data == "/home/me/.local/share/gong")
        #expect(directories.state == "/home/me/.local/state/gong")
        #expect(directories.sharedData == ["/usr/local/share/gong", "/usr/share/gong"])
    }
}
