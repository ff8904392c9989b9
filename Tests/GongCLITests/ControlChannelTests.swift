import Foundation
import GongKit
import GongPractice
import GongTestSupport
import Testing

/// A session gong plays on ALSA's `null` (as fast as it renders: a 23-hour meditation lasts
/// seconds) with its control channel open; the tests drive it as a tool would.
final class ControlledRun {
    let process = Process()
    let input = Pipe()
    let events: EventReader
    let runtime: String

    /// `control`: `stdin` or `socket`; `runtime` is the XDG_RUNTIME_DIR the socket goes in.
    init(control: String, runtime: String, meditation: String = "23h", extraEnvironment: [String: String] = [:]) throws
    {
        self.runtime = runtime
        process.executableURL = URL(fileURLWithPath: gongExecutable)
        process.arguments = [
            "run", "two-phase", "--set", "meditation=\(meditation)", "--device", "null", "--control", control, "--json"
        ]
        process.environment = environment(with: extraEnvironment.merging(["XDG_RUNTIME_DIR": runtime]) { $1 })
        process.standardInput = input
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        events = EventReader(out)
        try process.run()
    }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Pauses the session once it has played something (its `status` says so): a pause sent at
    /// `started` may come before the first frame on a busy machine, leaving nothing played to
    /// keep (a killed session's record then rightly said 0 s).
    func pauseOncePlaying() {
        #expect(events.wait(for: "started", seconds: 60))
        var asked = 1000
        #expect(
            Waiting.until {
                asked += 1
                send(#"{"command": "status", "id": \#(asked)}"#)
                let status = reply(asked)?["status"] as? [String: Any]
                return status?["elapsedSeconds"] as? Double ?? 0 > 0
            }, "the session plays")
        send(#"{"command": "pause", "id": 1}"#)
        #expect(events.wait(for: "paused", seconds: 60))
    }

    /// The reply carrying `id`, once it has come.
    func reply(_ id: Int, seconds: Double = 60) -> [String: Any]? { events.reply(id, seconds: seconds) }

    /// True once gong has ended and `Process` has taken its status in.
    func waitForExit(seconds: Double = 120) -> Bool {
        guard Waiting.ended(process.processIdentifier, seconds: seconds) else { return false }
        process.waitUntilExit()
        return true
    }

    var socketPath: String { "\(runtime)/gong/\(process.processIdentifier).sock" }

    deinit {
        if process.isRunning { process.interrupt(); process.interrupt() }
    }
}

/// The reply's error code, when it is an error.
func errorCode(_ reply: [String: Any]?) -> String? { (reply?["error"] as? [String: Any])?["code"] as? String }

@Suite struct ControlChannelTests {
    @Test func standardInputPausesResumesAndStopsASessionWithARepliesForEachLine() throws {
        let scratch = try ScratchDirectory()
        let run = try ControlledRun(control: "stdin", runtime: scratch.path)
        #expect(run.events.wait(for: "started", seconds: 60))
        // toggle pauses a session that plays (and below resumes it): decided by the session.
        run.send(#"{"command": "toggle", "id": 1}"#)
        #expect(run.reply(1)?["ok"] as? Bool == true)
        #expect(run.events.wait(for: "paused", seconds: 60), "the fade-out is done")
        run.send(#"{"command": "status", "id": 2}"#)
        let status = try #require(run.reply(2)?["status"] as? [String: Any])
        #expect(status["state"] as? String == "paused" && status["pattern"] as? String == "two-phase")
        run.send(#"{"command": "pause", "id": 3}"#)
        #expect(errorCode(run.reply(3)) == "notNow", "a pause while paused changes nothing")
        // Lines that are not commands: each gets an error reply, and the session is as it was.
        run.send("pause")
        run.send(#"{"command": "fly", "id": 4}"#)
        run.send(#"{"command": "gain", "decibels": "loud", "id": 5}"#)
        run.send(#"{"command": "gain", "decibels": 40, "id": 6}"#)
        run.send(#"{"command": "pause", "id": 7, "padding": ""# + String(repeating: "x", count: 5000) + #""}"#)
        run.send(#"{"command": "subscribe", "id": 8}"#)
        run.send(#"{"command": "pause", "seconds": 3600, "id": 12}"#)
        #expect(errorCode(run.reply(4)) == "unknownCommand")
        #expect(errorCode(run.reply(12)) == "badArgument", "a pause length is gong bells', not a session's")
        #expect(errorCode(run.reply(5)) == "badArgument")
        #expect(errorCode(run.reply(6)) == "badArgument")
        #expect(errorCode(run.reply(8)) == "unsupported")
        let anonymous = run.events.all("reply").filter { $0["id"] == nil }.compactMap(errorCode)
        #expect(anonymous.sorted() == ["malformed", "tooLong"], "\(run.events.all("reply"))")
        run.send(#"{"command": "gain", "decibels": -6, "id": 9}"#)
        #expect(run.reply(9)?["ok"] as? Bool == true)
        run.send(#"{"command": "toggle", "id": 10}"#)
        #expect(run.reply(10)?["ok"] as? Bool == true)
        #expect(run.events.wait(for: "resumed", seconds: 60))
        run.send(#"{"command": "stop", "id": 11}"#)
        #expect(run.reply(11)?["ok"] as? Bool == true)
        #expect(run.waitForExit())
        #expect(run.process.terminationStatus == 0)
        #expect(
            run.events.all("reply").allSatisfy { $0["schema"] as? Int == 1 }, "every line carries its schema")
        let types = run.events.types.filter { $0 != "reply" }
        #expect(types.first == "started" && types.last == "finished", "\(types)")
        #expect(types.filter { $0 == "paused" }.count == 1 && types.filter { $0 == "resumed" }.count == 1)
        #expect(run.events.all("gainChanged").first?["decibels"] as? Double == -6)
        let summary = try #require(run.events.last("finished"))
        #expect(summary["stoppedEarly"] as? Bool == true && summary["pauses"] as? Int == 1, "\(summary)")
        let paused = try #require(run.events.last("paused")?["frame"] as? Int)
        let resumed = try #require(run.events.last("resumed")?["frame"] as? Int)
        #expect(paused == resumed, "the session clock stood still while paused")
        let frames = run.events.all("phaseBegan").compactMap { $0["frame"] as? Int }
        #expect(frames == frames.sorted() && frames.first == 0, "the phases in the order they began: \(frames)")
    }

    @Test func theSocketIsPrivateAndGongCtlFindsOneSessionAndListsTwo() throws {
        let scratch = try ScratchDirectory()
        let first = try ControlledRun(control: "socket", runtime: scratch.path)
        #expect(first.events.wait(for: "started", seconds: 60))
        let ctl = { (arguments: [String]) in
            try runGong(["ctl"] + arguments, environment: ["XDG_RUNTIME_DIR": scratch.path])
        }
        // Paused at once, so the session stands still for the rest of the test.
        let paused = try ctl(["pause"])
        #expect(paused.status == 0, "\(paused.stderr)")
        #expect(first.events.wait(for: "paused", seconds: 60))
        let directory = try FileManager.default.attributesOfItem(atPath: scratch.path + "/gong")
        let socket = try FileManager.default.attributesOfItem(atPath: first.socketPath)
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        #expect((socket[.posixPermissions] as? Int) == 0o600)
        #expect((socket[.type] as? FileAttributeType) == .typeSocket)

        let status = try ctl(["status"])
        #expect(
            status.status == 0
                && status.stdout.contains("two-phase (pid \(first.process.processIdentifier)): paused, meditation"),
            "\(status)")
        let again = try ctl(["pause"])
        #expect(again.status == 1 && again.stderr == "gong: pause: not taken while the session is paused\n", "\(again)")
        #expect(try ctl(["gain", "loud"]).status == 64)
        #expect(try ctl(["fly"]).status == 64)

        let second = try ControlledRun(control: "socket", runtime: scratch.path)
        #expect(second.events.wait(for: "started", seconds: 60))
        #expect(try ctl(["--pid", "\(second.process.processIdentifier)", "pause"]).status == 0)
        let both = try ctl(["status"])
        #expect(both.status == 64, "with two sessions, ctl asks which")
        #expect(
            both.stdout.contains("\(first.process.processIdentifier)")
                && both.stdout.contains("\(second.process.processIdentifier)"), "\(both)")
        let json = try ctl(["--pid", "\(second.process.processIdentifier)", "--json", "status"])
        let reply = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((reply?["status"] as? [String: Any])?["state"] as? String == "paused", "\(json)")

        for run in [first, second] {
            #expect(try ctl(["--pid", "\(run.process.processIdentifier)", "stop"]).status == 0)
            #expect(run.waitForExit())
            #expect(!FileManager.default.fileExists(atPath: run.socketPath), "the socket goes with its session")
        }
        let none = try ctl(["status"])
        #expect(none.status == 69 && none.stderr.contains("no gong session"), "\(none)")
    }

    @Test func aMalformedLineANeverReadingClientAndAnOverlongLineChangeNothing() throws {
        let scratch = try ScratchDirectory()
        let run = try ControlledRun(control: "socket", runtime: scratch.path, meditation: "2h")
        #expect(run.events.wait(for: "started", seconds: 60))
        #expect(try runGong(["ctl", "pause"], environment: ["XDG_RUNTIME_DIR": scratch.path]).status == 0)
        // A client that subscribes and never reads, and one that sends half a line forever.
        let silent = try ControlSockets.connect(run.socketPath)
        defer { close(silent) }
        _ = "{\"command\":\"subscribe\"}\n".withCString { send(silent, $0, strlen($0), 0) }
        let stuck = try ControlSockets.connect(run.socketPath)
        defer { close(stuck) }
        _ = "{\"command\":".withCString { send(stuck, $0, strlen($0), 0) }

        let client = try ControlSockets.connect(run.socketPath)
        defer { close(client) }
        var lines = ControlSockets.LineReader(descriptor: client)
        func ask(_ line: String) -> [String: Any]? {
            _ = (line + "\n").withCString { send(client, $0, strlen($0), 0) }
            return lines.next().flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        #expect(errorCode(ask("{not json")) == "malformed")
        #expect(errorCode(ask(#"{"command": 7}"#)) == "unknownCommand")
        #expect(errorCode(ask(String(repeating: "y", count: 10_000))) == "tooLong")
        #expect(
            (ask(#"{"command": "status", "id": "s"}"#)?["status"] as? [String: Any])?["state"] as? String == "paused")
        #expect(ask(#"{"command": "resume"}"#)?["ok"] as? Bool == true)
        // The session plays on to its end without waiting for anyone.
        #expect(run.waitForExit(), "the session ended although two clients never finished")
        #expect(run.events.last("finished")?["stoppedEarly"] as? Bool == false)
    }

    @Test func aStaleSocketOfAKilledSessionIsRemovedAndALiveOneIsNot() throws {
        let scratch = try ScratchDirectory()
        let run = try ControlledRun(control: "socket", runtime: scratch.path)
        #expect(run.events.wait(for: "started", seconds: 60))
        #expect(try runGong(["ctl", "pause"], environment: ["XDG_RUNTIME_DIR": scratch.path]).status == 0)
        // A session killed outright leaves its socket behind.
        let killed = try ControlledRun(control: "socket", runtime: scratch.path)
        #expect(killed.events.wait(for: "started", seconds: 60))
        let stale = killed.socketPath
        kill(killed.process.processIdentifier, SIGKILL)
        killed.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: stale))
        let status = try runGong(["ctl", "status"], environment: ["XDG_RUNTIME_DIR": scratch.path])
        #expect(
            status.status == 0 && status.stdout.contains("pid \(run.process.processIdentifier)"),
            "only the live one is found: \(status)")
        #expect(!FileManager.default.fileExists(atPath: stale), "the killed session's socket is gone")
        #expect(FileManager.default.fileExists(atPath: run.socketPath), "the live one's is not")
        #expect(try runGong(["ctl", "stop"], environment: ["XDG_RUNTIME_DIR": scratch.path]).status == 0)
        #expect(run.waitForExit())
    }

    /// Keys keep working beside `--control stdin`: with standard input carrying commands, gong
    /// reads them from its terminal (`/dev/tty`). Here a pseudo-terminal is made the session's
    /// controlling terminal (`setsid --ctty`) and commands come through a FIFO.
    @Test func keysOnTheTerminalWorkBesideCommandsOnStandardInput() throws {
        let scratch = try ScratchDirectory()
        let fifo = scratch.file("control")
        try #require(mkfifo(fifo, 0o600) == 0)
        let terminal = try PseudoTerminal()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        // The shell tells its pid, which stays gong's across the exec, so the test can end it.
        process.arguments = [
            "--wait", "--ctty", "/bin/sh", "-c",
            #"echo $$ >&2; exec "$0" run two-phase --set meditation=23h --device null --control stdin --json < "$1""#,
            gongExecutable, fifo
        ]
        process.environment = environment(with: ["XDG_RUNTIME_DIR": scratch.path])
        process.standardInput = terminal.slave
        let out = Pipe(), errors = Pipe()
        process.standardOutput = out
        process.standardError = errors
        let events = EventReader(out)
        try process.run()
        let firstLine = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        let gong = try #require(Int32(firstLine.split(separator: "\n").first ?? ""), "\(firstLine)")
        defer { if process.isRunning { kill(gong, SIGKILL) } }
        // Blocks until the shell opens the FIFO to read it.
        let commands = try #require(FileHandle(forWritingAtPath: fifo))
        func send(_ line: String) { commands.write(Data((line + "\n").utf8)) }
        func reply(_ id: Int) -> [String: Any]? { events.reply(id) }

        #expect(events.wait(for: "started", seconds: 60))
        terminal.type(" ")
        #expect(events.wait(for: "paused", seconds: 60), "the space bar paused: \(events.types)")
        send(#"{"command": "status", "id": 1}"#)
        #expect((reply(1)?["status"] as? [String: Any])?["state"] as? String == "paused")
        send(#"{"command": "resume", "id": 2}"#)
        #expect(reply(2)?["ok"] as? Bool == true)
        #expect(events.wait(for: "resumed", seconds: 60))
        terminal.type("q")
        #expect(events.wait(for: "finished", seconds: 60), "q stopped the session: \(events.types)")
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let summary = try #require(events.last("finished"))
        #expect(summary["stoppedEarly"] as? Bool == true && summary["pauses"] as? Int == 1, "\(summary)")
        try? commands.close()
    }
}
