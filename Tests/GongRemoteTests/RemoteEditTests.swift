import FoundationEssentials
import Glibc
import GongPractice
import GongTestSupport
import Testing

@testable import GongRemote

/// What a phone changes beyond the running sit: the bells' schedule, and a sit added by hand.
@Suite("gong remote: the schedule and the history edited from the phone", .serialized)
struct RemoteEditTests {
    /// The error a `[bells]` key with this value gets from `gong bells` reading config.toml, as
    /// it prints it: `gong: FILE:LINE: bells.KEY = "VALUE": …`.
    static func configError(world: RemoteWorld, key: String, value: String) -> String {
        mkdir(world.root + "/config", 0o700)
        mkdir(world.root + "/config/gong", 0o700)
        let file = world.root + "/config/gong/config.toml"
        let text = "[bells]\n\(key) = \"\(value)\"\n"
        text.withCString { text in
            file.withCString { path in
                let handle = fopen(path, "w")
                fputs(text, handle)
                fclose(handle)
            }
        }
        defer { unlink(file) }
        var environment = world.environment
        environment["XDG_CONFIG_HOME"] = world.root + "/config"
        let (_, output) = RemoteHub.runToEnd(gongExecutable, ["bells", "--device", "null"], environment: environment)
        return output.split(separator: "\n").first { $0.contains("bells.\(key)") }.map(String.init) ?? output
    }

    /// The schedule shown, changed on one phone and taken at once by the running `gong bells`
    /// (its plan and next bell follow it), every phone told who changed it; a bad value is the
    /// one line config.toml's key gets, and nothing changes.
    @Test func theScheduleEditedOnThePhoneIsTakenByTheRunningBellsAndCheckedAsConfigIs() throws {
        let world = RemoteWorld()
        let server = try world.server()
        defer { server.close() }
        let phone = try Phone(port: server.port, store: world.store)
        let watcher = try Phone(port: server.port, store: world.store, name: "Ben's phone")
        let feed = try watcher.socket()
        defer { feed.close() }
        let pid = try world.spawn(["bells", "--every", "1h", "--active", "06:00-22:00", "--device", "null"])
        defer {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        #expect(try Waiting.until(seconds: 20) { try phone.get("/api/bells")?.body.contains(#""every":"1h""#) == true })
        let before = try phone.get("/api/bells")?.body ?? ""
        #expect(before.contains(#""active":"06:00-22:00""#), "\(before)")

        let changed = try phone.post(
            "/api/bells/schedule", #"{"at": ["08:00", "20:30"], "quiet": "12:00-13:00", "max": 5}"#)
        #expect(changed?.status == 200, "\(changed?.body ?? "")")
        let body = changed?.body ?? ""
        #expect(body.contains(#""schedule":{"at":"08:00,20:30","max":"5","quiet":"12:00-13:00"}"#), "\(body)")
        let next = body.firstRange(of: #""next":""#).map { String(body[$0.upperBound...].prefix(16)) } ?? ""
        #expect(next.hasSuffix("08:00") || next.hasSuffix("20:30"), "the next bell \(next) follows the new schedule")
        let told = messages(
            on: feed,
            containing: [
                [#""action":"bells.schedule""#, #""by":"Anna's phone""#], [#""type":"bells""#, #""request":"schedule""#]
            ])
        #expect(told[0] != nil && told[1] != nil, "\(told)")
        // Kept in config.toml, which reads back to it; the bells' own flags would win over it.
        #expect(body.contains(#""savedTo":"\#(world.root)/config/gong/config.toml""#), "\(body)")
        #expect(body.contains(#""flagsWin":"--every --active""#), "\(body)")
        let kept = try String(contentsOfFile: world.root + "/config/gong/config.toml", encoding: .utf8)
        var config = GongConfig()
        try config.read(kept, path: "config.toml")
        #expect(
            config.bells.value.scheduleTexts == ["at": "08:00,20:30", "max": "5", "quiet": "12:00-13:00"], "\(kept)")
        let plan = try phone.get("/api/bells/plan")?.body ?? ""
        let times = plan.matches(of: /"time":"(\d\d:\d\d)"/).map { String($0.output.1) }
        #expect(times == ["08:00", "20:30"], "\(plan)")

        // Wrong values: the line config.toml's key gets, without its file and line.
        for (key, value) in [("every", "5s"), ("active", "18:00-09:00"), ("days", "mon-fry"), ("at", "8 o'clock")] {
            let refused = try phone.post("/api/bells/schedule", #"{"\#(key)": "\#(value)"}"#)
            struct Refusal: Decodable {
                struct Body: Decodable { var code: String, message: String }
                var error: Body
            }
            let error = try JSONDecoder().decode(Refusal.self, from: Data((refused?.body ?? "").utf8)).error
            #expect(refused?.status == 400 && error.code == "badArgument")
            let fromConfig = Self.configError(world: world, key: key, value: value)
            #expect(
                fromConfig.hasSuffix("config.toml:2: " + error.message),
                "the phone's \"\(error.message)\" is not config.toml's \"\(fromConfig)\"")
            #expect(!error.message.contains("\n") && error.message.contains("; use "), "\(error.message)")
        }
        let twoTimings = try phone.post("/api/bells/schedule", #"{"every": "45m", "random": "20m-60m"}"#)
        #expect(twoTimings?.body.contains(#"bells.random = \"20m-60m\": every is given too"#) == true)
        let none = try phone.post("/api/bells/schedule", #"{"active": "09:00-17:00"}"#)
        #expect(none?.status == 400 && none?.body.contains("no timing for the bells") == true, "\(none?.body ?? "")")
        let sound = try phone.post("/api/bells/schedule", #"{"every": "45m", "sound": "chime"}"#)
        #expect(sound?.status == 400 && sound?.body.contains("not part of the schedule") == true)
        let notAnObject = try phone.post("/api/bells/schedule", #"["every", "45m"]"#)
        #expect(notAnObject?.status == 400, "\(notAnObject?.body ?? "")")
        #expect(
            try phone.get("/api/bells")?.body.contains(#""at":"08:00,20:30""#) == true, "nothing refused changed it")
    }

    /// A sit added by hand on one phone is in the history (the calendar and the totals) and
    /// every phone is told to read it again; what the CLI refuses, the phone is refused with
    /// the CLI's own line.
    @Test func aSitAddedByHandIsWrittenAsTheCLIWritesItAndToldToEveryPhone() throws {
        let world = RemoteWorld()
        let server = try world.server()
        defer { server.close() }
        let phone = try Phone(port: server.port, store: world.store)
        let watcher = try Phone(port: server.port, store: world.store, name: "Ben's phone")
        let feed = try watcher.socket()
        defer { feed.close() }

        let added = try phone.post(
            "/api/history/add", #"{"pattern": "zazen", "at": "yesterday 07:00", "length": "25m"}"#)
        #expect(added?.status == 200 && added?.body.contains("added zazen, 25m") == true, "\(added?.body ?? "")")
        let told = messages(
            on: feed,
            containing: [[#""action":"history.add""#, #""by":"Anna's phone""#], [#""type":"history""#]])
        #expect(told[0] != nil && told[1] != nil, "\(told)")
        let stats = try watcher.get("/api/history")?.body ?? ""
        #expect(stats.contains(#""sessions":1"#) && stats.contains(#""minutes":25"#), "\(stats.prefix(300))")
        let records = try SessionHistory(path: world.history).records()
        #expect(records.map(\.pattern) == ["zazen"] && records.first?.source == .added)

        for (field, body) in [
            ("length", #"{"pattern": "zazen", "at": "yesterday 07:00", "length": "25x"}"#),
            ("at", #"{"pattern": "zazen", "at": "2999-01-01 07:00", "length": "25m"}"#),
            ("at", #"{"pattern": "zazen", "at": "2026-02-30 07:00", "length": "25m"}"#)
        ] {
            let refused = try phone.post("/api/history/add", body)
            #expect(refused?.status == 400, "\(refused?.body ?? "")")
            struct Sit: Decodable { var pattern: String, at: String, length: String }
            let sit = try JSONDecoder().decode(Sit.self, from: Data(body.utf8))
            let (status, cli) = RemoteHub.runToEnd(
                gongExecutable, ["history", "add", "--pattern", sit.pattern, "--at", sit.at, "--length", sit.length],
                environment: world.environment)
            let line = cli.split(separator: "\n").last.map(String.init) ?? ""
            #expect(status == 64 && line.hasPrefix("gong: --\(field)"), "\(cli)")
            #expect(
                refused?.body.contains(JSONText.string(String(line.dropFirst(6)))) == true,
                "\(refused?.body ?? "") vs \(line)")
        }
        #expect(try SessionHistory(path: world.history).records().count == 1, "nothing refused was written")
        let malformed = try phone.post("/api/history/add", #"{"pattern": "zazen"}"#)
        #expect(malformed?.status == 400 && malformed?.body.contains("add takes") == true)
    }

    /// A view device reads the schedule and the history but changes neither.
    @Test func aViewDeviceCannotChangeTheScheduleOrAddASit() throws {
        let world = RemoteWorld()
        let server = try world.server()
        defer { server.close() }
        let viewer = try Phone(port: server.port, store: world.store, name: "Hall screen", role: .view)
        for (path, body) in [
            ("/api/bells/schedule", #"{"every": "45m"}"#),
            ("/api/history/add", #"{"pattern": "zazen", "at": "yesterday 07:00", "length": "25m"}"#)
        ] {
            let refused = try viewer.post(path, body)
            #expect(
                refused?.status == 403 && refused?.body.contains("viewOnly") == true, "\(path): \(refused?.body ?? "")")
        }
        #expect(access(world.history, F_OK) != 0, "no history was written")
    }
}
