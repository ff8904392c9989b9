import ArgumentParser
import GongBench
import GongCore
import GongKit
import GongPractice

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Play one cue schedule four ways and compare them.",
        discussion: """
            The ways: gong; a shell loop of `sleep; paplay cue.wav`; a loop that sleeps to \
            CLOCK_MONOTONIC deadlines and starts paplay for each cue; and the whole session \
            rendered to one file and played by paplay (the ceiling any player can reach). The \
            sink's monitor is recorded with parec and every onset found to the frame by \
            cross-correlation with the cue's own waveform. Reported for each: the onset error \
            against the schedule laid from its first cue (p50, p99, max, in frames and ms), the \
            drift over the run, and cues missed.

            Runs on the PulseAudio or PipeWire server PULSE_SERVER names (else the user's own), \
            on a null sink it makes and removes, so nothing is heard. Ctrl-C stops what plays \
            and records, removes the sink and exits 130 without a report.

            Examples:
              gong bench compare --duration 5m --svg compare.svg
              gong bench compare --load 2 --json
            """)

    @OptionGroup var output: BenchOutputOptions

    @Option(help: ArgumentHelp("Time between cues (\(DurationText.allowed)).", valueName: "DURATION"))
    var every = "2s"

    @Option(help: ArgumentHelp("Play on this existing sink instead of a null sink of gong's own.", valueName: "SINK"))
    var sink: String?

    func run() throws {
        do {
            let config = try loadConfig()
            try output.checkLoad()
            var bench = CompareBench(durationSeconds: try output.seconds(), busyThreads: output.load)
            guard let interval = DurationText.seconds(every), interval >= Rational(1, 4)!,
                interval <= bench.durationSeconds
            else {
                throw UsageError(
                    "--every \(every): not a duration from 250ms to --duration; use \(DurationText.allowed)")
            }
            bench.everySeconds = interval
            bench.sink = sink
            let line = ProgressLine()
            let bank = SoundBank.standard(extra: config.soundDirectories.value)
            let report = try withInterruptions { interruption in
                defer { line.clear() }
                return try bench.run(bank: bank, interruption: interruption) { method in
                    line.show("gong bench compare: \(method) (Ctrl-C: stop)")
                }
            }
            print(output.json ? report.json() : report.text, terminator: output.json ? "\n" : "")
            if let svg = output.svg { try output.write(report.svg(), to: svg, flag: "--svg") }
        } catch {
            throw fail(error)
        }
    }
}
