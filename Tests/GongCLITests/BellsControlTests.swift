import Foundation
import Testing

/// `gong ctl` against a running `gong bells` on ALSA's null device: status, the three kinds of
/// pause, resume, next and ring, each over the socket, and the socket gone once it is stopped.
@Suite struct BellsControlChannelTests {
    @Test func gongCtlPausesResumesPassesOverAndRingsTheBells() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gongExecutable)
        // Hourly bells from midnight: none falls inside the test unless it runs across an hour,
        // which at most adds one to the count below.
        process.arguments = ["bells", "--every", "1h", "--device", "null", "--json"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let socket = runtime + "/gong/\(process.processIdentifier).sock"
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: socket))
        let ctl = { (arguments: [String]) in try runGong(["ctl"] + arguments, environment: ["XDG_RUNTIME_DIR": runtime])
        }
        let pid = process.processIdentifier

        let status = try ctl(["status"])
        #expect(status.status == 0 && status.stdout.hasPrefix("bells (pid \(pid)): next "), "\(status)")
        let until = try ctl(["pause", "until", "14:00"])
        #expect(until.stdout.contains(", paused until 2") && until.stdout.contains(" 14:00; CPU "), "\(until)")
        let hour = try ctl(["--json", "pause", "1h"])
        let bells =
            try #require(
                try JSONSerialization.jsonObject(with: Data(hour.stdout.utf8)) as? [String: Any])["bells"]
            as? [String: Any]
        #expect(bells?["pausedUntil"] is String && bells?["next"] is String, "\(hour)")
        #expect(try ctl(["pause", "today"]).stdout.contains(" 00:00; CPU "))
        #expect(try ctl(["pause", "until", "25:00"]).status == 64)
        #expect(try ctl(["pause", "soon"]).status == 64)
        #expect(!(try ctl(["resume"]).stdout.contains("paused")))
        #expect(try ctl(["next"]).stdout.contains("(to be passed over)"))

        #expect(try ctl(["ring"]).status == 0)
        // Rung on the null device about two seconds later, and counted.
        var rung = false
        let ringDeadline = Date().addingTimeInterval(30)
        while !rung && Date() < ringDeadline {
            usleep(200_000)
            let said = try ctl(["status"]).stdout
            rung = said.contains(" 1 rung") || said.contains(" 2 rung")
        }
        #expect(rung)

        // The bell asked for is in the history, and gong stats shows it.
        let stats = try runGong(
            ["stats", "--bells", "today"], environment: ["XDG_DATA_HOME": scratch.path + "/data"])
        #expect(stats.status == 0 && stats.stdout.contains(" rung (gong ctl ring)"), "\(stats)")
        #expect(try runGong(["stats", "--bells", "2026-02-30"]).status == 64)

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket goes with gong bells")
    }

    /// Between bells the process is one thread asleep on one timer, even after it has rung: each
    /// bell is rung by a process of its own, so libdispatch's worker pool (and the one-second
    /// timer it keeps for the life of a process that has used it) never starts in this one.
    /// Counted from /proc: the threads, and the times any of them gave up the processor (a
    /// sleeping process gives it up once a wake-up; the old process did once a second).
    @Test func betweenBellsTheProcessIsOneThreadThatNeverWakes() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gongExecutable)
        process.arguments = ["bells", "--every", "1h", "--device", "null"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let pid = process.processIdentifier
        let socket = runtime + "/gong/\(pid).sock"
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        let ctl = { (arguments: [String]) in try runGong(["ctl"] + arguments, environment: ["XDG_RUNTIME_DIR": runtime])
        }
        #expect(try ctl(["ring"]).status == 0)
        var rung = false
        let ringDeadline = Date().addingTimeInterval(30)
        while !rung && Date() < ringDeadline {
            usleep(500_000)
            rung = try ctl(["status"]).stdout.contains(" 1 rung")
        }
        try #require(rung, "gong ctl ring rang nothing")

        let tasks = "/proc/\(pid)/task"
        func switches() throws -> Int {
            try FileManager.default.contentsOfDirectory(atPath: tasks).reduce(0) { sum, task in
                let status = try String(contentsOfFile: "\(tasks)/\(task)/status", encoding: .utf8)
                let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                return sum + (line.flatMap { Int($0.split(separator: "\t").last ?? "") } ?? 0)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tasks).count == 1)
        let before = try switches()
        sleep(3)
        let after = try switches()
        #expect(after - before == 0, "gong bells woke \(after - before) times in 3 idle seconds")
    }

    /// `--then box 1 cycles`: the bell and the practice after it are one session on one clock,
    /// the bell one second in (its warm-up), box's first phase four seconds after the bell, and
    /// the bell is still what is judged and recorded.
    @Test func aBellThenAPracticeIsOneSessionWithTheBellFirst() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let output = scratch.path + "/bells.jsonl"
        FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gongExecutable)
        process.arguments = ["bells", "--every", "1h", "--device", "null", "--json", "--then", "box 1 cycles"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let socket = runtime + "/gong/\(process.processIdentifier).sock"
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }
        #expect(try runGong(["ctl", "ring"], environment: ["XDG_RUNTIME_DIR": runtime]).status == 0)
        func read() throws -> [[String: Any]] {
            try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        var lines: [[String: Any]] = []
        let ringDeadline = Date().addingTimeInterval(60)
        while !lines.contains(where: { $0["type"] as? String == "bell" }) && Date() < ringDeadline {
            usleep(250_000)
            lines = try read()
        }
        let started = try #require(lines.first { $0["type"] as? String == "started" })
        #expect(started["pattern"] as? String == "bell, then box")
        let cues = lines.filter { $0["type"] as? String == "cue" }
        let bellFrame = 48_000
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
    /// ends.
    @Test func aBellWithoutItsServerFailsAndTheNextRingsOnceItIsBackOrRestarted() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.path + "/run"
        let pulse = scratch.path + "/pulse"
        for directory in [runtime, pulse] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory)
        }
        let server = "unix:\(pulse)/native"
        let output = scratch.path + "/bells.jsonl"
        FileManager.default.createFile(atPath: output, contents: nil)
        let bells = Process()
        bells.executableURL = URL(fileURLWithPath: gongExecutable)
        let practice = scratch.file("pause.toml")
        try "warmup = \"0s\"\ncycles = 1\n[[phases]]\nname = \"still\"\nlength = \"6s\"\ncue = \"woodblock\"\n".write(
            toFile: practice, atomically: true, encoding: .utf8)
        bells.arguments = [
            "bells", "--every", "1h", "--device", "pulse", "--sound", "woodblock", "--then", practice, "--json"
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = scratch.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment.removeValue(forKey: "XDG_CONFIG_HOME")
        environment["XDG_DATA_HOME"] = scratch.path + "/data"
        environment["PULSE_SERVER"] = server
        bells.environment = environment
        bells.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        try bells.run()
        defer { if bells.isRunning { bells.terminate() } }
        let socket = runtime + "/gong/\(bells.processIdentifier).sock"
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(20_000) }

        /// Rings one bell with gong ctl and waits for its line; `during` is given what `gong ctl
        /// status` said once the bell's session had started.
        func ring(during: ((CommandResult) -> Void)? = nil) throws -> [String: Any] {
            let before = try bellLines().count
            let startedBefore = try lines().filter { $0["type"] as? String == "started" }.count
            #expect(try runGong(["ctl", "ring"], environment: ["XDG_RUNTIME_DIR": runtime]).status == 0)
            if let during {
                let startDeadline = Date().addingTimeInterval(60)
                while try lines().filter({ $0["type"] as? String == "started" }).count == startedBefore
                    && Date() < startDeadline
                {
                    usleep(100_000)
                }
                during(try runGong(["ctl", "status"], environment: ["XDG_RUNTIME_DIR": runtime]))
                #expect(try bellLines().count == before, "gong ctl status was answered only once the bell had rung")
            }
            let ringDeadline = Date().addingTimeInterval(60)
            while Date() < ringDeadline {
                let lines = try bellLines()
                if lines.count > before { return lines[before] }
                usleep(250_000)
            }
            return [:]
        }
        func lines() throws -> [[String: Any]] {
            try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        func bellLines() throws -> [[String: Any]] { try lines().filter { $0["type"] as? String == "bell" } }
        /// A PulseAudio on the test's socket, answering before this returns; its pid.
        func startServer() throws -> pid_t {
            let started = try runTool(
                "/usr/bin/pulseaudio",
                [
                    "-n", "--daemonize=yes", "--use-pid-file=yes", "--exit-idle-time=-1",
                    "-L", "module-native-protocol-unix socket=\(pulse)/native auth-anonymous=1",
                    "-L", "module-null-sink sink_name=room rate=48000"
                ], environment: ["PULSE_RUNTIME_PATH": pulse])
            try #require(started == 0, "pulseaudio did not start")
            let up = Date().addingTimeInterval(30)
            while try runTool("/usr/bin/pactl", ["info"], environment: ["PULSE_SERVER": server]) != 0 && Date() < up {
                usleep(100_000)
            }
            let pid = pid_t(
                try String(contentsOfFile: pulse + "/pid", encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines))
            return try #require(pid)
        }
        // SIGKILL: a process started by a test inherits the runner's blocked SIGTERM.
        func stop(_ pid: pid_t) {
            kill(pid, SIGKILL)
            let gone = Date().addingTimeInterval(10)
            while kill(pid, 0) == 0 && Date() < gone { usleep(50_000) }
            for leftover in ["native", "pid"] { try? FileManager.default.removeItem(atPath: pulse + "/" + leftover) }
        }

        let alone = try ring()
        #expect(alone["outcome"] as? String == "failed" && alone["failure"] is String, "\(alone)")
        let first = try startServer()
        defer { stop(first) }
        let back = try ring { status in
            #expect(status.status == 0 && status.stdout.contains(", 0 rung and 1 skipped today"), "\(status)")
        }
        #expect(back["outcome"] as? String == "rung" && back["offMs"] is Double, "\(back)")
        stop(first)
        let second = try startServer()
        defer { stop(second) }
        let restarted = try ring()
        #expect(restarted["outcome"] as? String == "rung" && restarted["offMs"] is Double, "\(restarted)")

        let stats = try runGong(
            ["stats", "--bells", "today"], environment: ["XDG_DATA_HOME": scratch.path + "/data"])
        #expect(stats.stdout.contains("2 rung, 1 not"), "\(stats)")
    }
}
