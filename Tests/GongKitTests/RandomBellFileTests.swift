import GongCore
import Testing

@testable import GongKit

/// `bell = { random = [SHORTEST, LONGEST] }` in a pattern file: read, and every bad value one
/// line with the file and line.
@Suite struct RandomBellFileTests {
    static func sit(_ bell: String) -> String {
        "end = \"gong\"\n[[phases]]\nname = \"sit\"\nlength = \"20m\"\nbell = \(bell)\n"
    }

    static func error(_ text: String) -> String {
        do {
            _ = try PatternFile.parse(text, path: "calm.toml", defaultName: "calm")
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test func aRandomBellReadsItsBoundsAndCue() throws {
        let pattern = try PatternFile.parse(
            Self.sit("{ random = [\"3m\", \"8m\"], cue = { sound = \"bowl\", gain = -6 } }"), path: "calm.toml",
            defaultName: "calm")
        #expect(pattern.phases[0].bell == IntervalBell(randomFrom: 180, upTo: 480, cue: Cue("bowl", gainDB: -6)))
        #expect(pattern.hasRandomBells)
        #expect(pattern.seed == nil, "drawn when the pattern is made ready to play, not when it is read")
        let numbers = try PatternFile.parse(
            Self.sit("{ random = [90, 90.5], cue = \"bowl\" }"), path: "calm.toml", defaultName: "calm")
        #expect(numbers.phases[0].bell?.randomUpTo == Rational(181, 2))
    }

    @Test(
        arguments: [
            (
                "{ random = [\"8m\", \"3m\"], cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"8m to 3m\": the shortest gap is longer than the longest"
            ),
            (
                "{ random = [\"3m\"], cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"[ '3m' ]\": must be two durations"
            ),
            (
                "{ random = \"3m\", cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"3m\": must be two durations"
            ),
            (
                "{ random = [\"3m\", \"soon\"], cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"soon\": not a duration"
            ),
            (
                "{ random = [\"0.5s\", \"3m\"], cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"0.5s\": is out of range; use a duration from 1s to 24h"
            ),
            (
                "{ random = [\"3m\", \"-8m\"], cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random = \"-8m\": must be positive"
            ),
            (
                "{ random = [\"3m\", \"8m\"], every = \"5m\", cue = \"bowl\" }",
                "calm.toml:5: phases[0].bell.random: every and random cannot both be set"
            ),
            ("{ random = [\"3m\", \"8m\"] }", "calm.toml:5: phases[0].bell.cue: missing"),
            ("{ cue = \"bowl\" }", "calm.toml:5: phases[0].bell.every: missing; use every = \"5m\", or random")
        ])
    func aBadRandomBellIsOneLineWithFileAndLine(bell: String, message: String) {
        let error = Self.error(Self.sit(bell))
        #expect(error.hasPrefix(message), "\(error)")
        #expect(!error.contains("\n"))
    }
}
