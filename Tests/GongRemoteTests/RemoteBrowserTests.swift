import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongRemote

/// The page in a real browser (Tests/browser/remote_page.py: Debian's chromium, headless at
/// 390×844 with touch, driven by Selenium): two phones pair with codes from `gong remote pair`,
/// one starts a sit and watches it count down, the other pauses it and the first shows it within
/// 200 ms, each cue is marked within 50 ms of its audible time, and the sit is stopped and shows
/// in the history; the next bell is shown, one is rung now and the bells paused for an hour. The
/// remote counts a sit from 36 s (its `streak-minimum`, a minute unless configured): the sit
/// need last only that long to show in the history, nine cues and more.
/// Screenshots of the whole page, light and dark, land in `.build/…/remote-browser/`.
@Suite("gong remote's page in a browser", .serialized)
struct RemoteBrowserTests {
    @Test func twoPhonesPairStartPauseAndStopASit() throws {
        guard access("/usr/bin/chromium", X_OK) == 0, access("/usr/bin/chromedriver", X_OK) == 0 else {
            Issue.record("chromium and chromium-driver are needed: scripts/install-deps.sh test installs them")
            return
        }
        let world = RemoteWorld()
        let countsFrom = 36
        let server = try world.server(streakMinimumSeconds: Double(countsFrom))
        defer { server.close() }
        // The bells the page shows, rings one of now and pauses (the remote finds them by their
        // socket); hourly, so none of their own is likely to come due during the test.
        let bells = try world.spawn(["bells", "--every", "1h", "--sound", "chime", "--device", "pulse"])
        defer {
            kill(bells, SIGTERM)
            var status: Int32 = 0
            waitpid(bells, &status, 0)
        }
        let script = String(#filePath.prefix { _ in true }).split(separator: "/").dropLast(2).joined(separator: "/")
        let out = String(gongExecutable.dropLast(5)) + "/remote-browser"
        let command =
            "/usr/bin/python3 '/\(script)/browser/remote_page.py' --port \(server.port) --gong '\(gongExecutable)'"
            + " --state '\(world.root)/state' --out '\(out)' --counts-from \(countsFrom) 2>&1"
        guard let pipe = popen(command, "r") else {
            Issue.record("cannot run \(command)")
            return
        }
        var output = ""
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), pipe) != nil { output += String(nulTerminated: line) }
        let status = pclose(pipe)
        print(output)
        #expect(status == 0, "\(output)")
        #expect(output.contains(#""pauseSeenMs""#), "\(output)")
    }

    /// Tests/browser/remote_reconnect.py: two phones edit the bells' schedule (a bad value
    /// refused with config.toml's line) and add a sit by hand (both count it with no reload);
    /// then the remote is closed (every socket with it) when the script says DROP, and started
    /// again on the same port when it says BACK: both phones show the banner meanwhile, and
    /// reconnect by themselves and say how long they were away.
    @Test func phonesEditTheScheduleAddASitAndReconnectAfterTheRemoteRestarts() throws {
        guard access("/usr/bin/chromium", X_OK) == 0, access("/usr/bin/chromedriver", X_OK) == 0 else {
            Issue.record("chromium and chromium-driver are needed: scripts/install-deps.sh test installs them")
            return
        }
        let world = RemoteWorld()
        var server: RemoteServer? = try world.server()
        let port = server!.port
        defer { server?.close() }
        let bells = try world.spawn(["bells", "--every", "1h", "--device", "null"])
        defer {
            kill(bells, SIGTERM)
            var status: Int32 = 0
            waitpid(bells, &status, 0)
        }
        let script = String(#filePath.prefix { _ in true }).split(separator: "/").dropLast(2).joined(separator: "/")
        let out = String(gongExecutable.dropLast(5)) + "/remote-browser"
        let command =
            "/usr/bin/python3 '/\(script)/browser/remote_reconnect.py' --port \(port) --gong '\(gongExecutable)'"
            + " --state '\(world.root)/state' --out '\(out)' 2>&1"
        // Nor may the script and its browsers hold the remote's port (see `markCloseOnExec`).
        RemoteHub.markCloseOnExec()
        guard let pipe = popen(command, "r") else {
            Issue.record("cannot run \(command)")
            return
        }
        var output = ""
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), pipe) != nil {
            let text = String(nulTerminated: line)
            output += text
            switch text {
            case "DROP\n":
                server?.close()
                server = nil
            case "BACK\n":
                // The port may be held a moment longer by the connections just closed.
                var refusal: (any Error)?
                _ = Waiting.until(seconds: 10) {
                    do { server = try world.server(port: port) } catch { refusal = error }
                    return server != nil
                }
                if server == nil {
                    Issue.record("the remote could not listen on \(port) again: \(String(describing: refusal))")
                }
            default: break
            }
        }
        let status = pclose(pipe)
        print(output)
        #expect(status == 0, "\(output)")
        #expect(output.contains(#""reconnectedAfterMs""#), "\(output)")
    }
}
