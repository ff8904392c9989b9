import Foundation
import GongTestSupport
import Testing

/// `gong ctl` against a running `gong bells` on ALSA's null device: status, the three kinds of
/// pause, resume, next and ring, each over the socket, and the socket gone once it is stopped.
/// A `gong bells` of a test's own, started with `arguments` after `bells`: its runtime and data
/// directories in `scratch`, its standard output in a file, terminated when dropped.
final class RunningBells {
    let scratch: ScratchDirectory
    let process = Process()
    var runtime: String { scratch.path + "/run" }
    var dataHome: String { scratch.path + "/data" }
    var output: String { scratch.file("bells.out") }
    var pid: pid_t { process.processIdentifier }
    var socket: String { runtime + "/gong/\(pid).sock" }

    init(_ arguments: [String], in scratch: ScratchDirectory, environment extra: [String: String] = [:]) throws {
        self.scratch = scratch
        try FileManager.default.createDirectory(atPath: scratch.path + "/run", withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: scratch.path + "/run")
        FileManager.default.createFile(atPath: scratch.file("bells.out"), contents: nil)
        process.executableURL = URL(fileURLWithPath: gongExecutable)
        process.arguments = ["bells"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_RUNTIME_DIR"] = scratch.path + "/run"
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        process.environment = environment.merging(extra) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: scratch.file("bells.out")))
        try process.run()
    }

    /// Started, and waited for until its socket is there. The waits in these tests sleep as
    /// tasks, not threads: the suites run beside them on two cooperative threads, and a test
    /// that held one for half a minute (a bell rung through a real server) starved an event
    /// loop beside it for over a minute on a busy machine.
    static func started(
        _ arguments: [String], in scratch: ScratchDirectory, environment extra: [String: String] = [:]
    ) async throws -> RunningBells {
        let bells = try RunningBells(arguments, in: scratch, environment: extra)
        #expect(
            await Waiting.until { FileManager.default.fileExists(atPath: bells.socket) },
            "gong bells made its control socket")
        return bells
    }

    deinit { if process.isRunning { process.terminate() } }

    /// A bell at a time of day six hours from now (local, as gong bells reads it, in the same
    /// zone): none falls inside a test. Hourly bells did at the top of an hour: one rang in the
    /// three idle seconds the wake-up test counts (a clean run across 04:00).
    static var farOff: [String] {
        var later = time(nil) + 6 * 3600
        var local = tm()
        localtime_r(&later, &local)
        return ["--at", String(format: "%02d:%02d", local.tm_hour, local.tm_min)]
    }

    func ctl(_ arguments: [String]) throws -> CommandResult {
        try runGong(["ctl"] + arguments, environment: ["XDG_RUNTIME_DIR": runtime])
    }

    /// The JSON lines written so far (with --json).
    func lines(of type: String? = nil) throws -> [[String: Any]] {
        try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { type == nil || $0["type"] as? String == type }
    }
}

@Suite struct BellsControlChannelTests {
    @Test func gongCtlPausesResumesPassesOverAndRingsTheBells() async throws {
        let bells = try await RunningBells.started(
            RunningBells.farOff + ["--device", "null", "--json"], in: ScratchDirectory())
        #expect(FileManager.default.fileExists(atPath: bells.socket))
        let ctl = bells.ctl
        let pid = bells.pid

        let status = try ctl(["status"])
        #expect(status.status == 0 && status.stdout.hasPrefix("bells (pid \(pid)): next "), "\(status)")
        let until = try ctl(["pause", "until", "14:00"])
        #expect(until.stdout.contains(", paused until 2") && until.stdout.contains(" 14:00; CPU "), "\(until)")
        let hour = try ctl(["--json", "pause", "1h"])
        let paused =
            try #require(
                try JSONSerialization.jsonObject(with: Data(hour.stdout.utf8)) as? [String: Any])["bells"]
            as? [String: Any]
        #expect(paused?["pausedUntil"] is String && paused?["next"] is String, "\(hour)")
        #expect(try ctl(["pause", "today"]).stdout.contains(" 00:00; CPU "))
        #expect(try ctl(["pause", "until", "25:00"]).status == 64)
        #expect(try ctl(["pause", "soon"]).status == 64)
        #expect(!(try ctl(["resume"]).stdout.contains("paused")))
        #expect(try ctl(["next"]).stdout.contains("(to be passed over)"))

        #expect(try ctl(["ring"]).status == 0)
        // Rung on the null device about two seconds later, and counted.
        #expect(
            try await Waiting.until(seconds: 30, longestPause: 0.2) { try ctl(["status"]).stdout.contains(" 1 rung") },
            "gong ctl status counts the bell rung")

        // The bell asked for is in the history, and gong stats shows it.
        let stats = try runGong(
            ["stats", "--bells", "today"], environment: ["XDG_DATA_HOME": bells.dataHome])
        #expect(stats.status == 0 && stats.stdout.contains(" rung (gong ctl ring)"), "\(stats)")
        #expect(try runGong(["stats", "--bells", "2026-02-30"]).status == 64)

        bells.process.terminate()
        bells.process.waitUntilExit()
        #expect(bells.process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: bells.socket), "the socket goes with gong bells")
    }

    /// Between bells the process is one thread asleep on one timer, even after it has rung: each
    /// bell is rung by a process of its own, so libdispatch's worker pool (and the one-second
    /// timer it keeps for the life of a process that has used it) never starts in this one.
    /// Counted from /proc: the threads, and the times any of them gave up the processor (a
    /// sleeping process gives it up once a wake-up; the old process did once a second).
    @Test func betweenBellsTheProcessIsOneThreadThatNeverWakes() async throws {
        let bells = try await RunningBells.started(RunningBells.farOff + ["--device", "null"], in: ScratchDirectory())
        let ctl = bells.ctl
        #expect(try ctl(["ring"]).status == 0)
        try #require(
            try await Waiting.until(seconds: 30, longestPause: 0.2) { try ctl(["status"]).stdout.contains(" 1 rung") },
            "gong ctl ring rang nothing")

        let tasks = "/proc/\(bells.pid)/task"
        func switches() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: tasks).reduce(0) { sum, task in
                let status = try String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8)
                let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                return sum + (line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tasks).count == 1)
        // The answer to `status` goes out before the process is back in its wait, and on a busy
        // machine it may get there after this test has read its count: going to sleep is itself a
        // switch. So counting starts once it sleeps in poll (the kernel's wait channel says so).
        func asleepInItsWait() -> Bool {
            ((try? String(contentsOfFile: "/proc/\(bells.pid)/wchan", encoding: .utf8)) ?? "").contains("poll")
        }
        try #require(
            await Waiting.until(seconds: 10) { asleepInItsWait() },
            "gong bells is not asleep in its wait 10 s after ringing")
        let before = try switches()
        // The idle window is what is measured: a fixed three seconds, not a wait for anything.
        try await Task.sleep(for: .seconds(3))
        let after = try switches()
        #expect(after - before == 0, "gong bells woke \(after - before) times in 3 idle seconds")
    }

    /// `--then box 1 cycles`: the bell and the practice after it are one session on one clock,
    /// the bell one warm-up in (two seconds), box's first phase four seconds after the bell, and
    /// the bell is still what is judged and recorded.
    @Test func aBellThenAPracticeIsOneSessionWithTheBellFirst() async throws {
        let bells = try await RunningBells.started(
            RunningBells.farOff + ["--device", "null", "--json", "--then", "box 1 cycles"], in: ScratchDirectory())
        #expect(try bells.ctl(["ring"]).status == 0)
        var lines: [[String: Any]] = []
        #expect(
            try await Waiting.until {
                lines = try bells.lines()
                return lines.contains { $0["type"] as? String == "bell" }
            }, "the bell's line was written")
        let started = try #require(lines.first { $0["type"] as? String == "started" })
        #expect(started["pattern"] as? String == "bell, then box")
        let cues = lines.filter { $0["type"] as? String == "cue" }
        let bellFrame = 2 * 48_000
        #expect(
            cues.first?["frame"] as? Int == bellFrame
                && (cues.first?["sound"] as? String)?.hasSuffix("/bowl.flac") == true)
        let phases = lines.filter { $0["type"] as? String == "phaseBegan" }
        #expect(phases.map { $0["phase"] as? String } == ["inhale", "hold", "exhale", "rest"], "\(phases)")
        #expect(phases.first?["frame"] as? Int == bellFrame + 4 * 48_000)
        let bell = try #require(lines.last)
        #expect(bell["type"] as? String == "bell" && bell["outcome"] as? String == "rung", "\(bell)")
    }

    /// A sound server that is not there when a bell is due, then comes, then restarts: the bell
    /// without it fails, said and recorded, and the next ones ring, each on a fresh stream (a
    /// PulseAudio of the test's own with a null sink, so no other test hears it). Each bell is
    /// followed by a practice of a pattern file (one 6 s phase, so each bell lasts about 11 s in
    /// real time), during which `gong ctl` is answered at once, not held until the bell's process
    /// ends. When each bell was heard is not held here: a null sink with no keeper stream takes
    /// about 2 s to wake for a new stream (the first bell on a fresh server here: +1.2 to +2.0 s,
    /// said as such in `offMs`; the next, -0.009 ms), which the live bells test's keeper avoids.
    @Test func aBellWithoutItsServerFailsAndTheNextRingsOnceItIsBackOrRestarted() async throws {
        let scratch = try ScratchDirectory()
        let pulse = scratch.path + "/pulse"
        try FileManager.default.createDirectory(atPath: pulse, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: pulse)
        let server = "unix:\(pulse)/native"
        let practice = scratch.file("pause.toml")
        try "warmup = \"0s\"\ncycles = 1\n[[phases]]\nname = \"still\"\nlength = \"6s\"\ncue = \"woodblock\"\n".write(
            toFile: practice, atomically: true, encoding: .utf8)
        let bells = try await RunningBells.started(
            RunningBells.farOff + ["--device", "pulse", "--sound", "woodblock", "--then", practice, "--json"],
            in: scratch,
            environment: ["PULSE_SERVER": server])

        /// Rings one bell with gong ctl and waits for its line; `during` is given what `gong ctl
        /// status` said once the bell's session had started.
        func ring(during: ((CommandResult) -> Void)? = nil) async throws -> [String: Any] {
            let before = try bells.lines(of: "bell").count
            let startedBefore = try bells.lines(of: "started").count
            #expect(try bells.ctl(["ring"]).status == 0)
            if let during {
                #expect(
                    try await Waiting.until { try bells.lines(of: "started").count > startedBefore },
                    "the bell's session started")
                during(try bells.ctl(["status"]))
                #expect(
                    try bells.lines(of: "bell").count == before,
                    "gong ctl status was answered only once the bell had rung")
            }
            var lines: [[String: Any]] = []
            _ = try await Waiting.until {
                lines = try bells.lines(of: "bell")
                return lines.count > before
            }
            return lines.count > before ? lines[before] : [:]
        }
        /// A PulseAudio on the test's socket, answering before this returns; its pid.
        func startServer() async throws -> pid_t {
            let started = try runTool(
                "/usr/bin/pulseaudio",
                [
                    "-n", "--daemonize=yes", "--use-pid-file=yes", "--exit-idle-time=-1",
                    "-L", "module-native-protocol-unix socket=\(pulse)/native auth-anonymous=1",
                    "-L", "module-null-sink sink_name=room rate=48000"
                ], environment: ["PULSE_RUNTIME_PATH": pulse])
            try #require(started == 0, "pulseaudio did not start")
            _ = try await Waiting.until(seconds: 30, longestPause: 0.1) {
                try runTool("/usr/bin/pactl", ["info"], environment: ["PULSE_SERVER": server]) == 0
            }
            let pid = pid_t(
                try String(contentsOfFile: pulse + "/pid", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines))
            return try #require(pid)
        }
        // SIGKILL: a process started by a test inherits the runner's blocked SIGTERM.
        func stop(_ pid: pid_t) {
            kill(pid, SIGKILL)
            _ = Waiting.ended(pid, seconds: 10)
            for leftover in ["native", "pid"] { try? FileManager.default.removeItem(atPath: pulse + "/" + leftover) }
        }

        var running: pid_t?
        defer { running.map(stop) }
        let alone = try await ring()
        #expect(alone["outcome"] as? String == "failed" && alone["failure"] is String, "\(alone)")
        running = try await startServer()
        let back = try await ring { status in
            #expect(status.status == 0 && status.stdout.contains(", 0 rung and 1 skipped today"), "\(status)")
        }
        #expect(back["outcome"] as? String == "rung" && back["offMs"] is Double, "\(back)")
        running.map(stop)
        running = try await startServer()
        let restarted = try await ring()
        #expect(restarted["outcome"] as? String == "rung" && restarted["offMs"] is Double, "\(restarted)")

        let stats = try runGong(
            ["stats", "--bells", "today"], environment: ["XDG_DATA_HOME": bells.dataHome])
        #expect(stats.stdout.contains("2 rung, 1 not"), "\(stats)")
    }
}
