import FoundationEssentials
import Glibc
import GongCore
import GongPractice
import GongTestSupport
import Testing

@testable import GongRemote

/// The `gong` built beside the tests.
let gongExecutable: String = {
    var directory = RunningExecutable.path()
    while !directory.isEmpty && access(directory + "/gong", X_OK) != 0 {
        directory = String(directory[..<(directory.lastIndex(of: "/") ?? directory.startIndex)])
    }
    return directory + "/gong"
}()

/// Everything a test's sessions, bells and remote keep, in one scratch directory.
final class RemoteWorld {
    let root: String
    var control: String { root + "/run/gong" }
    var history: String { root + "/data/gong/history.sqlite" }
    let store: RemoteStore

    init() {
        var template = Array("/tmp/gong-remote-api-XXXXXX".utf8CString)
        root = String(cString: mkdtemp(&template))
        // Where `gong remote pair` with this XDG_STATE_HOME writes its codes.
        store = RemoteStore(directory: root + "/state/gong/remote")
        for directory in [root + "/run", control, root + "/data", root + "/home"] { mkdir(directory, 0o700) }
    }

    deinit { _ = "rm -rf '\(root)'".withCString { system($0) } }

    /// The test's own directories, and the shared PulseAudio server named outright: with
    /// another runtime directory and home, libpulse would not find it.
    var environment: [String: String] {
        var environment = [
            "HOME": root + "/home", "XDG_DATA_HOME": root + "/data", "XDG_STATE_HOME": root + "/state",
            "XDG_RUNTIME_DIR": root + "/run", "XDG_CONFIG_HOME": root + "/config"
        ]
        if let server = Self.pulseServer { environment["PULSE_SERVER"] = server }
        return environment
    }

    /// Where the running PulseAudio listens, as `pactl info` says.
    static let pulseServer: String? = {
        if let given = getenv("PULSE_SERVER") { return String(cString: given) }
        guard let pipe = popen("pactl info 2>/dev/null", "r") else { return nil }
        defer { pclose(pipe) }
        var line = [CChar](repeating: 0, count: 1024)
        while fgets(&line, Int32(line.count), pipe) != nil {
            let text = String(nulTerminated: line)
            if text.hasPrefix("Server String: /") {
                return "unix:" + String(text.dropFirst("Server String: ".count).filter { $0 != "\n" })
            }
        }
        return nil
    }()

    /// A remote on `port` (0: any free one).
    func server(showStreaks: Bool = true, streakMinimumSeconds: Double = 60, port: Int = 0) throws -> RemoteServer {
        var configuration = RemoteConfiguration(store: store, controlDirectory: control, gongExecutable: gongExecutable)
        configuration.port = port
        configuration.historyPath = history
        configuration.showStreaks = showStreaks
        configuration.streakMinimumSeconds = streakMinimumSeconds
        configuration.sessionEnvironment = environment
        return try RemoteServer(configuration: configuration)
    }

    /// `gong ARGUMENTS` as a process of the test's own, in this world.
    func spawn(_ arguments: [String]) throws -> Int32 {
        try RemoteHub.spawnDetached(gongExecutable, arguments, environment: environment).get()
    }
}

/// A paired phone: its cookie and the headers a page of the remote's sends.
struct Phone {
    let port: Int
    let token: String
    var headers: [String] { ["Origin: http://127.0.0.1:\(port)", "Cookie: gong_token=\(token)"] }

    init(port: Int, store: RemoteStore, name: String = "Anna's phone", role: RemoteRole = .control) throws {
        self.port = port
        let code = try store.newPairingCode(role: role, now: Int64(time(nil)))
        let reply = try exchange(
            "POST", "/api/pair", port: port, headers: ["Origin: http://127.0.0.1:\(port)"],
            body: #"{"code":"\#(code)","name":"\#(name)","bearer":true}"#)
        struct Token: Decodable { var token: String }
        token = try JSONDecoder().decode(Token.self, from: Data((reply?.body ?? "").utf8)).token
    }

    func get(_ path: String) throws -> HTTPReply? { try exchange("GET", path, port: port, headers: headers) }

    func post(_ path: String, _ body: String = "") throws -> HTTPReply? {
        try exchange("POST", path, port: port, headers: headers, body: body)
    }

    /// The live feed, past its hello.
    func socket() throws -> RawClient {
        let client = try RawClient(port: port, timeout: 30)
        _ = client.upgradeToWebSocket(port: port, headers: headers)
        _ = readFrame(client)
        return client
    }
}

/// The next text message on `client` that contains every one of `parts`, within its timeout.
func message(on client: RawClient, containing parts: [String]) -> String? {
    messages(on: client, containing: [parts]).first ?? nil
}

/// Messages matching each of `wanted` (each a list of parts), in whatever order they come; nil
/// for one that did not come within the client's timeout.
func messages(on client: RawClient, containing wanted: [[String]]) -> [String?] {
    var found = [String?](repeating: nil, count: wanted.count)
    while found.contains(where: { $0 == nil }), let frame = readFrame(client) {
        let text = String(decoding: frame.payload, as: UTF8.self)
        for (index, parts) in wanted.enumerated() where found[index] == nil && parts.allSatisfy({ text.contains($0) }) {
            found[index] = text
        }
    }
    return found
}

/// On threads of its own (`.onThreadsOfItsOwn`): its tests wait on the remote, a sit played in
/// real time among them, which on the shared threads held one of a 2-core machine's two.
@Suite("gong remote's API", .serialized, .onThreadsOfItsOwn)
struct RemoteAPITests {
    /// A sit started from the phone runs as its own `gong run --control socket`: paused from the
    /// phone (every phone told who did it), and playing on when the remote is killed; a new
    /// remote finds it and stops it. Through the shared PulseAudio sink, for a few seconds.
    @Test func aSitStartedFromThePhoneIsControlledAndOutlivesTheRemote() throws {
        let world = RemoteWorld()
        var server = try world.server()
        let phone = try Phone(port: server.port, store: world.store)
        let watcher = try Phone(port: server.port, store: world.store, name: "Ben's phone")
        let feed = try watcher.socket()
        defer { feed.close() }

        let started = try phone.post(
            "/api/session/start", #"{"pattern":"box","duration":"32s","device":"pulse"}"#)
        #expect(started?.status == 200, "\(started?.body ?? "")")
        struct Started: Decodable { var pid: Int32 }
        let pid = try JSONDecoder().decode(Started.self, from: Data((started?.body ?? "").utf8)).pid
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let startedTold = messages(
            on: feed,
            containing: [[#""action":"start""#, #""by":"Anna's phone""#], [#""type":"session""#, #""state":"active""#]])
        #expect(startedTold[0] != nil && startedTold[1] != nil, "\(startedTold)")

        let sent = RemoteHub.nowMs()
        let paused = try phone.post("/api/session/toggle")
        #expect(paused?.status == 200, "\(paused?.body ?? "")")
        let change = message(on: feed, containing: [#""action":"toggle""#, #""by":"Anna's phone""#])
        let latency = RemoteHub.nowMs() - sent
        #expect(change != nil)
        #expect(latency < 200, "the other phone heard of the pause \(latency) ms after it was sent")
        print("remote: the other phone heard of the pause \(latency) ms after it was sent")
        #expect(message(on: feed, containing: [#""type":"session""#, #""state":"paused""#]) != nil)
        #expect(try phone.post("/api/session/gain", #"{"decibels":-6}"#)?.status == 200)
        let tooLoud = try phone.post("/api/session/gain", #"{"decibels":99}"#)
        #expect(tooLoud?.status == 400 && tooLoud?.body.contains("badArgument") == true, "\(tooLoud?.body ?? "")")

        // The remote dies; the sit does not.
        server.close()
        #expect(kill(pid, 0) == 0)
        server = try world.server()
        let again = try Phone(port: server.port, store: world.store)
        #expect(
            try Waiting.until(seconds: 10) { try again.get("/api/session")?.body.contains(#""pid":\#(pid)"#) == true },
            "the new remote found the sit")
        #expect(try again.post("/api/session/stop")?.status == 200)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "gong run ended on its own after stop")
        server.close()
    }

    /// `gong bells` found by its socket (started after the remote: seen by inotify), paused and
    /// resumed from the phone, its plan listed, and its changes pushed to the phones.
    @Test func theBellsAreFoundPausedResumedAndPlannedFromThePhone() throws {
        let world = RemoteWorld()
        let server = try world.server()
        defer { server.close() }
        let phone = try Phone(port: server.port, store: world.store)
        #expect(try phone.get("/api/bells")?.body.hasPrefix(#"{"bells":null"#) == true)
        let feed = try phone.socket()
        defer { feed.close() }
        let pid = try world.spawn(["bells", "--every", "1h", "--device", "null"])
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        #expect(try Waiting.until(seconds: 20) { try phone.get("/api/bells")?.body.contains(#""next":"#) == true })

        let paused = try phone.post("/api/bells/pause", #"{"seconds":3600}"#)
        #expect(paused?.status == 200 && paused?.body.contains(#""pausedUntil":"#) == true, "\(paused?.body ?? "")")
        // The bells' own event may come before the remote's word of who asked, or after it.
        let told = messages(
            on: feed,
            containing: [
                [#""action":"bells.pause""#, #""by":"Anna's phone""#], [#""type":"bells""#, #""request":"pause""#]
            ])
        #expect(told[0] != nil && told[1] != nil, "\(told)")
        let plan = try phone.get("/api/bells/plan")
        #expect(plan?.status == 200 && plan?.body.contains(#""plan":["#) == true, "\(plan?.body ?? "")")
        let resumed = try phone.post("/api/bells/resume")
        #expect(resumed?.status == 200 && resumed?.body.contains("pausedUntil") == false)
        let wrong = try phone.post("/api/bells/pause", #"{"until":"25:99"}"#)
        #expect(wrong?.status == 400, "\(wrong?.body ?? "")")
    }

    /// The calendar and streaks as gong stats reads them, and none when the config says so.
    @Test func theHistoryIsServedWithStreaksOnlyWhenTheConfigShowsThem() throws {
        let world = RemoteWorld()
        mkdir(world.root + "/data/gong", 0o700)
        let history = try SessionHistory(path: world.history)
        let now = Date()
        try history.save(
            SessionRecord(
                id: "remote-test", pattern: "two-phase", parameters: "", source: .played,
                startedAt: now.addingTimeInterval(-1200), endedAt: now, utcOffsetSeconds: 0, day: "",
                plannedSeconds: 1200, playedSeconds: 1200, phases: 2, cycles: 1, plannedCycles: 1, ending: .completed,
                pauses: 0, skips: 0, xruns: 0, deviceLosses: 0, lostFrames: 0))
        for showStreaks in [true, false] {
            let server = try world.server(showStreaks: showStreaks)
            defer { server.close() }
            let phone = try Phone(port: server.port, store: world.store)
            let reply = try phone.get("/api/history")
            #expect(reply?.status == 200)
            let body = reply?.body ?? ""
            #expect(body.contains(#""sessions":1"#), "\(body.prefix(300))")
            #expect(body.contains(#""currentStreak":1"#) == showStreaks, "\(body.prefix(300))")
            #expect(body.contains("longestStreak") == showStreaks)
        }
    }
}
