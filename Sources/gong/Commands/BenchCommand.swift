import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GongBench
import GongCore
import GongKit
import GongPractice
import GongTerminal
import Synchronization

struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure timing: gong's own, and against other players.",
        discussion: """
            jitter measures what a live session's timing is made of, on a device; compare plays \
            one cue schedule as gong, a sleep loop, a deadline loop and one whole file do, and \
            compares what was heard. See bench/RESULTS.md for runs on PulseAudio and PipeWire, \
            idle and under load.
            """,
        subcommands: [JitterCommand.self, CompareCommand.self])
}

/// What both benchmarks take: how long, how busy, and where the results go.
struct BenchOutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("How long to play (\(DurationText.allowed)).", valueName: "DURATION"))
    var duration = "60s"

    @Option(help: ArgumentHelp("Busy threads to run beside the measurement, as a loaded machine.", valueName: "N"))
    var load = 0

    @Flag(help: "Print the report as one JSON document instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("Also write the plots to this SVG file.", valueName: "FILE"))
    var svg: String?

    /// The duration, checked: a benchmark runs 1 second to a day.
    func seconds() throws -> Rational {
        guard let seconds = DurationText.seconds(duration), seconds >= Rational(1),
            seconds <= PatternLimits.maxSessionSeconds
        else {
            throw UsageError(
                "--duration \(duration): not a duration from 1s to \(PatternLimits.maxSessionText); use \(DurationText.allowed)"
            )
        }
        return seconds
    }

    func checkLoad() throws {
        guard (0...256).contains(load) else { throw UsageError("--load \(load): out of range; use 0 to 256 threads") }
    }

    /// Writes `text` to `path` whole, or says why not (exit 73).
    func write(_ text: String, to path: String, flag: String) throws {
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw UnwritableFile(flag: flag, path: path)
        }
    }
}

/// A line on standard error rewritten in place while a benchmark runs, on a terminal only.
struct ProgressLine {
    let shown = isatty(STDERR_FILENO) == 1

    func show(_ text: String) {
        if shown { writeToStandardError("\r\u{1B}[K" + text) }
    }

    func clear() {
        if shown { writeToStandardError("\r\u{1B}[K") }
    }
}

/// Runs a benchmark with Ctrl-C, SIGTERM and SIGHUP asking it to stop: it ends what it started
/// and reports or throws as it will. A second one ends gong at once (exit 130).
func withInterruptions<T>(_ body: (BenchInterruption) throws -> T) throws -> T {
    let interruption = BenchInterruption()
    let listener = InterruptionListener(interruption)
    defer { listener.stop() }
    return try body(interruption)
}

/// Hears the signals on a thread of its own: a signal handler may not take the lock a request
/// takes.
private final class InterruptionListener: Sendable {
    /// Read by the listening thread only, once started.
    nonisolated(unsafe) private let signals = SignalWatcher()
    private let finished = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init(_ interruption: BenchInterruption) {
        DispatchQueue.global().async { [self] in
            var requests = 0
            while !finished.load(ordering: .acquiring) {
                var watch = pollfd(fd: signals.wakeFileDescriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&watch, 1, 100) > 0 else { continue }
                for signal in signals.take() {
                    switch signal {
                    case .interrupt(let count): requests += count
                    case .terminate, .hangup: requests += 1
                    case .stopRequested: SignalWatcher.stopProcess()
                    case .continued, .resized: break
                    }
                }
                if requests > 1 {
                    printError("interrupted again: stopped at once")
                    exit(130)
                }
                if requests == 1 { interruption.request() }
            }
            ended.signal()
        }
    }

    func stop() {
        finished.store(true, ordering: .releasing)
        ended.wait()
        signals.uninstall()
    }
}

struct JitterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jitter",
        abstract: "Measure a live session's timing on a device.",
        discussion: """
            Plays a woodblock every 2 s for --duration and reports, each as a histogram (count, \
            min, mean, p50, p99, p99.9, max and the count beyond its range): the audio thread's \
            wake-up latency, render time per period, the device clock's jitter and drift (ppm \
            against CLOCK_MONOTONIC), each cue's error, and underruns, frames lost and device \
            losses; with the kernel, CPUs, governor, load and the priority and buffer granted. \
            Ctrl-C stops early and reports what was measured; a second Ctrl-C ends gong at once.

            Examples:
              gong bench jitter --device pulse --duration 10m --load 2 --svg jitter.svg
              gong bench jitter --device null --duration 5s --json
            """)

    @Option(
        help: ArgumentHelp(
            "Device, as for gong run (default: the config's, else auto).", valueName: "NAME"))
    var device: String?

    @Option(help: ArgumentHelp("Sample rate in Hz.", valueName: "HZ"))
    var rate = Timeline.defaultSampleRate

    @Option(help: ArgumentHelp("Output latency in milliseconds (default: the route's, as gong run).", valueName: "MS"))
    var latency: Double?

    @OptionGroup var output: BenchOutputOptions

    @Option(help: ArgumentHelp("Also write every measured value to this CSV file.", valueName: "FILE"))
    var csv: String?

    func run() throws {
        do {
            let config = try loadConfig()
            try output.checkLoad()
            let bench = JitterBench(
                options: SessionOptions(
                    device: device ?? config.device.value, rate: rate, latencyMs: latency ?? config.latencyMs.value),
                durationSeconds: try output.seconds(), busyThreads: output.load)
            let line = ProgressLine()
            let bank = SoundBank.standard(extra: config.soundDirectories.value)
            let report = try withInterruptions { interruption in
                defer { line.clear() }
                return try bench.run(bank: bank, interruption: interruption) { progress in
                    line.show(
                        "gong bench jitter: \(Int(progress.elapsedSeconds)) s of \(Int(progress.plannedSeconds.rounded())) s, \(progress.periods) periods, \(progress.underruns) underruns (Ctrl-C: stop and report)"
                    )
                }
            }
            print(output.json ? report.json() : report.text, terminator: output.json ? "\n" : "")
            if let csv { try output.write(report.csv(), to: csv, flag: "--csv") }
            if let svg = output.svg { try output.write(report.svg(), to: svg, flag: "--svg") }
        } catch {
            throw fail(error)
        }
    }
}
