import Foundation
import Testing

/// The project's PulseAudio null sink, started by scripts/test-pulse.sh when missing. On CI
/// (CI set) it must start; elsewhere the live tests are skipped with a reason if it cannot.
enum PulseServer {
    static let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/test-pulse.sh").path
    static let available: Bool = {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [scriptPath]
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        } catch {
            return false
        }
    }()

    static func require() throws {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            #expect(available, "PulseAudio with the gong_test null sink must start on CI")
        }
        if !available { try Test.cancel("no PulseAudio server could be started: skipping the live test") }
    }
}

/// The two ways gong reaches the PulseAudio server: as a client of its own (`pulse`), and through
/// ALSA's plugin (`default`, which the pulseaudio package routes to the server while it runs).
enum SoundServerRoute: String, CaseIterable, CustomTestStringConvertible {
    case pulseClient, alsaPlugin

    var device: String { self == .pulseClient ? "pulse" : "default" }
    var testDescription: String { device }
}

/// Starts gong in the background with its standard output on a pipe (standard error dropped).
func startGong(_ arguments: [String]) throws -> (process: Process, output: Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: gongExecutable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = Pipe()
    try process.run()
    return (process, output)
}

/// Runs a tool to its end, its output dropped; its exit status.
func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.standardOutput = Pipe()
    process.standardError = Pipe()
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Records the null sink's monitor: exactly what was played, sample for sample.
final class MonitorRecorder {
    let path: String
    private let process = Process()

    init(path: String) throws {
        self.path = path
        let arguments = ["-d", "gong_test.monitor", "--format=float32le", "--rate=48000", "--channels=1", "--raw", path]
        // The recorder must not drop what it hears when the machine is busy: real-time when it
        // may be (root, as on CI).
        if geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/chrt") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/chrt")
            process.arguments = ["-f", "60", "/usr/bin/parec"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
            process.arguments = arguments
        }
        try process.run()
        usleep(300_000)
    }

    func stop() -> [Float] {
        // Let the last samples arrive, then end it. SIGKILL, because a child of the test runner
        // may inherit a blocked SIGTERM; parec writes raw samples as they come, so nothing is lost.
        usleep(300_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

/// Onsets: the first sample above the threshold after at least a second of quiet.
func onsets(in samples: [Float], threshold: Float = 0.01, quietFrames: Int = 48000) -> [Int] {
    var result: [Int] = []
    var lastLoud = -quietFrames - 1
    for (index, sample) in samples.enumerated() where abs(sample) > threshold {
        if index - lastLoud > quietFrames { result.append(index) }
        lastLoud = index
    }
    return result
}

@Suite(.serialized) struct LivePulseTests {
    static func pattern(in scratch: ScratchDirectory, duration: String) throws -> String {
        let path = scratch.file("ticks.toml")
        try """
        summary = "a woodblock every 3 s"
        warmup = "1s"
        duration = "\(duration)"
        [[phases]]
        name = "tick"
        length = "3s"
        cue = "woodblock"
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// 60 s live through PulseAudio, recorded from the sink's monitor: every interval between
    /// heard onsets is the scheduled 3 s = 144 000 frames, to the frame.
    ///
    /// The claim is about undisturbed playback. A machine too busy to feed the sound server makes
    /// gong report an xrun, and a gap measured through a sound server is only close to exact, so
    /// such a run is not evidence either way: it is run once more, and the second must be clean.
    @Test(arguments: SoundServerRoute.allCases)
    func aMinuteLiveThroughPulseHasEveryIntervalExactToTheFrame(route: SoundServerRoute) throws {
        try PulseServer.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "60s")
        for attempt in 1...2 {
            let recorder = try MonitorRecorder(path: scratch.file("monitor.raw"))
            let result = try runGong(["run", pattern, "--device", route.device, "--channels", "1", "--rate", "48000"],
                                     home: ProcessInfo.processInfo.environment["HOME"])
            let recording = recorder.stop()
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("cycles 20 of 20"))
            let disturbed = !result.stdout.contains("xruns 0")
            if disturbed && attempt == 1 {
                print("attempt 1 had an xrun (the machine was too busy to play in real time); once more: \(result.stdout)")
                continue
            }
            #expect(!disturbed, "the machine was too busy to play in real time, twice: \(result.stdout)")
            let heard = onsets(in: recording)
            #expect(heard.count == 20, "20 woodblocks heard")
            let intervals = zip(heard, heard.dropFirst()).map { $1 - $0 }
            #expect(intervals.allSatisfy { $0 == 144_000 }, "intervals \(intervals)")
            return
        }
    }

    /// The process is stopped for 300 ms mid-session: the session recovers, counts the xrun,
    /// moves its clock on and completes.
    @Test(arguments: SoundServerRoute.allCases)
    func aStoppedProcessRecoversCountsTheXrunAndCompletes(route: SoundServerRoute) throws {
        try PulseServer.require()
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "15s")
        let (process, out) = try startGong(["run", pattern, "--device", route.device, "--channels", "1"])
        usleep(6_000_000)
        kill(process.processIdentifier, SIGSTOP)
        usleep(300_000)
        kill(process.processIdentifier, SIGCONT)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(output.contains("cycles 5 of 5"), "\(output)")
        // At least most of the 300 ms was lost; a sound server may take longer to resume the
        // stream (an idle PulseAudio null sink wakes up in about 2 s), which is lost too.
        let lost = output.split(separator: "\n").filter { $0.contains("xrun:") }
            .compactMap { line in line.split(separator: " ").first { Int($0) != nil }.flatMap { Int($0) } }
        #expect(lost.contains { (12_000...150_000).contains($0) }, "\(output)")
        // The summary counts every xrun reported as it happened, and no others. A busy machine
        // may add one of its own (a sound server now says so), which is counted too; the stop is
        // the one measured above.
        let counts = output.split(separator: "\n").first { $0.contains(" · xruns ") } ?? ""
        let xruns = counts.components(separatedBy: " · ").first { $0.hasPrefix("xruns ") }.flatMap { Int($0.dropFirst(6)) } ?? 0
        let reported = output.split(separator: "\n").filter { $0.contains("xrun:") }.count
        #expect(xruns >= 1 && xruns == reported, "\(output)")
    }

    /// The sound server itself goes away mid-session and comes back: the session pauses, gong
    /// reopens the device when it can and, with no terminal to wait for, resumes and completes.
    @Test(arguments: SoundServerRoute.allCases)
    func aSoundServerThatRestartsIsALostDeviceThatComesBack(route: SoundServerRoute) throws {
        try PulseServer.require()
        // Only the server scripts/test-pulse.sh started may be stopped, never a desktop's own.
        if try runTool("/usr/bin/pgrep", ["-f", "pulseaudio .*sink_name=gong_test"]) != 0 {
            try Test.cancel("the PulseAudio server running is not the test's own: not stopping it")
        }
        let scratch = try ScratchDirectory()
        let pattern = try Self.pattern(in: scratch, duration: "12s")
        let (process, out) = try startGong(["run", pattern, "--device", route.device, "--channels", "1"])
        usleep(4_000_000)
        _ = try runTool("/usr/bin/pulseaudio", ["-k"])
        usleep(1_500_000)
        #expect(try runTool("/bin/bash", [PulseServer.scriptPath]) == 0, "the test's server started again")
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("device lost (\(route.device): "), "\(output)")
        #expect(output.contains("device back; resumed"), "\(output)")
        #expect(output.contains("cycles 4 of 4"), "\(output)")
        #expect(output.contains("device losses 1"), "\(output)")
    }

    /// Through a sound server the audio thread runs at a raised nice value, not SCHED_FIFO (see
    /// ThreadPriority), and so does ALSA's plugin's client thread; gong's own PulseAudio client
    /// has no such thread.
    @Test(arguments: SoundServerRoute.allCases)
    func aSoundServerIsFedAtRaisedPriority(route: SoundServerRoute) throws {
        try PulseServer.require()
        if geteuid() != 0 { try Test.cancel("only root may raise priorities here") }
        let (process, _) = try startGong(["run", "box", "--cycles", "1", "--cue", "end=click", "--device", route.device, "--quiet"])
        defer { process.terminate(); process.waitUntilExit() }
        var threads: [String: (policy: Int, nice: Int)] = [:]
        for _ in 0..<100 where threads["gong audio"] == nil || (route == .alsaPlugin && threads["threaded-ml"] == nil) {
            usleep(50_000)
            threads = [:]
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []
            for task in tasks {
                guard let (name, fields) = procStat("/proc/\(process.processIdentifier)/task/\(task)") else { continue }
                // Field 19 of stat is nice, field 41 the policy.
                if fields.count > 38, let nice = Int(fields[16]), let policy = Int(fields[38]) { threads[name] = (policy, nice) }
            }
        }
        let audio = try #require(threads["gong audio"], "\(threads)")
        #expect(audio.policy == 0 && audio.nice == -10, "SCHED_OTHER at nice -10: \(audio)")
        #expect(threads["gong"]?.nice == 0, "the control thread is back at its own priority")
        switch route {
        case .alsaPlugin:
            let client = try #require(threads["threaded-ml"], "PulseAudio's client thread: \(threads)")
            #expect(client.policy == 0 && client.nice == -10, "the plugin's thread inherited the raised priority: \(client)")
        case .pulseClient:
            #expect(threads.count == 2, "the control thread and the audio thread, no other: \(threads)")
        }
    }

    /// The latency asked for is the latency granted, though PulseAudio's plugin takes no fewer
    /// than three periods to a buffer (two periods of half the latency would give 1.5 times it).
    @Test(arguments: SoundServerRoute.allCases, [10.0, 100.0, 500.0])
    func theLatencyAskedForIsGrantedThroughASoundServer(route: SoundServerRoute, milliseconds: Double) throws {
        try PulseServer.require()
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("blip.toml")
        try "warmup = \"0s\"\ncycles = 1\n[[phases]]\nname = \"blip\"\nlength = \"250ms\"\n".write(toFile: pattern, atomically: true, encoding: .utf8)
        let result = try runGong(["run", pattern, "--device", route.device, "--json", "--latency", String(format: "%g", milliseconds)],
                                 home: ProcessInfo.processInfo.environment["HOME"])
        #expect(result.status == 0, "\(result.stderr)")
        let started = try #require(result.stdout.split(separator: "\n").first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let granted = try #require(started["latencyMs"] as? Double, "\(started)")
        #expect(abs(granted - milliseconds) <= milliseconds * 0.05, "asked for \(milliseconds) ms, granted \(granted) ms")
    }

    /// SIGTERM (systemd stopping a unit) stops gracefully: the summary is printed.
    @Test func sigtermStopsGracefullyWithTheSummary() throws {
        try PulseServer.require()
        let (process, out) = try startGong(["run", "box", "--cycles", "3", "--cue", "end=click", "--device", "pulse"])
        usleep(3_000_000)
        process.terminate()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(output.contains("box stopped"), "\(output)")
        #expect(output.contains("stopping: the end cue rings out"))
    }
}
