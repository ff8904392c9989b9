import Foundation
import GongAudio
import Testing

/// A sound server the live tests play through, each with a null sink named gong_test whose
/// monitor records exactly what was played, started by the project's own script when missing:
/// PulseAudio (scripts/test-pulse.sh; the one the environment reaches by default) and PipeWire
/// (scripts/test-pipewire.sh; a private rig, reached through the PULSE_SERVER it prints). Under
/// `make test` and on CI both must start; elsewhere a test is skipped with the reason if one
/// cannot (`skipTest`).
enum SoundServer: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case pulseAudio, pipeWire

    var testDescription: String { self == .pulseAudio ? "PulseAudio" : "PipeWire" }

    /// Whether a sound heard `frames` off where it should be is a slip the server makes
    /// unasked and untold, which no client can prevent: none on PulseAudio; on PipeWire 0.3.65
    /// one or two whole quanta (256 frames), idle or loaded (bench/RESULTS.md, "Latency"). gong
    /// must then not claim the frame.
    func isServersOwnSlip(frames: Int) -> Bool {
        self == .pipeWire && frames != 0 && frames % 256 == 0 && abs(frames) <= 512
    }

    static let scriptsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts").path
    var scriptPath: String {
        SoundServer.scriptsDirectory + (self == .pulseAudio ? "/test-pulse.sh" : "/test-pipewire.sh")
    }

    /// What the script made of it: the environment a client needs to reach the server (nil when
    /// it could not be started), or why not.
    struct Setup: Sendable {
        var environment: [String: String]?
        var problem: String
    }

    private static let pulseAudioSetup = ServerSetup { SoundServer.pulseAudio.start() }
    private static let pipeWireSetup = ServerSetup { SoundServer.pipeWire.start() }
    var setup: Setup { (self == .pulseAudio ? SoundServer.pulseAudioSetup : SoundServer.pipeWireSetup).current }

    /// The variables a child process (gong, parec, pactl) needs to reach this server.
    var environment: [String: String] { setup.environment ?? [:] }

    /// Runs the script (idempotent: it reuses a server that answers) and reads what it printed.
    func start() -> Setup {
        do {
            let scratch = try ScratchDirectory()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [scriptPath]
            let output = Pipe()
            process.standardOutput = output
            FileManager.default.createFile(atPath: scratch.file("stderr"), contents: nil)
            process.standardError = FileHandle(forWritingAtPath: scratch.file("stderr"))
            try process.run()
            // The script's background processes hold none of its descriptors: this ends with it.
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let problem = ((try? String(contentsOfFile: scratch.file("stderr"), encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0 else {
                return Setup(
                    environment: nil, problem: "\(scriptPath) exited with \(process.terminationStatus): \(problem)")
            }
            switch self {
            case .pulseAudio:
                return Setup(environment: [:], problem: "")
            case .pipeWire:
                let address = printed.split(separator: "\n").last.map(String.init) ?? ""
                guard address.hasPrefix("unix:") else {
                    return Setup(environment: nil, problem: "\(scriptPath) printed no server address: \(printed)")
                }
                // Native clients find the server's socket in its runtime directory.
                let runtime = String(address.dropFirst("unix:".count).dropLast("/pulse/native".count))
                return Setup(environment: ["PULSE_SERVER": address, "PIPEWIRE_RUNTIME_DIR": runtime], problem: "")
            }
        } catch {
            return Setup(environment: nil, problem: "\(scriptPath) could not run: \(error)")
        }
    }

    /// Ends the test, with the reason, when the server could not be started: a failure under
    /// `make test` and on CI, a skip elsewhere (`skipTest`).
    /// The PipeWire rig is checked again first (the script is idempotent, and restarts a rig
    /// whose session manager is gone): WirePlumber 0.4.13 segfaults when a sink a stream played
    /// on after it was made again is destroyed, which the named-sink test now avoids; a graph
    /// without its session manager links no stream, and every later test would fail for it.
    func require() throws {
        if self == .pipeWire, setup.environment != nil {
            _ = try? runTool("/bin/bash", [scriptPath])
        }
        let setup = self.setup
        if setup.environment == nil {
            try skipTest("no \(testDescription) server with its gong_test null sink started (\(setup.problem))")
        }
    }

    /// Runs `body` with the server's variables in this process's own environment, where libpulse
    /// reads PULSE_SERVER as a client connects (for PulsePCM in the test process itself). The
    /// suites that use it run serialized, and the real-time suites run alone (`--no-parallel`).
    func inThisProcess<T>(_ body: () throws -> T) throws -> T {
        let saved = environment.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (key, value) in environment { setenv(key, value, 1) }
        defer {
            for (key, value) in saved {
                if let value { setenv(key, value, 1) } else { unsetenv(key) }
            }
        }
        return try body()
    }
}

/// The ways gong reaches a sound server: as a PulseAudio client of its own (`pulse`), through
/// ALSA's plugin (`default`, which libasound2-plugins routes to the server while it runs; the
/// plugin reads PULSE_SERVER too), and, on PipeWire, as a native stream on its graph (`pipewire`).
enum SoundServerRoute: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case pulseClient, alsaPlugin, pipeWireStream

    var device: String {
        switch self {
        case .pulseClient: "pulse"
        case .alsaPlugin: "default"
        case .pipeWireStream: "pipewire"
        }
    }
    var testDescription: String { device }
}

/// A server and a route that reaches it: every route on the server it serves.
struct LiveRoute: CustomTestStringConvertible, Sendable {
    let server: SoundServer
    let route: SoundServerRoute

    static let all: [LiveRoute] = SoundServer.allCases.flatMap { server in
        SoundServerRoute.allCases.filter { $0 != .pipeWireStream || server == .pipeWire }.map {
            LiveRoute(server: server, route: $0)
        }
    }
    /// The routes gong's own clients take (not ALSA's plugin).
    static let ownClients = all.filter { $0.route != .alsaPlugin }
    /// Each server's own way in, gong's PulseAudio client on PulseAudio and gong's stream on
    /// PipeWire's graph: where `make test` plays the minute to the frame, a stopped process and
    /// a restarted server. On the others (`otherWays`: ALSA's plugin on both, gong's client
    /// through pipewire-pulse) those are `make test-long`'s (`LongRoundPulseTests`), and
    /// `make test` plays them in its shorter tests (latency, priority, a pause).
    static let eachServersOwn = all.filter {
        ($0.server == .pulseAudio && $0.route == .pulseClient) || $0.route == .pipeWireStream
    }
    static let otherWays = all.filter { live in
        !eachServersOwn.contains { $0.server == live.server && $0.route == live.route }
    }

    var testDescription: String { "\(server.testDescription) \(route.device)" }
}

/// The process's environment with `extra` over it, and the history and session state in this
/// test run's scratch directory (never the user's) unless `extra` names its own.
func environment(with extra: [String: String]) -> [String: String] {
    ProcessInfo.processInfo.environment.merging(scratchState) { $1 }.merging(extra) { $1 }
}

/// Where gong run by the tests keeps its history and state, unless a test gives its own.
let scratchState: [String: String] = {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("gong-cli-state-\(getpid())").path
    return ["XDG_DATA_HOME": base + "/data", "XDG_STATE_HOME": base + "/state"]
}()

/// Starts gong in the background with its standard output on a pipe (standard error dropped).
func startGong(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (
    process: Process, output: Pipe
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: gongExecutable)
    process.arguments = arguments
    process.environment = environment(with: extra)
    let output = Pipe()
    process.standardOutput = output
    process.standardError = Pipe()
    try process.run()
    return (process, output)
}

/// Runs a tool to its end, its output dropped; its exit status.
func runTool(_ path: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = environment(with: extra)
    process.standardOutput = Pipe()
    process.standardError = Pipe()
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Reads a headless `--json` session of four 3 s ticks (`LivePulseTests.pattern`, 12 s) to its
/// end, whose device went away once and came back: it said so once, naming the device, came
/// back and resumed by itself, completed every cycle and exited 0.
func expectOneLossAndReturn(
    of process: Process, output out: Pipe, read: String = "", device: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    // A session that never comes back must fail the test, not hold the run: once, under load,
    // gong hung closing the JACK client of a server that had gone (libjack's jack_client_close
    // waiting on a lock, the session's lock held meanwhile). The session is seconds long.
    let limit = 120
    let watchdog = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(limit), execute: watchdog)
    defer { watchdog.cancel() }
    let output = read + String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(
        process.terminationReason == .exit, "gong had not ended \(limit) s after its device went: killed",
        sourceLocation: sourceLocation)
    #expect(process.terminationStatus == 0, "\(output)", sourceLocation: sourceLocation)
    let events = GongEvents(output)
    let lost = events.all("deviceLost").compactMap { $0["message"] as? String }
    #expect(
        lost.count == 1 && lost.allSatisfy { $0.hasPrefix("\(device): ") }, "\(output)", sourceLocation: sourceLocation)
    #expect(
        events.all("deviceBack").map { $0["resumed"] as? Bool } == [true], "\(output)", sourceLocation: sourceLocation)
    let finished = try #require(events.finished, "\(output)", sourceLocation: sourceLocation)
    #expect(
        finished["cycles"] as? Int == 4 && finished["deviceLosses"] as? Int == 1
            && finished["stoppedEarly"] as? Bool == false,
        "\(finished)", sourceLocation: sourceLocation)
}

/// Reads gong's `--json` output until a line of `type` has come `count` times (or the output
/// ends): what was read, for whoever reads the rest. How a test waits for gong to get somewhere,
/// rather than for a guessed time.
func readEvents(from out: Pipe, until type: String, count: Int = 1) -> String {
    var output = ""
    while GongEvents(output).all(type).count < count {
        let data = out.fileHandleForReading.availableData
        if data.isEmpty { break }
        output += String(decoding: data, as: UTF8.self)
    }
    return output
}

/// gong's `--json` output, read once it has ended: one event per line.
struct GongEvents {
    let all: [[String: Any]]

    init(_ output: String) {
        all = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func all(_ type: String) -> [[String: Any]] { all.filter { $0["type"] as? String == type } }
    /// The session's own account of itself (xruns, cues, cycles, timing), printed last.
    var finished: [String: Any]? { all("finished").last }

    /// The frames gong told it lost (its xruns), each with the session frame where the loss
    /// began (the event's frame is where the session went on from).
    var losses: [Loss] { Loss.told(by: all("xrun")) }

    struct Loss: CustomStringConvertible {
        let from: Int
        let frames: Int

        /// The losses `xrun` events tell.
        static func told(by xruns: [[String: Any]]) -> [Loss] {
            xruns.compactMap { event in
                guard let frame = event["frame"] as? Int, let lost = event["lostFrames"] as? Int else { return nil }
                return Loss(from: frame - lost, frames: lost)
            }
        }

        /// Whether session frame `frame` (a cue's, a pause's) falls in this loss, or within a cycle
        /// (256 frames) of it: a loss is counted a cycle at a time, and told a cycle late on JACK.
        func touches(frame: Int) -> Bool { (from - 256...from + frames + 256).contains(frame) }

        var description: String { "\(frames) frames from \(from)" }
    }

    /// How late gong's account says each cue scheduled at `cueFrames` was heard: by the rest of
    /// a loss its onset fell in (the session moved on past the lost frames, so the cue starts
    /// where the loss ends), else 0 — on its frame.
    func lateness(ofCuesAt cueFrames: [Int]) -> [Int] {
        cueFrames.map { cue in
            losses.first { ($0.from..<$0.from + $0.frames).contains(cue) }.map { $0.from + $0.frames - cue } ?? 0
        }
    }

    /// When gong finally says each cue was heard (seconds, CLOCK_MONOTONIC), in the order told.
    var saidAudible: [Double] { finallySaid("audible") }

    /// How late gong finally says each cue was heard, in frames, in the order told.
    var saidLate: [Int] { finallySaid("lateFrames") }

    /// Each interval between cues scheduled `apart` frames apart, by gong's account: the schedule,
    /// and how late gong finally says the cues at either end were heard.
    func accountedIntervals(apart: Int) -> [Int] {
        let late = saidLate
        return zip(late, late.dropFirst()).map { apart + $1 - $0 }
    }

    /// `key` of each cue as gong finally tells it, in the order told: its `cue` line's, or that
    /// of the last `cueHeardLate` told of it since (same `frame`: a loss came behind it once it
    /// was out of gong's reach, so it was heard later than its line said).
    private func finallySaid<Value>(_ key: String) -> [Value] {
        let corrected = Dictionary(
            all("cueHeardLate").compactMap { event in
                (event["frame"] as? Int).flatMap { frame in (event[key] as? Value).map { (frame, $0) } }
            }, uniquingKeysWith: { $1 })
        return all("cue").compactMap { cue in
            guard let frame = cue["frame"] as? Int, let value = cue[key] as? Value else { return nil }
            return corrected[frame] ?? value
        }
    }

    /// The intervals a recorder that skips what gong lost (JACK's, fed by gong's port, runs in
    /// the cycles gong runs in) hears between cues scheduled at `cueFrames`: each the schedule
    /// less the frames gong told it lost within it. With no loss told, the schedule itself.
    func intervalsSkippingLosses(cueFrames: [Int]) -> [Int] {
        zip(cueFrames, cueFrames.dropFirst()).map { from, to in
            to - from - losses.filter { (from..<to).contains($0.from) }.map(\.frames).reduce(0, +)
        }
    }
}

/// Records the null sink's monitor: exactly what was played, sample for sample.
final class MonitorRecorder {
    let path: String
    private let process = Process()

    /// - Parameters:
    ///   - sink: the null sink whose monitor is recorded.
    ///   - latencyMs: parec's latency; a long one keeps the recorder from setting PipeWire's quantum.
    init(path: String, server: SoundServer = .pulseAudio, sink: String = "gong_test", latencyMs: Int? = nil) throws {
        self.path = path
        process.environment = environment(with: server.environment)
        let arguments =
            ["-d", "\(sink).monitor", "--format=float32le", "--rate=48000", "--channels=1", "--raw", path]
            + (latencyMs.map { ["--latency-msec=\($0)"] } ?? [])
        Self.setUpParec(process, arguments)
        // Not the test runner's output: a recorder left running by a failed test would hold
        // that pipe open, and `swift test` would wait for it for ever.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Recording once samples arrive (the sink's keeper keeps them coming), not after a guess
        // at how long parec takes to connect on a busy machine.
        for _ in 0..<200 where process.isRunning {
            if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 { return }
            usleep(25_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        throw POSIXError(.EIO)
    }

    /// Whether the recorder can be made real-time: as root with chrt, and where the system grants
    /// SCHED_FIFO, which a control group without real-time time refuses even to root (chrt then
    /// exits at once, "Operation not permitted", and with it the recorder). Tried once.
    /// `process` made parec with `arguments`: real-time when it may be (root, as on CI), for a
    /// recorder must not drop what it hears when the machine is busy.
    static func setUpParec(_ process: Process, _ arguments: [String]) {
        if mayRunRealTime {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chrt")
            process.arguments = ["-f", "60", "/usr/bin/parec"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
            process.arguments = arguments
        }
    }

    static let mayRunRealTime: Bool = {
        guard geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chrt") else { return false }
        return (try? runTool("/usr/bin/chrt", ["-f", "60", "/bin/true"])) == 0
    }()

    /// A test that failed before `stop` leaves no recorder behind.
    deinit { end() }

    /// Ends the recording at once, without reading it.
    func end() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() -> [Float] {
        finish()
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Ends the recording and leaves it in its file (`path`), for a recording too long to read
    /// into memory whole (`MappedRecording`).
    func finish() {
        // Let the last samples arrive, then end it. SIGKILL, because a child of the test runner
        // may inherit a blocked SIGTERM; parec writes raw samples as they come, so nothing is lost.
        usleep(300_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Onsets: the first sample above the threshold after at least a second of quiet. Any sequence
/// of samples: an array, or one computed as it is read (the steps between a mapped recording's
/// samples, `LivePulseTests.stepOnsets`).
func onsets(in samples: some Sequence<Float>, threshold: Float = 0.01, quietFrames: Int = 48000) -> [Int] {
    var result: [Int] = []
    var lastLoud = -quietFrames - 1
    for (index, sample) in samples.enumerated() where abs(sample) > threshold {
        if index - lastLoud > quietFrames { result.append(index) }
        lastLoud = index
    }
    return result
}

@Suite(.serialized) struct LivePulseTests {
    /// Where `pattern(in:duration:)` schedules its first `count` cues, in session frames at
    /// 48 kHz: after the 1 s warm-up, every 3 s.
    static func cueFrames(_ count: Int) -> [Int] { (0..<count).map { 48000 + $0 * 144_000 } }

    /// A pattern of `duration` after a 1 s warm-up: one phase `length` long, again and again,
    /// `cue` (a bank name or a file) at the start of each.
    static func pattern(
        in scratch: ScratchDirectory, duration: String, length: String = "3s", cue: String = "woodblock"
    ) throws -> String {
        let path = scratch.file("ticks.toml")
        try """
        summary = "a cue every \(length)"
        warmup = "1s"
        duration = "\(duration)"
        [[phases]]
        name = "tick"
        length = "\(length)"
        cue = "\(cue)"
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// 60 s live at gong's default latency, recorded from the sink's monitor: every interval
    /// between heard onsets is the scheduled 3 s = 144 000 frames, to the frame, and gong's own
    /// account agrees — no xrun, every cue on its frame. PipeWire's own stream is heard on the
    /// graph's clock (`PipeWireTap`), every interval to the frame, and a cycle the graph ran
    /// without gong told. One attempt: a run the machine disturbed is a failure, not a reason to
    /// try again.
    @Test(arguments: LiveRoute.eachServersOwn)
    func aMinuteLiveHasEveryIntervalExactToTheFrame(_ live: LiveRoute) throws {
        let (server, route) = (live.server, live.route)
        try server.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "60s")
        let recorder = try MonitorRecorder(path: scratch.file("monitor.raw"), server: server)
        let tap =
            route == .pipeWireStream
            ? try PipeWireTap(sink: "gong_test", environment: server.environment, seconds: 120) : nil
        // gong's own account of its calls beside the tap's, for whoever reads a failure.
        let cycleTrace = scratch.file("gong-cycles.txt")
        let result = try runGong(
            ["run", pattern, "--device", route.device, "--channels", "1", "--rate", "48000", "--json"],
            home: ProcessInfo.processInfo.environment["HOME"],
            environment: server.environment.merging(tap == nil ? [:] : ["GONG_PIPEWIRE_TRACE": cycleTrace]) { $1 })
        let recording = recorder.stop()
        let onGraphsClock = tap?.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        let finished = try #require(events.finished, "\(result.stdout)")
        #expect(finished["cycles"] as? Int == 20 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        // PipeWire's own stream counts every cycle the graph ran without it, to the frame (a busy
        // machine makes some, an idle one now and then too), moves on by exactly that and renders
        // again what it had written after, and says audio was lost.
        // Every other route must lose nothing.
        let losesCounted = route == .pipeWireStream && !events.losses.isEmpty
        #expect(
            finished["xruns"] as? Int == events.losses.count && (losesCounted || events.losses.isEmpty), "\(finished)")
        // A cue a loss came behind once it was rendered is said late by that loss (as on JACK);
        // with no loss, every cue is on its frame.
        let cueFrames = Self.cueFrames(20)
        let late = events.lateness(ofCuesAt: cueFrames)
        #expect(
            finished["cues"] as? Int == 20
                && LiveJackTests.lateByLosses(said: events.saidLate, onsets: late, losses: events.losses)
                && (losesCounted || finished["maxCueLatenessFrames"] as? Int == 0),
            "gong lost \(events.losses): \(events.all("cue")), heard late \(events.all("cueHeardLate")); \(finished)")
        #expect(
            events.all("cue").compactMap { $0["frame"] as? Int } == zip(cueFrames, late).map(+),
            "\(events.all("cue"))")
        let heard = onsets(in: recording)
        let intervals = zip(heard, heard.dropFirst()).map { $1 - $0 }
        let slips = Self.unexplained(intervals, events: events)
        // parec judges the routes that have no tap; on PipeWire's own stream it is printed only
        // (the graph's clock judges, below).
        if route != .pipeWireStream {
            #expect(heard.count == 20, "20 woodblocks heard, not \(heard.count)")
            #expect(
                intervals.count == 19 && slips.count <= 1
                    && slips.allSatisfy { server.isServersOwnSlip(frames: $0 - 144_000) },
                "intervals \(intervals); gong's account: \(finished)")
        }
        // gong never claims more than was heard: a recording off its frames is never "onFrame".
        // Of an exact recording gong's own client says what its reports can confirm: on
        // PulseAudio, whose reports agree within a millisecond on a calm machine, every cue on its
        // frame — or, when a busy one puts them further apart (two busy loops: 1.05 ms once),
        // that they are too rough to confirm it, still well inside the 8 ms within which the
        // client takes them as honest; through pipewire-pulse, whose reports cannot confirm a
        // frame however closely they agree, the latter only.
        let verdict = finished["heard"] as? String
        // PipeWire's own stream is timed by the graph's clock, and gong must confirm it
        // (`onFrame`). It is judged on that clock alone (`PipeWireTap`), a witness that tells
        // its own holes: parec through pipewire-pulse is a follower that splices what it gets,
        // and on a busy machine now and then loses a quantum (256 frames) that no stream lost.
        if route == .pipeWireStream, let onGraphsClock {
            #expect(
                verdict == (losesCounted ? "audioLost" : "onFrame"), "intervals \(Set(intervals).sorted()); \(finished)"
            )
            // On the graph's own clock, where a cycle the whole graph missed is a hole and not a
            // splice, every interval is gong's account of it: the schedule, and the lateness gong
            // finally told of the cues at either end (what gong counted lost moved its session
            // on, so the cues after it kept their frames; a cue a loss came behind once rendered
            // is heard late by it, and said so). An onset the tap cannot place (it began in a
            // cycle the tap itself missed) is stepped over, and the span across it judged whole;
            // at most two may be.
            let onsets = onGraphsClock.placedOnsets()
            let exact = onGraphsClock.intervals()
            let accounted = events.accountedIntervals(apart: 144_000)
            let spans = TapRecording.spans(of: onsets, against: accounted)
            let offSpan = spans.first { $0.heard != $0.expected }
            #expect(
                onsets.count == 20 && onsets.filter(\.placed).count >= 18 && accounted.count == 19
                    && spans.allSatisfy { $0.heard == $0.expected },
                "on the graph's clock: \(TapRecording.describe(exact)), by gong's account \(accounted) (tap missed \(onGraphsClock.missedFrames) frames, moved \(onGraphsClock.rereadCycles) cycles back, found buffers stacked \(onGraphsClock.stackedCalls) times, cycle lengths from (frame, frames) \(onGraphsClock.cycleLengthChanges.prefix(20)); its holes (frame, frames) \(onGraphsClock.holes), its calls in doubt (frame, frames) \(onGraphsClock.doubtfulRuns.prefix(40)), onsets at \(onsets.map(\.frame))), gong lost \(events.losses); \(finished); \(CycleTrace(path: cycleTrace).described(fromOnset: offSpan?.from, toOnset: offSpan?.to))"
            )
        } else if !intervals.allSatisfy({ $0 == 144_000 }) {
            #expect(verdict != "onFrame", "gong claimed every cue on its frame: \(finished)")
        }
        if route == .pulseClient {
            let jitterMs = finished["jitterMs"] as? Double ?? .infinity
            let clientBoundMs = Double(PulsePCM.reportJitterNanoseconds) / 1e6
            let rough = verdict == "roughReports" && (server == .pipeWire || jitterMs < clientBoundMs)
            #expect(
                (verdict == "onFrame" && server == .pulseAudio) || rough
                    || (server == .pipeWire && verdict == "offFrame" && !slips.isEmpty),
                "\(finished)")
        }
        #expect(events.all("cue").allSatisfy { $0["offFrames"] == nil } || verdict != "onFrame", "\(events.all("cue"))")
        print(
            "\(server.testDescription) \(route.device): heard intervals \(Set(intervals).sorted()),"
                + " lost \(events.losses.map(\.frames)),"
                + (onGraphsClock.map {
                    " on the graph's clock \(Set($0.intervals().map { $0 ?? -1 }).sorted()) (the tap found buffers stacked"
                        + " \($0.stackedCalls) times),"
                } ?? "")
                + " gong's account \(finished)"
        )
    }

    /// The recorded intervals between cues 3 s apart that neither are the schedule nor show the
    /// audio gong counted lost: when the graph skipped cycles (its driver woke late), the
    /// monitor recorded none of them either, and an interval is then the schedule less exactly
    /// what gong told it lost within it (`GongEvents.intervalsSkippingLosses`); when gong's
    /// stream alone missed them, the recording went on and the interval is the schedule.
    static func unexplained(_ intervals: [Int], events: GongEvents, cues: Int = 20) -> [Int] {
        let skipping = events.intervalsSkippingLosses(cueFrames: cueFrames(cues))
        return zip(intervals, skipping).filter { $0 != 144_000 && $0 != $1 }.map(\.0)
    }

    /// The witness proved against a late call of its own, as the JACK tap is
    /// (`LiveJackTests.theTapLateForACueNeverPlacesItOffItsFrame`): the PipeWire tap begins its
    /// calls at the six onsets 3, 8, 11, 3, 8 and 14 ms late (a cycle here is 5.3 ms). PipeWire
    /// hands a capture stream buffers of its own, each with its cycle's position, so a late call
    /// still reads its own cycle (traced: the position read before and after an 8 ms sleep is the
    /// same) and the graph runs the next cycles without the tap, a hole where they belong. Every
    /// onset the tap places is on its frame by gong's account. A long round, run by
    /// `LongRoundPulseTests` (`make test-long`).
    func thePipeWireTapLateForACueNeverPlacesItOffItsFrame() throws {
        try SoundServer.pipeWire.require()
        let environment = SoundServer.pipeWire.environment
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "18s")
        let late: [UInt32] = [3000, 8000, 11_000, 3000, 8000, 14_000]
        let tap = try PipeWireTap(sink: "gong_test", environment: environment, seconds: 60, lateAtOnsets: late)
        let result = try runGong(
            ["run", pattern, "--device", "pipewire", "--channels", "1", "--rate", "48000", "--json"],
            home: ProcessInfo.processInfo.environment["HOME"], environment: environment)
        let lateCalls = tap.lateCalls
        let recording = tap.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let detail = recording.judgedLateAtOnsets(lateCalls: lateCalls, gongOutput: result.stdout)
        // A call 11 ms late always leaves the graph a cycle to run without the tap.
        #expect(recording.missedFrames > 0, "\(detail)")
        print("PipeWire tap late at each onset: \(detail)")
    }

    /// PipeWire at rest, as a desktop is when nothing else plays: the sink gong_rest has no
    /// keeper, so the graph runs at the quantum gong's own stream asks for (the recorder asks for
    /// a longer one). A minute of woodblocks 3 s apart: every interval exact, no underrun, and
    /// gong confirms it (`onFrame`). Through pipewire-pulse this set-up ran dry every few
    /// seconds; the old rig, always playing a 20 ms stream, never saw it.
    /// A long round, run by `LongRoundPulseTests` (`make test-long`).
    func aMinuteOnPipeWireAtRestIsExactAndConfirmed() throws {
        let (intervals, events) = try Self.minuteOnPipeWireAtRest(device: "pipewire:gong_rest")
        let finished = try #require(events.finished)
        #expect(
            intervals.count == 19 && Self.unexplained(intervals, events: events).isEmpty,
            "intervals \(intervals), gong lost \(events.losses)")
        // A cycle the graph ran without gong (a busy machine) is counted to the frame and what
        // followed it rendered again on its time, as on the rig's keeper sink, and gong then
        // says audio was lost.
        #expect(
            finished["xruns"] as? Int == events.losses.count
                && finished["heard"] as? String == (events.losses.isEmpty ? "onFrame" : "audioLost")
                && finished["cues"] as? Int == 20,
            "\(finished)")
        print("PipeWire at rest, pipewire: heard intervals \(Set(intervals).sorted()), gong's account \(finished)")
    }

    /// A minute of woodblocks 3 s apart played on the PipeWire rig's gong_rest (no keeper),
    /// recorded from its monitor at a latency long enough not to set the graph's quantum: the
    /// intervals between the onsets heard, and gong's events (it ran to its end, exit 0).
    static func minuteOnPipeWireAtRest(device: String) throws -> (intervals: [Int], events: GongEvents) {
        let server = SoundServer.pipeWire
        try server.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "60s")
        let recorder = try MonitorRecorder(
            path: scratch.file("monitor.raw"), server: server, sink: "gong_rest", latencyMs: 200)
        let result = try runGong(
            ["run", pattern, "--device", device, "--channels", "1", "--json"],
            home: ProcessInfo.processInfo.environment["HOME"], environment: server.environment)
        let recording = recorder.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        _ = try #require(events.finished, "\(result.stdout)")
        let heard = onsets(in: recording)
        #expect(heard.count == 20, "20 woodblocks heard, not \(heard.count)")
        return (zip(heard, heard.dropFirst()).map { $1 - $0 }, events)
    }

    /// gong's own PulseAudio client through pipewire-pulse at rest: nothing else on gong_rest, so
    /// the graph runs at a large quantum (2048 frames on the rig) and the server's timing reports
    /// are up to that stale. A minute of woodblocks 3 s apart: every recorded interval exact, no
    /// xrun, and gong says `roughReports`, as its reports cannot confirm the frame — never
    /// `onFrame`, and never `audioLost`: stale reports read as tightly as PulseAudio's look like
    /// audio lost, and would move the session on and put the cues after early (`PulseReportAge`).
    /// A long round, run by `LongRoundPulseTests` (`make test-long`).
    func aMinuteThroughPipeWirePulseAtRestLosesNothing() throws {
        let (intervals, events) = try Self.minuteOnPipeWireAtRest(device: "pulse:gong_rest")
        let finished = try #require(events.finished)
        #expect(intervals.count == 19 && intervals.allSatisfy { $0 == 144_000 }, "intervals \(intervals)")
        #expect(finished["xruns"] as? Int == 0 && events.all("xrun").isEmpty, "\(finished)")
        #expect(finished["cues"] as? Int == 20 && finished["maxCueLatenessFrames"] as? Int == 0, "\(finished)")
        let verdict = finished["heard"] as? String
        #expect(verdict == "roughReports", "\(finished)")
        print("PipeWire at rest, pulse: heard intervals \(Set(intervals).sorted()), gong's account \(finished)")
    }

    /// gong's own client on PulseAudio is stopped for a second just after a cue, longer than its
    /// 500 ms buffer: the server runs dry, plays silence, and when gong goes on, drops the first
    /// frames it writes. gong tells the loss within half a second of going on, and as the
    /// recording of the sink shows it: it moves the session on by exactly what it told, so the
    /// recorded interval across the stop is the schedule's 144 000 frames give or take what the
    /// measure can be off, and every other interval is exact. The measure (`UnderrunMeasure`) is
    /// the server's count of the silence and two of its reports: it rounds to the nearest frame
    /// and its stamps place the sink within a fraction of one (a frame allowed for both), and the
    /// time between the two reports is read on the system clock, which the sink's clock drifts
    /// from: at the rate gong measured for it (`deviceClockPPM`) over at most the time from going
    /// on to the loss told, a few frames more (bench/RESULTS.md, stop 58).
    @Test func aOneSecondStopOnPulseAudioIsToldWithinHalfASecondAndWithinTheSinksDrift() throws {
        let server = SoundServer.pulseAudio
        try server.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "15s")
        let recorder = try MonitorRecorder(path: scratch.file("monitor.raw"), server: server)
        let (process, out) = try startGong(
            ["run", pattern, "--device", "pulse", "--channels", "1", "--rate", "48000", "--json"],
            environment: server.environment)
        // Just after the second cue (4 s), so the silence falls between it and the third (7 s).
        var output = readEvents(from: out, until: "cue", count: 2)
        usleep(300_000)
        kill(process.processIdentifier, SIGSTOP)
        usleep(1_000_000)
        kill(process.processIdentifier, SIGCONT)
        let resumed = MonotonicTime.now()
        var toldAfter: Double?
        while true {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            output += String(decoding: data, as: UTF8.self)
            if toldAfter == nil, !GongEvents(output).all("xrun").isEmpty {
                toldAfter = MonotonicTime.now().seconds - resumed.seconds
            }
        }
        process.waitUntilExit()
        let recording = recorder.stop()
        #expect(process.terminationStatus == 0)
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["cycles"] as? Int == 5 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        // The stop is told, as one loss at least as long as the part of the second the buffer did
        // not cover; a busy machine may add an underrun of its own, told and judged alike.
        let lost = events.losses.map(\.frames)
        #expect(lost.contains { $0 >= 24_000 && $0 <= 72_000 }, "xruns lost \(lost) frames: \(finished)")
        #expect(finished["xruns"] as? Int == lost.count && finished["lostFrames"] as? Int == lost.reduce(0, +))
        let told = try #require(toldAfter, "no xrun told: \(output)")
        #expect(told < 0.5, "the loss was told \(told) s after gong went on")
        let heard = onsets(in: recording)
        let intervals = zip(heard, heard.dropFirst()).map { $1 - $0 }
        // The sink's drift across the part of the measure read on the system clock, in frames,
        // rounded up; an implausible rate (CueTiming.plausiblePPM) is no excuse.
        let ppm = (finished["timing"] as? [String: Any])?["deviceClockPPM"] as? Double ?? 0
        let drift = Int((min(abs(ppm), 1000) * told * 48_000 / 1e6).rounded(.up))
        // The stop falls between the second cue and the third.
        #expect(
            heard.count == 5 && abs(intervals[1] - 144_000) <= 1 + drift
                && intervals.enumerated().allSatisfy { $0.offset == 1 || $0.element == 144_000 },
            "recorded intervals \(intervals) (told lost \(lost), allowed 1 + \(drift) frames): \(finished)")
        print(
            "PulseAudio pulse, a 1 s stop: told \(told) s after going on, lost \(lost) frames;"
                + " recorded intervals \(intervals), the sink's drift \(ppm) ppm (allowed 1 + \(drift) frames)")
    }

    /// The process is stopped for a second mid-session, longer than its buffer: the session
    /// recovers, counts the xrun, moves its clock on and completes. On gong's own client on
    /// PulseAudio the loss is held to the frame
    /// (`aOneSecondStopOnPulseAudioIsToldWithinHalfASecondAndWithinTheSinksDrift`); here, gong's
    /// stream on PipeWire's graph, and in `make test-long` the other ways in.
    @Test(arguments: LiveRoute.eachServersOwn.filter { $0.route == .pipeWireStream })
    func aStoppedProcessRecoversCountsTheXrunAndCompletes(_ live: LiveRoute) throws {
        let (server, route) = (live.server, live.route)
        try server.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "15s")
        let (process, out) = try startGong(
            ["run", pattern, "--device", route.device, "--channels", "1", "--json"],
            environment: server.environment)
        let stopSeconds = 1.0
        usleep(6_000_000)
        kill(process.processIdentifier, SIGSTOP)
        usleep(UInt32(stopSeconds * 1_000_000))
        kill(process.processIdentifier, SIGCONT)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["cycles"] as? Int == 5 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        // What the buffer held played on; at least most of the rest of the stop was lost. A
        // sound server may take longer to resume the stream, which is lost too. A busy machine
        // may add an xrun of its own, which is counted too; the stop is the one measured here,
        // and every one reported is counted.
        let latency = try #require(events.all("started").first?["latencyMs"] as? Double, "\(output)")
        let unbuffered = Int((stopSeconds - latency / 1000) * 48000)
        let lost = events.all("xrun").compactMap { $0["lostFrames"] as? Int }
        #expect(
            lost.contains { (unbuffered * 8 / 10...unbuffered + 100_000).contains($0) },
            "a \(stopSeconds) s stop with a \(latency) ms buffer: xruns lost \(lost) frames: \(output)")
        #expect(finished["xruns"] as? Int == lost.count, "\(finished), xrun events losing \(lost)")
        print("\(server.testDescription) \(route.device): xruns lost \(lost) frames; gong's account \(finished)")
    }

    /// The sound server itself goes away mid-session and comes back: the session pauses, gong
    /// reopens the device when it can and, with no terminal to wait for, resumes and completes.
    @Test(arguments: LiveRoute.eachServersOwn)
    func aSoundServerThatRestartsIsALostDeviceThatComesBack(_ live: LiveRoute) throws {
        let (server, route) = (live.server, live.route)
        try server.require()
        // Only a server the project's script started may be stopped, never a desktop's own.
        if server == .pulseAudio, try runTool("/usr/bin/pgrep", ["-f", "pulseaudio .*sink_name=gong_test"]) != 0 {
            try skipTest("the PulseAudio server running is not the test's own: not stopping it")
        }
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "12s")
        let (process, out) = try startGong(
            ["run", pattern, "--device", route.device, "--channels", "1", "--json"],
            environment: server.environment)
        let read = readEvents(from: out, until: "cue", count: 2)
        switch server {
        case .pulseAudio:
            _ = try runTool("/usr/bin/pulseaudio", ["-k"])
        case .pipeWire:
            // The script ends only the rig it started itself (its private runtime directory).
            if try runTool("/bin/bash", [server.scriptPath, "stop"]) != 0 {
                process.terminate()
                process.waitUntilExit()
                try skipTest("the PipeWire running is not the test script's own: not stopping it")
            }
        }
        usleep(1_500_000)
        #expect(try runTool("/bin/bash", [server.scriptPath]) == 0, "the test's server started again")
        try expectOneLossAndReturn(of: process, output: out, read: read, device: route.device)
    }

    /// A PipeWire sink named with `pipewire:NODE` is removed mid-session and made again: the
    /// stream is not moved to another sink (another clock) but lost; the session pauses, gong
    /// reopens it once the sink is back and, headless, resumes and completes.
    @Test func aNamedPipeWireSinkThatGoesAndComesBackIsALostDeviceThatReturns() throws {
        let server = SoundServer.pipeWire
        try server.require()
        let sink = "gong_gone_\(getpid())"
        let node =
            "{ factory.name=support.null-audio-sink node.name=\(sink) media.class=Audio/Sink object.linger=true"
            + " audio.position=[FL FR] audio.rate=48000 }"
        let tools = server.environment.merging(["XDG_RUNTIME_DIR": server.environment["PIPEWIRE_RUNTIME_DIR"] ?? ""]) {
            $1
        }
        // The sink made again is left in the rig (which `make test` ends): destroying it once a
        // stream has played on it kills Debian 12's WirePlumber (0.4.13) two seconds later, the
        // same with pw-play as with gong, and every PipeWire test after it would find the graph
        // without its session manager.
        #expect(try runTool("/usr/bin/pw-cli", ["create-node", "adapter", node], environment: tools) == 0)
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "12s")
        let (process, out) = try startGong(
            ["run", pattern, "--device", "pipewire:\(sink)", "--channels", "1", "--json"],
            environment: server.environment)
        let read = readEvents(from: out, until: "cue", count: 2)
        #expect(try runTool("/usr/bin/pw-cli", ["destroy", sink], environment: tools) == 0, "the sink removed")
        // Gone long enough for gong to find it gone and try again without it.
        let lost = readEvents(from: out, until: "deviceLost")
        usleep(1_000_000)
        #expect(try runTool("/usr/bin/pw-cli", ["create-node", "adapter", node], environment: tools) == 0)
        try expectOneLossAndReturn(of: process, output: out, read: read + lost, device: "pipewire:\(sink)")
    }

    /// A PipeWire daemon with no session manager makes a stream's node but links it nowhere:
    /// gong must not take the device for open (it once did, telling a loss and a return over and
    /// over while nothing was heard: bench/RESULTS.md, stop 55). It waits for a link, then says why
    /// nothing plays. A daemon of the test's own, in a runtime directory of its own.
    @Test func pipeWireWithoutItsSessionManagerIsNoDeviceAndSaysWhy() throws {
        let pipewire = "/usr/bin/pipewire"
        guard FileManager.default.isExecutableFile(atPath: pipewire) else { try skipTest("no \(pipewire)") }
        let scratch = try ScratchDirectory()
        let runtime = scratch.file("runtime")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false)
        chmod(runtime, 0o700)
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: pipewire)
        daemon.environment = environment(with: ["XDG_RUNTIME_DIR": runtime])
        daemon.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        daemon.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try daemon.run()
        defer {
            daemon.terminate()
            daemon.waitUntilExit()
        }
        var waited = 0
        while !FileManager.default.fileExists(atPath: runtime + "/pipewire-0") && waited < 100 {
            usleep(100_000)
            waited += 1
        }
        try #require(FileManager.default.fileExists(atPath: runtime + "/pipewire-0"), "the daemon made no socket")
        let pattern = try Self.pattern(in: scratch, duration: "12s")
        let result = try runGong(
            ["run", pattern, "--device", "pipewire", "--channels", "1", "--json"],
            environment: ["PIPEWIRE_RUNTIME_DIR": runtime])
        #expect(result.status == 69, "\(result)")
        #expect(result.stderr.contains("session manager"), "\(result.stderr)")
        #expect(
            !result.stdout.contains("deviceBack") && !result.stdout.contains("firstFrameAudible"), "\(result.stdout)")
    }

    /// Through a sound server the audio thread runs at a raised nice value, not SCHED_FIFO (see
    /// ThreadPriority), and so does ALSA's plugin's client thread; gong's own PulseAudio client
    /// has no such thread.
    @Test(arguments: LiveRoute.all)
    func aSoundServerIsFedAtRaisedPriority(_ live: LiveRoute) throws {
        let (server, route) = (live.server, live.route)
        try server.require()
        if geteuid() != 0 { try skipTest("only root may raise priorities here") }
        let (process, _) = try startGong(
            ["run", "box", "--cycles", "1", "--cue", "end=click", "--device", route.device, "--quiet"],
            environment: server.environment)
        defer { process.terminate(); process.waitUntilExit() }
        var threads: [String: (policy: Int, nice: Int)] = [:]
        for _ in 0..<100
        where threads["gong audio"] == nil || (route == .alsaPlugin && threads["threaded-ml"] == nil)
            || (route == .pipeWireStream && threads["pipewire-data"] == nil)
        {
            usleep(50_000)
            threads = [:]
            let tasks =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []
            for task in tasks {
                guard let (name, fields) = procStat("/proc/\(process.processIdentifier)/task/\(task)") else { continue }
                // Field 19 of stat is nice, field 41 the policy.
                if fields.count > 38, let nice = Int(fields[16]), let policy = Int(fields[38]) {
                    threads[name] = (policy, nice)
                }
            }
        }
        let audio = try #require(threads["gong audio"], "\(threads)")
        #expect(audio.policy == 0 && audio.nice == -10, "SCHED_OTHER at nice -10: \(audio)")
        #expect(threads["gong"]?.nice == 0, "the control thread is back at its own priority")
        switch route {
        case .pipeWireStream:
            // PipeWire's data thread runs the process callback: real-time, as pw-play's.
            let data = try #require(threads["pipewire-data"], "PipeWire's data thread: \(threads)")
            #expect(data.policy == 1, "SCHED_FIFO: \(data)")
        case .alsaPlugin:
            let client = try #require(threads["threaded-ml"], "PulseAudio's client thread: \(threads)")
            #expect(
                client.policy == 0 && client.nice == -10, "the plugin's thread inherited the raised priority: \(client)"
            )
        case .pulseClient:
            #expect(threads["threaded-ml"] == nil, "no client thread of libpulse's beside the audio thread: \(threads)")
        }
    }

    /// The latency asked for is the latency granted, though PulseAudio's plugin takes no fewer
    /// than three periods to a buffer (two periods of half the latency would give 1.5 times it).
    /// PipeWire's PulseAudio server asks for no less than 256 frames at a time (its
    /// `pulse.min.req`): three periods of it, 16 ms, are the least gong's own client is granted
    /// there, and gong says so.
    @Test(arguments: LiveRoute.all)
    func theLatencyAskedForIsGrantedThroughASoundServer(_ live: LiveRoute) throws {
        let (server, route) = (live.server, live.route)
        try server.require()
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("blip.toml")
        try "warmup = \"0s\"\ncycles = 1\n[[phases]]\nname = \"blip\"\nlength = \"250ms\"\n".write(
            toFile: pattern, atomically: true, encoding: .utf8)
        for milliseconds in [10.0, 100.0, 500.0] {
            let result = try runGong(
                ["run", pattern, "--device", route.device, "--json", "--latency", String(format: "%g", milliseconds)],
                home: ProcessInfo.processInfo.environment["HOME"], environment: server.environment)
            #expect(result.status == 0, "\(result.stderr)")
            let started = try #require(GongEvents(result.stdout).all("started").first, "\(result.stdout)")
            let granted = try #require(started["latencyMs"] as? Double, "\(started)")
            let grantable = server == .pipeWire && route == .pulseClient ? max(milliseconds, 16) : milliseconds
            #expect(abs(granted - grantable) <= grantable * 0.05, "asked for \(milliseconds) ms, granted \(granted) ms")
        }
    }

    /// SIGTERM (systemd stopping a unit) stops gracefully: the end cue rings out and the
    /// session's account is written.
    @Test(arguments: SoundServer.allCases)
    func sigtermStopsGracefullyWithTheSummary(server: SoundServer) throws {
        try server.require()
        let (process, out) = try startGong(
            ["run", "box", "--cycles", "3", "--cue", "end=click", "--device", "pulse", "--json"],
            environment: server.environment)
        usleep(3_000_000)
        process.terminate()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let events = GongEvents(output)
        #expect(events.all("stopping").count == 1, "the end cue rings out: \(output)")
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["stoppedEarly"] as? Bool == true, "\(finished)")
    }
}
