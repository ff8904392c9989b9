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
        #expect(until.stdout.contains(" 14:00\n") && until.stdout.contains(", paused until "), "\(until)")
        let hour = try ctl(["--json", "pause", "1h"])
        let bells =
            try #require(
                try JSONSerialization.jsonObject(with: Data(hour.stdout.utf8)) as? [String: Any])["bells"]
            as? [String: Any]
        #expect(bells?["pausedUntil"] is String && bells?["next"] is String, "\(hour)")
        #expect(try ctl(["pause", "today"]).stdout.contains(" 00:00\n"))
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
}
