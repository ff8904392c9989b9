import Foundation
import GongAudio
import GongKit
import Testing

@Suite struct RenderCLITests {
    @Test func renderWritesTheWholeSessionAndSaysSo() throws {
        let scratch = try ScratchDirectory()
        let output = scratch.file("sit.wav")
        let result = try runGong([
            "render", "two-phase", "--set", "meditation=20s", "--set", "reflection=10s", "--channels", "1", "-o", output
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3 cues, every one on its scheduled frame"))
        let sound = try loadSound(path: output)
        #expect(sound.channels == 1 && sound.sampleRate == 48000)
        #expect(sound.frames == 30 * 48000 + 42 * 48000, "ends when the 42 s end gong has rung out")
    }

    @Test func flacAt44100WithABreathingRateOverride() throws {
        let scratch = try ScratchDirectory()
        let output = scratch.file("b.flac")
        let result = try runGong([
            "render", "box", "--bpm", "5", "--cycles", "2", "--rate", "44100", "--bits", "24", "-o", output
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let sound = try loadSound(path: output)
        #expect(sound.sampleRate == 44100 && sound.channels == 2)
    }

    /// The first render at 44.1 kHz fills the cache under XDG_CACHE_HOME; the second reads it
    /// and writes the very same samples.
    @Test func aSecondRenderAtAnotherRateReadsTheCacheAndWritesTheSameSamples() throws {
        let scratch = try ScratchDirectory()
        let cacheHome = scratch.file("cache")
        let arguments = ["render", "box", "--cycles", "1", "--rate", "44100", "--bits", "float"]
        let first = try runGong(
            arguments + ["-o", scratch.file("first.wav")], environment: ["XDG_CACHE_HOME": cacheHome])
        #expect(first.status == 0, "\(first.stderr)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: cacheHome + "/gong/sounds")
        #expect(entries.count == 4 && entries.allSatisfy { $0.hasSuffix("-44100Hz-2ch.f32") }, "\(entries)")
        let second = try runGong(
            arguments + ["-o", scratch.file("second.wav")], environment: ["XDG_CACHE_HOME": cacheHome])
        #expect(second.status == 0 && second.stderr.isEmpty, "\(second.stderr)")
        // The samples, not the files' bytes: libsndfile stamps a float WAV's PEAK chunk with the
        // second it was written, so two renders a second apart differ there and nowhere else.
        let firstSound = try loadSound(path: scratch.file("first.wav"))
        let secondSound = try loadSound(path: scratch.file("second.wav"))
        #expect(firstSound.frames > 44100 && firstSound.samples == secondSound.samples)
    }

    @Test func aCacheDirectoryThatCannotBeMadeIsNoError() throws {
        let scratch = try ScratchDirectory()
        let blocker = scratch.file("blocker")
        try Data("a file".utf8).write(to: URL(fileURLWithPath: blocker))
        let result = try runGong(
            ["render", "box", "--cycles", "1", "--rate", "96000", "-o", scratch.file("b.wav")],
            environment: ["XDG_CACHE_HOME": blocker])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(try loadSound(path: scratch.file("b.wav")).sampleRate == 96000)
    }

    @Test func patternsListAndShowDescribeThePatterns() throws {
        let list = try runGong(["patterns", "list"])
        for name in ["two-phase", "box", "4-7-8", "resonant", "coherent", "sigh", "interval"] {
            #expect(list.stdout.contains(name))
        }
        let show = try runGong(["patterns", "show", "two-phase", "--set", "meditation=20m"])
        #expect(show.status == 0)
        #expect(show.stdout.contains("meditation    20m, cue gong"))
        #expect(show.stdout.contains("session: 23m until the end cue, 3 cues"))
        let resonant = try runGong(["patterns", "show", "resonant"])
        #expect(resonant.stdout.contains("5.5 breaths/min"))
    }

    @Test func soundsListsTheBankAndWhereItWasFound() throws {
        let result = try runGong(["sounds"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 9, "a header and eight sounds")
        // Run from the build tree, nothing is installed beside it: the source tree's bank.
        #expect(lines.first?.hasPrefix("from ") == true)
        #expect(lines.first?.hasSuffix("/Sounds (the source tree gong was built from)") == true, "\(lines)")
    }

    @Test func versionSaysTheReleaseAndTheCommit() throws {
        let result = try runGong(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == GongVersion.description + "\n")
    }

    /// Each bad input: its exit status (sysexits), one line on stderr starting with `gong:`,
    /// nothing on stdout, no file written.
    @Test(
        arguments: [
            (["render", "nosuch", "-o", "OUT"], 64, "\"nosuch\": no such pattern; use one of two-phase, box"),
            (
                ["render", "two-phase", "--set", "medtation=1m", "-o", "OUT"], 64,
                "--set: \"medtation\": two-phase has no phase of that name; use one of meditation, reflection"
            ),
            (
                ["render", "two-phase", "--set", "meditation=soon", "-o", "OUT"], 64,
                "--set: meditation = \"soon\": not a duration"
            ),
            (
                ["render", "two-phase", "--set", "meditation=0s", "-o", "OUT"], 64,
                "is out of range; use a duration from 0.25s to 24h"
            ),
            (["render", "box", "--cycles", "0", "-o", "OUT"], 64, "--cycles: 0: out of range"),
            (
                ["render", "box", "--cycles", "1000000000", "-o", "OUT"], 64,
                "use a whole number of cycles from 1 to 100000"
            ),
            (["render", "box", "--duration=-5m", "-o", "OUT"], 64, "--duration: \"-5m\": must be positive"),
            (["render", "box", "--duration", "NaN", "-o", "OUT"], 64, "--duration: \"NaN\": not a duration"),
            (
                ["render", "box", "--duration", "3s", "-o", "OUT"], 64,
                "--duration: duration = \"3s\": is shorter than one cycle (16s)"
            ),
            (["render", "box", "--duration", "30d", "-o", "OUT"], 64, "not a duration"),
            (
                ["render", "two-phase", "--bpm", "6", "-o", "OUT"], 64,
                "--bpm: \"6 breaths/min\": two-phase is not a breathing pattern"
            ),
            (
                ["render", "box", "--bpm", "600", "-o", "OUT"], 64,
                "bpm = 600: is out of range; use a rate from 0.5 to 60 breaths per minute"
            ),
            // A ramp is shown as it is typed: `>` unquoted is the shell's redirection.
            (
                ["render", "box", "--ramp", "10m", "-o", "OUT"], 64,
                "use --bpm '6->4.5' --ramp 10m"
            ),
            (["render", "box", "--bpm", "6-", "-o", "OUT"], 64, "or a ramp such as '6->4.5'"),
            (["render", "box", "--ratio", "4", "-o", "OUT"], 64, "--ratio: 4: not a ratio"),
            (
                ["render", "box", "--rate", "7", "-o", "OUT"], 64,
                "--rate 7: out of range; use 44100, 48000 or 96000 (8000 to 384000 Hz)"
            ),
            (["render", "box", "--channels", "6", "-o", "OUT"], 64, "--channels 6: out of range; use 1 or 2"),
            (
                ["render", "box", "--volume", "40", "-o", "OUT"], 64,
                "--volume 40: out of range; use a gain from -60 to 12 dB"
            ),
            (["render", "box", "-o", "OUT.mp3"], 64, "cannot tell the format from the name"),
            (
                ["render", "box", "--cue", "inhale=gongg", "-o", "OUT"], 65,
                "unknown sound \"gongg\"; use one of bowl, brown-noise, chime"
            ),
            (
                ["render", "box", "--cue", "end=/no/such/bell.wav", "-o", "OUT"], 66,
                "end: sound file '/no/such/bell.wav' not found"
            ),
            (
                ["render", "box", "-o", "/nonexistent/dir/x.wav"], 73,
                "cannot create '/nonexistent/dir/x.wav': directory '/nonexistent/dir' does not exist"
            ),
            (["render", "/nonexistent/p.toml", "-o", "OUT"], 66, "/nonexistent/p.toml: file not found"),
            (
                ["run", "box", "--device", "null", "--latency", "5000"], 64,
                "--latency 5000: out of range; use 1 to 2000 ms"
            ),
            (
                ["run", "box", "--device", "null", "--period=-5"], 64,
                "--period -5: out of range; use 16 to 65536 frames"
            ),
            (["run", "box", "--device", "null", "--channels", "3"], 64, "--channels 3: out of range; use 1 or 2"),
            (
                ["run", "box", "--device", "null", "--open", "--cycles", "2"], 64,
                "gong: --open: an open sit has no number of cycles or duration; use --open alone: it lasts until you stop it\n"
            ),
            (
                ["run", "box", "--device", "null", "--format", "int24"], 64,
                "--format int24: unsupported; use float32, int32 or int16"
            ),
            (["run", "box", "--device", "nosuch"], 69, "audio device 'nosuch': no such device")
        ] as [([String], Int32, String)])
    func badInputGetsOneClearLineAndItsExitStatus(arguments: [String], status: Int32, message: String) throws {
        let scratch = try ScratchDirectory()
        let output = scratch.file("out.wav")
        let resolved = arguments.map { $0 == "OUT" ? output : ($0 == "OUT.mp3" ? scratch.file("out.mp3") : $0) }
        let result = try runGong(resolved)
        #expect(result.status == status, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.hasPrefix("gong: "))
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty, "no file written")
    }

    @Test func aMalformedPatternFileIsReportedWithItsLine() throws {
        let scratch = try ScratchDirectory()
        let file = scratch.file("mine.toml")
        try "[[phases]]\nname = \"sit\"\nlength = \"20x\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runGong(["render", file, "-o", scratch.file("x.wav")])
        #expect(result.status == 65)
        #expect(
            result.stderr
                == "gong: \(file):3: phases[0].length = \"20x\": not a duration; use a duration such as 4s, 4.5s, 90s, 15m, 1h30m or 250ms\n"
        )
    }

    /// GongKit says what would do as data; the command line names its flags for it.
    @Test func anOpenPatternFileIsNoRenderAndTheLineNamesTheFlagsThatGiveItAnEnd() throws {
        let scratch = try ScratchDirectory()
        let file = scratch.file("open.toml")
        try "[[phases]]\nname = \"sit\"\nlength = \"open\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runGong(["render", file, "-o", scratch.file("x.wav")])
        #expect(result.status == 65)
        #expect(
            result.stderr
                == "gong: length = \"open\": an open sit ends when it is stopped, and a render cannot be; use a number of cycles or a duration (--cycles, --duration)\n"
        )
    }

    @Test func userPatternsAreFoundByNameInTheConfigDirectory() throws {
        let home = try ScratchDirectory()
        try FileManager.default.createDirectory(
            atPath: home.path + "/.config/gong/patterns", withIntermediateDirectories: true)
        try "summary = \"mine\"\n[[phases]]\nname = \"sit\"\nlength = \"2s\"\ncue = \"bowl\"\n"
            .write(toFile: home.path + "/.config/gong/patterns/tiny.toml", atomically: true, encoding: .utf8)
        let list = try runGong(["patterns", "list"], home: home.path)
        #expect(list.stdout.contains("tiny"))
        let result = try runGong(["render", "tiny", "-o", home.file("t.wav")], home: home.path)
        #expect(result.status == 0, "\(result.stderr)")
    }
}
