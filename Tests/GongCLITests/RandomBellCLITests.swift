import Foundation
import GongAudio
import Testing

/// Random bells, a start delay and a bed from the command line: `--seed` rings the same sit again, the
/// summary says the seed it drew, and bad input is one line with its exit status.
extension RenderCLITests {
    static let randomSit =
        "[[phases]]\nname = \"sit\"\nlength = \"60s\"\nbell = { random = [\"5s\", \"12s\"], cue = \"bowl\" }\n"

    @Test func aSeedRendersTheSameRandomBellsAndTheSummarySaysIt() throws {
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("random.toml")
        try Self.randomSit.write(toFile: pattern, atomically: true, encoding: .utf8)
        var samples: [[Float]] = []
        for name in ["a.wav", "b.wav"] {
            let result = try runGong(["render", pattern, "--seed", "1234", "--channels", "1", "-o", scratch.file(name)])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("random bells drawn from seed 1234 (--seed 1234 rings them again)"))
            samples.append(try loadSound(path: scratch.file(name)).samples)
        }
        #expect(samples[0] == samples[1])
        let drawn = try runGong(["render", pattern, "--channels", "1", "-o", scratch.file("c.wav")])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        #expect(drawn.stdout.contains("random bells drawn from seed "), "a seed drawn is printed: \(drawn.stdout)")
    }

    @Test func badRandomBellsSeedsDelaysAndBedsAreOneLineWithTheirStatus() throws {
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("random.toml")
        try Self.randomSit.replacingOccurrences(of: "\"12s\"", with: "\"2s\"")
            .write(toFile: pattern, atomically: true, encoding: .utf8)
        let reversed = try runGong(["render", pattern, "-o", scratch.file("x.wav")])
        #expect(reversed.status == 65)
        #expect(
            reversed.stderr
                == "gong: \(pattern):4: phases[0].bell.random = \"5s to 2s\": the shortest gap is longer than the longest; use [shortest, longest], such as [\"3m\", \"8m\"]\n"
        )
        let late = try runGong(["render", "two-phase", "--delay", "2h", "-o", scratch.file("w.wav")])
        #expect(late.status == 64)
        #expect(late.stderr == "gong: --delay: delay = \"2h\": is out of range; use a delay from 0s to 1h\n")
        let bedless = try runGong(["render", "two-phase", "--bed-gain=-12", "-o", scratch.file("v.wav")])
        #expect(bedless.status == 64)
        #expect(
            bedless.stderr
                == "gong: --bed/--bed-gain: \"-12 dB\": two-phase has no bed; use --bed brown-noise (or a file) with --bed-gain\n"
        )
        let fixed = try runGong(["render", "two-phase", "--seed", "7", "-o", scratch.file("y.wav")])
        #expect(fixed.status == 64)
        #expect(
            fixed.stderr
                == "gong: --seed: 7: two-phase has no random bells; use a pattern with bell = { random = [\"3m\", \"8m\"] }\n"
        )
    }

    @Test func patternsShowSaysTheDelayTheBedAndAnOpenLength() throws {
        let result = try runGong(["patterns", "show", "interval", "--open", "--delay", "10s", "--bed", "brown-noise"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("  delay: 10s before the start cue, counted down\n"))
        #expect(
            result.stdout.contains(
                "  bed: brown-noise (-18 dB), fading in over 10s and out over 20s from the end cue\n"))
        #expect(result.stdout.contains("  length: open — cycles repeat until you stop, at most 24h"))
        #expect(!result.stdout.contains("session:"), "an open sit has no planned length to state")
    }
}
