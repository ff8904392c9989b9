import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

/// `gong bench compare`: one cue schedule played four ways through a sound server's null sink,
/// one after the other — gong; a shell loop of `sleep; paplay`; a loop that sleeps to
/// CLOCK_MONOTONIC deadlines and starts `paplay` for each cue; and the whole session rendered to
/// one file and played by `paplay`, the ceiling any player can reach — each judged by what was
/// heard: the sink's monitor is recorded and every onset found to the frame (`OnsetFinder`).
public struct CompareBench: Sendable {
    public var durationSeconds: Rational
    public var everySeconds: Rational = 2
    public var busyThreads: Int
    /// An existing sink to play on; nil: a null sink of the benchmark's own, removed after.
    public var sink: String?
    public var sound = "woodblock"
    public var rate = Timeline.defaultSampleRate
    /// Silence recorded before each method starts and after it ends.
    public var marginSeconds = 0.5

    public init(durationSeconds: Rational, busyThreads: Int) {
        self.durationSeconds = durationSeconds
        self.busyThreads = busyThreads
    }

    public enum Method: String, Codable, Sendable, CaseIterable {
        case gong, sleepLoop, deadlineLoop, wholeFile

        public var label: String {
            switch self {
            case .gong: "gong run"
            case .sleepLoop: "sleep; paplay loop"
            case .deadlineLoop: "paplay at monotonic deadlines"
            case .wholeFile: "one file, paplay (ceiling)"
            }
        }
    }

    /// Cues in the schedule: one every `everySeconds` that fits in `durationSeconds`, at least 2.
    public var cueCount: Int { max(2, Int(durationSeconds.doubleValue / everySeconds.doubleValue)) }

    /// The schedule as a pattern, for gong and for the rendered file: a second of silence, then
    /// a cue every `everySeconds`. The silence lets the stream run before the first cue: a
    /// sound server starts a stream by rewriting what it had mixed, which the monitor has
    /// already recorded, and the first cue of a stream was heard up to a 5 ms block off so.
    var pattern: Pattern {
        Pattern(
            name: "bench-compare", summary: "a \(sound) every \(DurationText.format(everySeconds))", warmUp: 1,
            phases: [Phase("tick", length: everySeconds, cue: Cue(sound))], length: .cycles(cueCount))
    }

    /// Plays the schedule each way and reports. `progress` hears which method plays. Asked to
    /// stop by `interruption`, it ends what plays, removes its sink and throws
    /// `BenchError.interrupted`: a comparison missing a method is no comparison.
    public func run(
        bank: SoundBank, interruption: BenchInterruption = BenchInterruption(), progress: (String) -> Void = { _ in }
    ) throws -> CompareReport {
        let tools = try SoundServerTools(interruption: interruption)
        let server = try tools.serverName()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gong-bench-compare-\(getpid())")
        try? FileManager.default.removeItem(at: scratch)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        // The cue as gong plays it: the template the onsets are found by, and the file paplay plays.
        // One cue and its ring-out, nothing more: paplay's time to play it is the cue's own.
        let oneCue = Pattern(
            name: "cue", phases: [Phase("cue", length: Rational(1, 4)!, cue: Cue(sound))], length: .cycles(1))
        let template = Array(
            try SessionPlan(pattern: oneCue, sampleRate: rate, channels: 1, bank: bank).sounds[0].samples)
        let cueFile = scratch.appendingPathComponent("cue.wav").path
        try render(oneCue, to: cueFile, bank: bank)
        let sessionFile = scratch.appendingPathComponent("session.wav").path
        try render(pattern, to: sessionFile, bank: bank)

        let (sinkName, module) = try openSink(tools)
        defer { if let module { _ = try? tools.run(tools.pactl, ["unload-module", module], interruptible: false) } }
        // A sink left idle starts the next stream by rewriting a long stretch of what it had
        // mixed, which its monitor has already recorded: paplay's cues lost their first 100 ms
        // so. A silent low-latency stream keeps it running, as a sound card runs, and what a new
        // stream rewrites short.
        let keeper = try tools.start(
            tools.paplay,
            [
                "--device=\(sinkName)", "--raw", "--format=float32le", "--rate=\(rate)", "--channels=2",
                "--latency-msec=20", "--stream-name=gong-bench-keeper", "/dev/zero"
            ])
        defer { tools.stop(keeper) }
        var conditions = MachineConditions.current(busyThreads: busyThreads)
        let load = BusyLoad(threads: busyThreads)
        defer { load.stop() }
        let finder = OnsetFinder(template: template)
        var results: [CompareReport.MethodResult] = []
        for (index, method) in Method.allCases.enumerated() {
            progress("\(method.label) (\(index + 1) of \(Method.allCases.count))")
            let recording = scratch.appendingPathComponent("\(method.rawValue).raw").path
            let recorder = try tools.start(
                tools.parec,
                [
                    "--device=\(sinkName).monitor", "--format=float32le", "--rate=\(rate)", "--channels=1", "--raw",
                    "--latency-msec=20", recording
                ])
            // The recorder must not fall behind a busy machine: real-time where allowed.
            var priority = sched_param(sched_priority: 60)
            _ = sched_setscheduler(recorder.processIdentifier, SCHED_FIFO, &priority)
            // parec takes a moment to connect: the margin counts from its first frames.
            let connecting = Date()
            // stat(2), not FileManager: FoundationEssentials gives a file's size as UInt, which
            // an `as? Int` never matched, so every recording looked empty.
            var recorded = stat()
            while stat(recording, &recorded) != 0 || recorded.st_size == 0 {
                guard Date().timeIntervalSince(connecting) < 10, !interruption.isRequested else {
                    tools.stop(recorder)
                    if interruption.isRequested { throw BenchError.interrupted }
                    throw BenchError(
                        kind: .toolFailed, message: "parec recorded nothing from \(sinkName).monitor in 10 s")
                }
                usleep(10_000)
            }
            usleep(UInt32(marginSeconds * 1e6))
            let started = Date()
            do {
                try play(
                    method, sink: sinkName, tools: tools, interruption: interruption, cueFile: cueFile,
                    sessionFile: sessionFile, bank: bank)
                if interruption.isRequested { throw BenchError.interrupted }
            } catch {
                tools.stop(recorder)
                throw error
            }
            let played = Date().timeIntervalSince(started)
            usleep(UInt32((marginSeconds + Double(template.count) / Double(rate)) * 1e6))
            tools.stop(recorder)
            let samples = readFloats(recording)
            results.append(
                CompareReport.MethodResult(
                    method: method, onsets: finder.onsets(in: samples).map(\.frame), scheduled: cueCount,
                    everyFrames: everySeconds.frame(atRate: rate), rate: rate, secondsToPlay: played))
        }
        load.stop()
        conditions.loadAverageAfter = MachineConditions.loadAverage()
        return CompareReport(
            conditions: conditions, server: server, sink: sinkName, ownSink: module != nil, rate: rate,
            everySeconds: everySeconds.doubleValue, cues: cueCount, sound: sound, methods: results)
    }

    private func render(_ pattern: Pattern, to path: String, bank: SoundBank) throws {
        var request = RenderRequest(pattern: pattern, outputPath: path)
        request.sampleRate = rate
        request.channels = 1
        request.encoding = .float32
        _ = try OfflineRender.run(request, bank: bank)
    }

    /// The sink asked for, or a null sink of the benchmark's own (and its module, to unload).
    private func openSink(_ tools: SoundServerTools) throws -> (String, String?) {
        if let sink { return (sink, nil) }
        // A run that was killed could not remove its sink: the next one does.
        let modules = (try? tools.run(tools.pactl, ["list", "short", "modules"])) ?? ""
        for line in modules.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count >= 3, let owner = fields[2].firstMatch(of: /sink_name=gong_bench_([0-9]+)/),
                let pid = Int32(owner.1), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            _ = try? tools.run(tools.pactl, ["unload-module", String(fields[0])])
        }
        let name = "gong_bench_\(getpid())"
        let module = try tools.run(
            tools.pactl,
            [
                "load-module", "module-null-sink", "sink_name=\(name)", "rate=\(rate)", "format=float32le",
                "channels=2", "sink_properties=device.description=gong-bench"
            ]
        ).trimmingWhitespace()
        return (name, module)
    }

    private func play(
        _ method: Method, sink: String, tools: SoundServerTools, interruption: BenchInterruption, cueFile: String,
        sessionFile: String, bank: SoundBank
    ) throws {
        let every = everySeconds.doubleValue
        let slack = Double(cueCount) * (every + 5) + 30
        switch method {
        case .gong:
            let session = try GongSession(
                pattern: pattern, options: SessionOptions(device: "pulse:\(sink)"), bank: bank)
            session.start()
            _ = interruption.whileWaiting(endedBy: { try? session.send(.halt) }) { session.waitForReport() }
        case .sleepLoop:
            // What a person writes: sleep, play, again; every cue waits for the one before.
            let script =
                "i=0; while [ $i -lt \(cueCount) ]; do sleep \(every); paplay --device=\"$1\" \"$0\"; i=$((i+1)); done"
            try tools.run(tools.shell, ["-c", script, cueFile, sink], timeoutSeconds: slack)
        case .deadlineLoop:
            // Better: each cue at its own deadline on CLOCK_MONOTONIC, paplay started without
            // waiting for the one before.
            let start = MonotonicTime.now().nanoseconds
            var players: [Subprocess] = []
            defer {
                for player in players {
                    if interruption.isRequested { tools.stop(player) } else { player.waitUntilExit() }
                }
            }
            for index in 0..<cueCount {
                let deadline = start + Int64((Double(index) * every * 1e9).rounded())
                // To the deadline in steps of at most 100 ms, to hear an interruption; the
                // last step ends on the deadline itself.
                while !interruption.isRequested {
                    let step = min(deadline, MonotonicTime.now().nanoseconds + 100_000_000)
                    var wake = timespec(tv_sec: Int(step / 1_000_000_000), tv_nsec: Int(step % 1_000_000_000))
                    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
                    if step == deadline { break }
                }
                if interruption.isRequested { return }
                players.append(try tools.start(tools.paplay, ["--device=\(sink)", cueFile]))
            }
        case .wholeFile:
            try tools.run(tools.paplay, ["--device=\(sink)", sessionFile], timeoutSeconds: slack)
        }
    }

    private func readFloats(_ path: String) -> [Float] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.withUnsafeBytes { raw in
            Array(raw.bindMemory(to: Float.self).prefix(data.count / MemoryLayout<Float>.size))
        }
    }
}
