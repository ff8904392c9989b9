import FoundationEssentials
import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongRemote

/// Nothing the remote does can harm a bell: `gong bells` with the remote subscribed to it and
/// five phones on the remote's WebSocket, the remote killed with SIGKILL while a bell is due
/// (its stream already opening). The bell must be heard on its second by the bells' own account
/// (`offMs` within 1 ms, as `LiveBellsTests` holds them) and be in the recording of the sink's
/// monitor, once; the remote started again, all five phones must be taken back with their
/// tokens.
///
/// `gong remote` refuses to run as root, and the tests run as root: bells, remote, pairing and a
/// PulseAudio server of the test's own (with a null sink and a keeper stream, so no other test's
/// sound reaches its recording) run as `nobody` through `setpriv`, in a scratch directory of
/// their own that is their HOME and XDG directories. Run by a user, they run as that user.
/// Real time: about half a minute, the bell 20 s after `gong bells` starts.
@Suite("gong remote killed while a bell is due", .serialized)
struct RemoteKillTests {
    @Test func aBellDueWhenTheRemoteIsKilledIsHeardOnItsSecondAndFivePhonesReconnect() throws {
        for tool in ["/usr/bin/pulseaudio", "/usr/bin/pacat", "/usr/bin/pactl", "/usr/bin/setpriv"]
        where access(tool, X_OK) != 0 {
            Issue.record("\(tool) is needed: scripts/install-deps.sh test installs it")
            return
        }
        let box = try UnprivilegedBox()
        defer { box.close() }
        let sink = "gong_remote_kill"
        try box.start(
            "pulse",
            [
                "/usr/bin/pulseaudio", "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no",
                "--load=module-null-sink sink_name=\(sink) rate=48000 format=float32le channels=2",
                "--load=module-native-protocol-unix socket=\(box.pulseSocket)"
            ])
        try #require(
            Waiting.until(seconds: 30) { box.run(["/usr/bin/pactl", "info"]).status == 0 },
            "the test's PulseAudio answers")
        // An idle null sink takes seconds to wake for a new stream; a sound card does not.
        try box.start(
            "keeper",
            [
                "/usr/bin/pacat", "--playback", "--raw", "--format=float32le", "--rate=48000", "--channels=2",
                "--latency-msec=20", "--device=\(sink)", "--client-name=gong-remote-kill-keeper", "/dev/zero"
            ])
        try box.start(
            "monitor",
            [
                "/usr/bin/parec", "--raw", "--format=s16le", "--rate=48000", "--channels=1", "--device=\(sink).monitor",
                "--latency-msec=20"
            ])

        // The minute's bell 20 s away, whatever the time now: the box's clock is set that many
        // seconds short of a minute by its time zone (a bell nearer than 5 s to its start is not
        // rung, and the phones are paired before it), rather than waiting up to a minute for
        // the next minute of UTC.
        box.zone = UnprivilegedBox.zone(placingTheNextMinuteIn: 20)
        let bells = try box.start(
            "bells", [gongExecutable, "bells", "--every", "1m", "--sound", "chime", "--device", "pulse", "--json"])

        let port = try freePort()
        var remote = try box.start("remote", [gongExecutable, "remote", "--listen", "127.0.0.1:\(port)"])
        try #require(
            Waiting.until(seconds: 30) { (try? exchange("GET", "/", port: port))??.status == 200 }, "the remote serves")
        var phones: [Phone] = []
        for index in 1...5 {
            let pair = box.run([gongExecutable, "remote", "pair", "--url", "http://127.0.0.1:\(port)/"])
            let code = try #require(
                pair.output.split(separator: "\n").map { $0.filter { $0 != " " } }.first {
                    !$0.isEmpty && $0.allSatisfy(\.isNumber)
                }, "gong remote pair printed a code: \(pair.output)")
            let reply = try exchange(
                "POST", "/api/pair", port: port, headers: ["Origin: http://127.0.0.1:\(port)"],
                body: #"{"code":"\#(code)","name":"phone \#(index)","bearer":true}"#)
            struct Token: Decodable { var token: String }
            let token = try JSONDecoder().decode(Token.self, from: Data((reply?.body ?? "").utf8)).token
            phones.append(Phone(port: port, token: token))
        }
        // The remote has found the bells (and subscribed to them): when the next is due.
        struct Bells: Decodable {
            var bells: Status?
            struct Status: Decodable { var nextDue: Double? }
        }
        var due: Double?
        try #require(
            Waiting.until(seconds: 30) {
                let body = (try? phones[0].get("/api/bells"))??.body ?? ""
                due = (try? JSONDecoder().decode(Bells.self, from: Data(body.utf8)))?.bells?.nextDue
                return due != nil
            }, "the remote shows the bells")
        let sockets = try phones.map { try #require($0.connect(), "a phone connects") }
        defer { sockets.forEach { $0.close() } }

        // Killed a second and a half before the bell: `gong bells` opens its stream 4 s ahead, so
        // the bell is on its way, with the remote's subscription open on the bells' socket.
        let killAt = due! - 1.5
        let wait = killAt - wallSeconds()
        try #require(wait > 0, "the bell is still ahead (\(wait) s)")
        usleep(UInt32(wait * 1e6))
        kill(remote, SIGKILL)
        var status: Int32 = 0
        waitpid(remote, &status, 0)
        box.forget(remote)
        let killedAt = wallSeconds()
        #expect(sockets.allSatisfy { $0.closedByServer() }, "the phones saw the remote go")

        struct Line: Decodable {
            var type: String
            var outcome: String?
            var offMs: Double?
            var due: Double?
        }
        // That bell, not another: one due as `gong bells` started, within its lead, is skipped
        // as late, never rung late, and said first.
        var bell: Line?
        try #require(
            Waiting.until(seconds: 60) {
                bell = box.text("bells.out").split(separator: "\n").compactMap {
                    try? JSONDecoder().decode(Line.self, from: Data($0.utf8))
                }.first { $0.type == "bell" && abs(($0.due ?? 0) - due!) < 0.5 }
                return bell != nil
            }, "the bell is rung: \(box.text("bells.err"))")
        let offMs = bell?.offMs
        #expect(bell?.outcome == "rung", "\(box.text("bells.out"))")
        #expect(offMs.map { abs($0) < 1 } == true, "the bell heard on its second: \(box.text("bells.out"))")

        // The remote again: every phone is taken back with its token, and greeted by name.
        remote = try box.start("remote-again", [gongExecutable, "remote", "--listen", "127.0.0.1:\(port)"])
        let restarted = wallSeconds()
        var back: [Double] = []
        for (index, phone) in phones.enumerated() {
            var hello: String?
            _ = Waiting.until(seconds: 30) {
                hello = phone.connect(greeting: true).map { socket in
                    defer { socket.close() }
                    return socket.greeting ?? ""
                }
                return hello != nil
            }
            #expect(
                hello?.contains(#""device":"phone \#(index + 1)""#) == true,
                "phone \(index + 1) reconnects: \(hello ?? "nothing")")
            back.append(wallSeconds() - restarted)
        }

        kill(bells, SIGTERM)
        waitpid(bells, &status, 0)
        let onsets = box.stopMonitorAndFindOnsets()
        #expect(onsets.count == 1, "the bell is in the recording, once: onsets at \(onsets) s")
        func figure(_ value: Double) -> String { "\((value * 100).rounded() / 100)" }
        print(
            "remote killed \(figure(due! - killedAt)) s before the bell; bell \(bell?.outcome ?? "-"),"
                + " \(offMs.map(figure) ?? "-") ms off its second; onsets in the recording at"
                + " \(onsets.map(figure)) s; five phones back \(back.map(figure)) s after the restart")
    }
}

/// The wall clock, in seconds since 1970 (what `nextDue` is on).
private func wallSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// A port nothing listens on now.
private func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else { throw RawClient.ClientError.cannotConnect }
    return Int(UInt16(bigEndian: address.sin_port))
}

extension Phone {
    init(port: Int, token: String) {
        self.port = port
        self.token = token
    }

    /// The live feed, or nil when the remote does not take it (not listening yet, or refused);
    /// with `greeting`, the hello it sent is kept.
    func connect(greeting: Bool = false) -> GreetedSocket? {
        guard let client = try? RawClient(port: port, timeout: 5) else { return nil }
        // A send that failed shows as no response below.
        _ = client.send(
            request(
                "GET", "/ws", port: port,
                headers: [
                    "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
                ] + headers))
        guard client.response()?.status == 101, let hello = readFrame(client) else {
            client.close()
            return nil
        }
        return GreetedSocket(client: client, greeting: String(decoding: hello.payload, as: UTF8.self))
    }
}

/// A phone's WebSocket and the hello it was greeted with.
struct GreetedSocket {
    let client: RawClient
    let greeting: String?
    func close() { client.close() }
    func closedByServer() -> Bool { client.closedByServer() }
}

/// A scratch directory that is an unprivileged user's HOME and XDG directories, and the
/// processes the test starts there as that user: `nobody` when the test runs as root (which
/// `gong remote` refuses to be), else the test's own user.
final class UnprivilegedBox {
    let root: String
    private(set) var processes: [(name: String, pid: Int32)] = []
    private let user: (uid: UInt32, gid: UInt32)

    var pulseSocket: String { root + "/pulse.sock" }

    init() throws {
        var template = Array("/tmp/gong-remote-kill-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw RawClient.ClientError.cannotConnect }
        root = String(cString: made)
        user = geteuid() == 0 ? (65534, 65534) : (getuid(), getgid())
        for directory in ["", "/run", "/state", "/data", "/config", "/home"] {
            mkdir(root + directory, 0o700)
            chown(root + directory, user.uid, user.gid)
        }
    }

    /// The time zone (`TZ`) of what is started from now on; the machine's when nil.
    var zone: String?

    /// A zone whose clock, now, is `seconds` short of a whole minute: whole seconds ahead of UTC
    /// (POSIX `TZ` takes an offset to the second, and gong's local time is the C library's).
    static func zone(placingTheNextMinuteIn seconds: Int) -> String {
        let ahead = ((60 - seconds) - Int(time(nil)) % 60 + 120) % 60
        return "GNG-0:0:\(ahead)"
    }

    var environment: [String: String] {
        var environment = [
            "HOME": root + "/home", "XDG_RUNTIME_DIR": root + "/run", "XDG_STATE_HOME": root + "/state",
            "XDG_DATA_HOME": root + "/data", "XDG_CONFIG_HOME": root + "/config",
            "PULSE_SERVER": "unix:" + pulseSocket,
            // The box's PulseAudio keeps its state here, not in a runtime path the test's own
            // environment may name (a developer's private server): the box's user could not use it.
            "PULSE_RUNTIME_PATH": root + "/run/pulse"
        ]
        if let zone { environment["TZ"] = zone }
        return environment
    }

    /// Runs as the box's user; its output goes to NAME.out and NAME.err here.
    @discardableResult
    func start(_ name: String, _ command: [String]) throws -> Int32 {
        let shell = ["/bin/sh", "-c", #"exec "$@" >"$GONG_BOX_OUT" 2>"$GONG_BOX_ERR""#, "sh"] + command
        var environment = environment
        environment["GONG_BOX_OUT"] = "\(root)/\(name).out"
        environment["GONG_BOX_ERR"] = "\(root)/\(name).err"
        let full = geteuid() == 0 ? asUser + shell : shell
        // Started as the remote starts a sit: in a session of its own, no signal blocked (a test
        // runs on a thread that blocks most of them), output to the box's files by the shell.
        let pid = try RemoteHub.spawnDetached(full[0], Array(full.dropFirst()), environment: environment).get()
        processes.append((name, pid))
        return pid
    }

    private var asUser: [String] {
        ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--"]
    }

    /// Runs to its end as the box's user: its status and standard output.
    func run(_ command: [String]) -> (status: Int32, output: String) {
        let words =
            ["/usr/bin/env"] + environment.map { "\($0.key)=\($0.value)" }.sorted()
            + (geteuid() == 0 ? asUser : []) + command
        let line = words.map { "'" + $0.replacing("'", with: #"'\''"#) + "'" }.joined(separator: " ") + " 2>/dev/null"
        guard let pipe = popen(line, "r") else { return (-1, "") }
        var output = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil { output += String(nulTerminated: buffer) }
        return (pclose(pipe), output)
    }

    func text(_ file: String) -> String {
        FileManager.default.contents(atPath: "\(root)/\(file)").map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// A process that ended (and was waited for) by the test's own hand.
    func forget(_ pid: Int32) { processes.removeAll { $0.pid == pid } }

    /// Ends the monitor's recording; where sound begins in it after at least half a second of
    /// silence, in seconds from its start.
    func stopMonitorAndFindOnsets() -> [Double] {
        if let monitor = processes.first(where: { $0.name == "monitor" }) {
            kill(monitor.pid, SIGTERM)
            var status: Int32 = 0
            waitpid(monitor.pid, &status, 0)
            processes.removeAll { $0.name == "monitor" }
        }
        guard let data = FileManager.default.contents(atPath: "\(root)/monitor.out") else { return [] }
        var onsets: [Double] = []
        var quietSince = 0
        var quiet = 24000
        data.withUnsafeBytes { bytes in
            let samples = bytes.bindMemory(to: Int16.self)
            for (index, sample) in samples.enumerated() {
                if abs(Int(sample)) > 300 {
                    if quiet >= 24000 { onsets.append(Double(index) / 48000) }
                    quiet = 0
                    quietSince = index
                } else {
                    quiet = index - quietSince
                }
            }
        }
        return onsets
    }

    /// Ends every process still running (SIGTERM, then waits) and removes the directory.
    func close() {
        for process in processes.reversed() {
            kill(process.pid, SIGTERM)
            var status: Int32 = 0
            waitpid(process.pid, &status, 0)
        }
        processes.removeAll()
        _ = "rm -rf '\(root)'".withCString { system($0) }
    }
}
