import FoundationEssentials
import Glibc
import GongKit
import GongPractice
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The remote's state and its API, all on the one event loop: the paired devices, the pairing
/// lock, the phones connected, the sessions and bells found on the control sockets.
///
/// Every request passes the same gate in the same order: its `Host` must be this box's; a POST
/// (and a WebSocket upgrade) must come from this same origin when the browser says where it
/// came from, and must say so when it is sent with the cookie; then the device's token (cookie
/// or `Authorization: Bearer`) and its role. Only the page, its manifest and icon, and the
/// pairing itself are served without a token.
public final class RemoteHub: @unchecked Sendable {
    public let loop: EventLoop
    let configuration: RemoteConfiguration
    let hostCheck: HostCheck

    private var devices: [RemoteDevice] = []
    private var devicesStamp: [Int] = []
    private var pairingFailures = 0
    private var pairingLockedUntil: Int64 = 0
    private var connections = 0

    private struct Phone {
        var channel: Channel
        var deviceID: String
    }
    private var phones: [ObjectIdentifier: Phone] = [:]

    /// A session found on its socket: the subscription that brings its events.
    private struct SessionLink {
        var path: String
        var subscription: Channel?
    }
    private var sessions: [Int32: SessionLink] = [:]
    /// Each session's cues announced ahead (`cueAhead`) and not withdrawn, as sent, by frame:
    /// told to a phone that connects after them, so it marks them too.
    private var cuesAhead: [Int32: [Int64: String]] = [:]
    /// Sessions whose events have ended and whose process has still to write the history: the
    /// phones are told the history changed once the socket is gone (the process removes it
    /// after its last write) or the process is.
    private var finishing: [Int32: String] = [:]
    /// Sockets being asked what they are (a session or `gong bells`).
    private var probing: Set<Int32> = []
    private var bellsPath: String?
    private var watch: Channel?

    init(configuration: RemoteConfiguration, loop: EventLoop) {
        self.configuration = configuration
        self.loop = loop
        var check = HostCheck(extra: configuration.extraHostNames)
        if configuration.host != "0.0.0.0" && configuration.host != "::" {
            check = HostCheck(extra: configuration.extraHostNames + [configuration.host])
        }
        hostCheck = check
    }

    // MARK: Life

    /// Loads the devices, finds what runs on the control sockets and watches both directories.
    func start() throws {
        try configuration.store.prepareDirectory()
        reloadDevicesIfChanged()
        mkdir(configuration.controlDirectory, 0o700)
        scanControlSockets()
        try DirectoryWatch.start(
            directories: [configuration.controlDirectory, configuration.store.directory], loop: loop
        ) { [self] in
            reloadDevicesIfChanged()
            scanControlSockets()
            noticeFinished()
        }.assumeIsolated().whenSuccess { [self] channel in watch = channel }
    }

    func closeAll() {
        watch?.close(promise: nil)
        for link in sessions.values { link.subscription?.close(promise: nil) }
        for phone in phones.values { phone.channel.close(promise: nil) }
    }

    /// One more connection, within the limit; its end is counted when it closes.
    func admit(_ channel: Channel) -> Bool {
        guard connections < configuration.limits.maxConnections else { return false }
        connections += 1
        channel.closeFuture.assumeIsolated().whenComplete { [self] _ in connections -= 1 }
        return true
    }

    // MARK: Devices

    /// Rereads `devices.json` when it changed (by inode, size and time): a device revoked by
    /// `gong remote devices revoke` is refused from the next request, and its sockets closed.
    func reloadDevicesIfChanged() {
        var info = stat()
        let stamp: [Int] =
            stat(configuration.store.devicesPath, &info) == 0
            ? [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec] : []
        guard stamp != devicesStamp else { return }
        devicesStamp = stamp
        devices = (try? configuration.store.devices()) ?? []
        let known = Set(devices.map(\.id))
        for (key, phone) in phones where !known.contains(phone.deviceID) {
            phones[key] = nil
            var buffer = phone.channel.allocator.buffer(capacity: 2)
            buffer.write(webSocketErrorCode: .policyViolation)
            let channel = phone.channel
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer))
                .whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// The device whose token the request carries, if it is still paired.
    func device(for head: HTTPRequestHead) -> RemoteDevice? {
        guard let token = Self.token(in: head.headers) else { return nil }
        reloadDevicesIfChanged()
        let hash = SHA256.hex(token.utf8)
        return devices.first { constantTimeEqual($0.tokenHash, hash) }
    }

    static let cookieName = "gong_token"

    /// From `Authorization: Bearer`, else the cookie.
    static func token(in headers: HTTPHeaders) -> String? {
        if let authorization = headers.first(name: "Authorization"), authorization.hasPrefix("Bearer ") {
            return String(authorization.dropFirst(7)).trimmed
        }
        for header in headers[canonicalForm: "Cookie"] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, String(parts[0]).trimmed == cookieName {
                    return String(parts[1]).trimmed
                }
            }
        }
        return nil
    }

    // MARK: The gate

    /// Why a request is refused before it is routed, or nil. `needsOrigin`: a POST or upgrade.
    func gate(_ head: HTTPRequestHead, needsOrigin: Bool) -> RemoteResponse? {
        let host = head.headers.first(name: "Host")
        guard hostCheck.allows(host: host), let host else {
            return .error(
                .misdirectedRequest, "wrongHost",
                "this box does not answer to the name \(host ?? "(none)"); use its own name or address, or start gong remote with --name"
            )
        }
        guard needsOrigin else { return nil }
        if let origin = head.headers.first(name: "Origin") {
            guard HostCheck.sameOrigin(origin, host: host) else {
                return .error(.forbidden, "crossOrigin", "requests from \(origin) are not accepted")
            }
        } else if head.headers.first(name: "Authorization") == nil, head.headers.first(name: "Cookie") != nil {
            // A browser sends Origin with every POST; a cookie without one is not a page of ours.
            return .error(.forbidden, "crossOrigin", "a request with the cookie must say its Origin")
        }
        return nil
    }

    /// The upgrade's extra headers, or nil to refuse it (the request then reaches the HTTP
    /// handler, which says why).
    func webSocketHeaders(for head: HTTPRequestHead) -> HTTPHeaders? {
        guard head.uri.hasPrefix("/ws"), gate(head, needsOrigin: true) == nil, device(for: head) != nil else {
            return nil
        }
        return HTTPHeaders()
    }

    // MARK: Routes

    /// Answers one request; `reply` is called once, on the loop.
    func respond(to request: RemoteRequest, reply: @escaping (RemoteResponse) -> Void) {
        let method = request.head.method
        let path = request.path
        if let refused = gate(request.head, needsOrigin: method != .GET && method != .HEAD || path == "/ws") {
            return reply(refused)
        }
        switch (method, path) {
        case (.GET, "/"), (.GET, "/index.html"):
            return reply(RemotePage.response)
        case (.GET, "/manifest.webmanifest"):
            return reply(RemotePage.manifest)
        case (.GET, "/icon.svg"):
            return reply(RemotePage.icon)
        case (.POST, "/api/pair"):
            return reply(pair(request))
        default:
            break
        }
        guard let device = device(for: request.head) else {
            return reply(
                .error(
                    .unauthorized, "unauthorized",
                    "pair this device first: run gong remote pair on the box and enter its code"))
        }
        if method == .POST, device.role != .control {
            return reply(
                .error(.forbidden, "viewOnly", "\(device.name) may look but not control; pair it with --role control"))
        }
        switch (method, path) {
        case (.GET, "/ws"):
            reply(.error(.badRequest, "notUpgrade", "/ws takes a WebSocket upgrade"))
        case (.GET, "/api/device"):
            reply(.json(.ok, #"{"name":\#(JSONText.string(device.name)),"role":"\#(device.role.rawValue)"}"#))
        case (.GET, "/api/session"):
            sessionStatus(reply)
        case (.POST, "/api/session/start"):
            reply(startSession(request.body, by: device))
        case (.POST, let command) where command.hasPrefix("/api/session/"):
            sessionCommand(String(command.dropFirst("/api/session/".count)), request, by: device, reply)
        case (.GET, "/api/bells"):
            bellsCommand(#"{"command":"status"}"#, action: nil, by: device, reply)
        case (.GET, "/api/bells/plan"):
            let day = request.query["day"].map { #","day":\#(JSONText.string($0))"# } ?? ""
            bellsCommand(#"{"command":"plan"\#(day)}"#, action: nil, by: device, reply)
        case (.POST, let command) where command.hasPrefix("/api/bells/"):
            bellsAction(String(command.dropFirst("/api/bells/".count)), request.body, by: device, reply)
        case (.GET, "/api/history"):
            reply(history(request.query))
        case (.POST, "/api/history/add"):
            addSit(request.body, by: device, reply)
        case (.GET, _), (.POST, _):
            reply(.error(.notFound, "notFound", "no such place: \(path)"))
        default:
            reply(.error(.methodNotAllowed, "methodNotAllowed", "use GET or POST"))
        }
    }

    // MARK: Pairing

    private func pair(_ request: RemoteRequest) -> RemoteResponse {
        let now = Self.now()
        guard now >= pairingLockedUntil else {
            return .error(
                .tooManyRequests, "pairingLocked",
                "too many wrong codes: pairing is locked for \((pairingLockedUntil - now + 59) / 60) min")
        }
        struct Body: Decodable {
            var code: String
            var name: String?
            var bearer: Bool?
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)) else {
            return .error(.badRequest, "badRequest", #"send {"code": "12345678", "name": "Anna's phone"}"#)
        }
        let name = String((body.name ?? "a device").prefix(60))
        do {
            let (device, token) = try configuration.store.redeem(code: body.code, deviceName: name, now: now)
            pairingFailures = 0
            reloadDevicesIfChanged()
            let fields =
                #""name":\#(JSONText.string(device.name)),"role":"\#(device.role.rawValue)","id":"\#(device.id)""#
            if body.bearer == true {
                return .json(.ok, "{\(fields),\"token\":\"\(token)\"}")
            }
            return .json(
                .ok, "{\(fields)}",
                headers: [
                    (
                        "Set-Cookie",
                        "\(Self.cookieName)=\(token); HttpOnly; SameSite=Strict; Path=/; Max-Age=315360000"
                    )
                ])
        } catch let refusal as RemoteStore.Refusal {
            pairingFailures += 1
            if pairingFailures >= configuration.limits.pairingFailures {
                pairingLockedUntil = now + configuration.limits.pairingLockSeconds
                pairingFailures = 0
            }
            switch refusal {
            case .noCode:
                return .error(.forbidden, "noCode", "no pairing code is waiting: run gong remote pair on the box")
            case .expired:
                return .error(.forbidden, "codeExpired", "the code has expired: run gong remote pair again")
            case .wrong:
                return .error(.forbidden, "wrongCode", "that is not the code gong remote pair printed")
            }
        } catch {
            return .error(.internalServerError, "store", String(describing: error))
        }
    }

    // MARK: Sessions

    /// Lists the control socket directory and asks each socket not yet known what it is.
    func scanControlSockets() {
        guard let directory = opendir(configuration.controlDirectory) else { return }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".sock"), let pid = Int32(name.dropLast(5)) { pids.append(pid) }
        }
        closedir(directory)
        for pid in pids where sessions[pid] == nil && !probing.contains(pid) && pid != getpid() {
            let path = "\(configuration.controlDirectory)/\(pid).sock"
            if path == bellsPath { continue }
            probe(pid: pid, path: path, attempts: 20)
        }
    }

    /// A socket is made before it listens: a refused connection is tried again a few times.
    private func probe(pid: Int32, path: String, attempts: Int) {
        probing.insert(pid)
        ControlLink.request(
            #"{"command":"status","id":"probe"}"#, to: path, loop: loop, seconds: configuration.limits.controlSeconds
        ) { [self] reply in
            guard let reply else {
                if attempts > 1, kill(pid, 0) == 0 {
                    loop.assumeIsolated().scheduleTask(in: .milliseconds(100)) { [self] in
                        probe(pid: pid, path: path, attempts: attempts - 1)
                    }
                } else {
                    probing.remove(pid)
                }
                return
            }
            probing.remove(pid)
            if reply.contains(#""bells":"#) {
                subscribeToBells(pid: pid, path: path)
            } else if let status = Self.field("status", of: reply), Self.field("state", of: status) != #""completed""# {
                // A session whose events have ended still answers on its socket until its
                // process exits: it is not taken up again, nor told to the phones as running.
                subscribe(pid: pid, path: path)
            }
        }
    }

    private func subscribe(pid: Int32, path: String) {
        sessions[pid] = SessionLink(path: path)
        ControlLink.request(
            #"{"command":"subscribe","id":"remote"}"#, to: path, loop: loop,
            seconds: configuration.limits.controlSeconds,
            reply: { [self] reply in
                if reply != nil { pushStatus(pid: pid) }
            },
            more: { [self] event in
                // `audible` in an event is on CLOCK_MONOTONIC: the offset puts it on the wall clock
                // the phones learn their own offset from.
                let message =
                    #"{"type":"event","pid":\#(pid),"event":\#(event),"wallMinusMonotonicMs":\#(Self.wallMinusMonotonicMs())}"#
                broadcast(message)
                // A cue announced ahead or withdrawn changes nothing a status shows.
                if event.contains(#""type":"cueAhead""#) {
                    if let frame = Self.field("frame", of: event).flatMap({ Int64($0) }) {
                        cuesAhead[pid, default: [:]][frame] = message
                    }
                } else if event.contains(#""type":"cuesWithdrawn""#) {
                    cuesAhead[pid] = nil
                } else {
                    if event.contains(#""type":"cue""#),
                        let frame = Self.field("frame", of: event).flatMap({ Int64($0) })
                    {
                        cuesAhead[pid] = cuesAhead[pid]?.filter { $0.key > frame }
                    }
                    pushStatus(pid: pid)
                }
            },
            ended: { [self] in
                sessions[pid] = nil
                cuesAhead[pid] = nil
                broadcast(#"{"type":"ended","pid":\#(pid)}"#)
                finishing[pid] = path
                noticeFinished()
            })
    }

    /// Tells the phones the history changed for each finishing session whose socket, or
    /// process, is gone: its last write is done (or will never come).
    private func noticeFinished() {
        for (pid, path) in finishing where access(path, F_OK) != 0 || (kill(pid, 0) != 0 && errno == ESRCH) {
            finishing[pid] = nil
            broadcast(#"{"type":"history","pid":\#(pid),"serverMs":\#(Self.nowMs())}"#)
        }
    }

    /// `gong bells`' changes and bells as they happen, passed on to every phone.
    private func subscribeToBells(pid: Int32, path: String) {
        bellsPath = path
        ControlLink.request(
            #"{"command":"subscribe","id":"remote"}"#, to: path, loop: loop,
            seconds: configuration.limits.controlSeconds,
            reply: { _ in },
            more: { [self] event in broadcast(#"{"type":"bells","event":\#(event),"serverMs":\#(Self.nowMs())}"#) },
            ended: { [self] in
                if bellsPath == path, kill(pid, 0) != 0 {
                    bellsPath = nil
                    broadcast(#"{"type":"bells","event":null,"serverMs":\#(Self.nowMs())}"#)
                }
            })
    }

    /// Every phone gets the session's status as it is now. A session answers `status` on its
    /// socket after its events have ended (until its process exits), so a reply that comes
    /// after the subscription closed is dropped: `ended` is the last the phones hear of it.
    private func pushStatus(pid: Int32) {
        guard let link = sessions[pid] else { return }
        ControlLink.request(
            #"{"command":"status"}"#, to: link.path, loop: loop, seconds: configuration.limits.controlSeconds
        ) {
            [self] reply in
            guard sessions[pid] != nil, let reply, let status = Self.field("status", of: reply) else { return }
            broadcast(#"{"type":"session","pid":\#(pid),"status":\#(status),"serverMs":\#(Self.nowMs())}"#)
        }
    }

    private func sessionStatus(_ reply: @escaping (RemoteResponse) -> Void) {
        let pids = sessions.keys.sorted()
        var statuses: [Int32: String] = [:]
        var waiting = pids.count
        guard waiting > 0 else { return reply(.json(.ok, #"{"sessions":[],"serverMs":\#(Self.nowMs())}"#)) }
        for pid in pids {
            ControlLink.request(
                #"{"command":"status"}"#, to: sessions[pid]!.path, loop: loop,
                seconds: configuration.limits.controlSeconds
            ) { [self] answer in
                // Not a session that ended while it answered (see `pushStatus`).
                if sessions[pid] != nil, let answer, let status = Self.field("status", of: answer) {
                    statuses[pid] = status
                }
                waiting -= 1
                if waiting == 0 {
                    let list = statuses.keys.sorted().map { #"{"pid":\#($0),"status":\#(statuses[$0]!)}"# }
                    reply(.json(.ok, #"{"sessions":[\#(list.joined(separator: ","))],"serverMs":\#(Self.nowMs())}"#))
                }
            }
        }
    }

    /// toggle, pause, resume, skip, stop, gain ({"decibels": -6}) on `?pid=` or the only session.
    private func sessionCommand(
        _ name: String, _ request: RemoteRequest, by device: RemoteDevice, _ reply: @escaping (RemoteResponse) -> Void
    ) {
        let allowed = ["toggle", "pause", "resume", "skip", "stop", "gain"]
        guard allowed.contains(name) else {
            return reply(.error(.notFound, "unknownCommand", "a session takes \(allowed.joined(separator: ", "))"))
        }
        let target: Int32
        if let text = request.query["pid"] {
            guard let pid = Int32(text), sessions[pid] != nil else {
                return reply(.error(.notFound, "noSession", "no session runs as process \(text)"))
            }
            target = pid
        } else {
            switch sessions.count {
            case 0: return reply(.error(.conflict, "noSession", "no session is running; start one first"))
            case 1: target = sessions.keys.first!
            default:
                return reply(
                    .error(
                        .conflict, "severalSessions",
                        "\(sessions.count) sessions are running; name one with ?pid= (see GET /api/session)"))
            }
        }
        var line = #"{"command":"\#(name)""#
        if name == "gain" {
            struct Gain: Decodable { var decibels: Double }
            guard let gain = try? JSONDecoder().decode(Gain.self, from: Data(request.body)), gain.decibels.isFinite
            else {
                return reply(.error(.badRequest, "badArgument", #"gain needs {"decibels": -6}: from -60 to 12"#))
            }
            line += #","decibels":\#(gain.decibels)"#
        }
        line += "}"
        ControlLink.request(line, to: sessions[target]!.path, loop: loop, seconds: configuration.limits.controlSeconds)
        {
            [self] answer in
            guard let answer else {
                return reply(.error(.serviceUnavailable, "noAnswer", "session \(target) did not answer"))
            }
            let response = Self.response(toReply: answer)
            if response.status == .ok {
                broadcast(
                    #"{"type":"change","by":\#(JSONText.string(device.name)),"action":"\#(name)","pid":\#(target),"serverMs":\#(Self.nowMs())}"#
                )
                pushStatus(pid: target)
            }
            reply(response)
        }
    }

    /// `gong run PATTERN --control socket` as a process of its own, in its own session, so it
    /// plays on when the remote dies.
    private func startSession(_ body: [UInt8], by device: RemoteDevice) -> RemoteResponse {
        struct Start: Decodable {
            var pattern: String
            var duration: String?
            var open: Bool?
            var delay: String?
            var device: String?
        }
        guard let start = try? JSONDecoder().decode(Start.self, from: Data(body)) else {
            return .error(
                .badRequest, "badRequest", #"send {"pattern": "two-phase", "duration": "20m", "delay": "10s"}"#)
        }
        func plain(_ text: String, _ extra: String = "") -> Bool {
            !text.isEmpty && text.count <= 100 && !text.hasPrefix("-")
                && text.allSatisfy { $0.isLetter || $0.isNumber || "._-:/=,".contains($0) || extra.contains($0) }
        }
        guard plain(start.pattern) else {
            return .error(.badRequest, "badArgument", "pattern \(start.pattern): a name such as two-phase")
        }
        var arguments = ["run", start.pattern, "--control", "socket", "--quiet"]
        for (flag, value) in [("--duration", start.duration), ("--delay", start.delay), ("--device", start.device)] {
            guard let value else { continue }
            guard plain(value) else {
                return .error(.badRequest, "badArgument", "\(flag) \(value): not a value it takes")
            }
            arguments += [flag, value]
        }
        if start.open == true { arguments.append("--open") }
        var environment = configuration.sessionEnvironment
        if configuration.controlDirectory.hasSuffix("/gong") {
            environment["XDG_RUNTIME_DIR"] = String(configuration.controlDirectory.dropLast(5))
        }
        switch Self.spawnDetached(configuration.gongExecutable, arguments, environment: environment) {
        case .success(let pid):
            broadcast(
                #"{"type":"change","by":\#(JSONText.string(device.name)),"action":"start","pid":\#(pid),"serverMs":\#(Self.nowMs())}"#
            )
            return .json(.ok, #"{"ok":true,"pid":\#(pid)}"#)
        case .failure(let why):
            return .error(.internalServerError, "cannotStart", "gong run could not be started: \(why)")
        }
    }

    /// posix_spawn in a new session (setsid) with SIGCHLD's default restored in the child and no
    /// signal blocked (a mask inherited from the spawning thread would leave the session deaf to
    /// SIGTERM), its output to /dev/null: the remote neither waits for it nor takes it down when
    /// it dies.
    static func spawnDetached(_ executable: String, _ arguments: [String], environment: [String: String])
        -> Result<Int32, SpawnError>
    {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGCHLD)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        posix_spawnattr_setflags(
            &attributes, Int16(Self.spawnSetsid | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
            posix_spawn_file_actions_addopen(
                &actions, descriptor, "/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
        }
        return spawn(executable, arguments, environment: environment, actions: &actions, attributes: &attributes)
    }

    /// posix_spawn with this process's environment and `environment` over it, once every
    /// descriptor of the remote is close-on-exec (`markCloseOnExec`).
    static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String],
        actions: inout posix_spawn_file_actions_t, attributes: UnsafePointer<posix_spawnattr_t>?
    ) -> Result<Int32, SpawnError> {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = Self.environment(over: environment).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        markCloseOnExec()
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, attributes, argv, envp)
        return result == 0 ? .success(pid) : .failure(SpawnError(code: result))
    }

    /// glibc's POSIX_SPAWN_SETSID (a _GNU_SOURCE macro Swift does not import).
    static let spawnSetsid: Int32 = 0x80

    struct SpawnError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    // MARK: Bells

    private func bellsAction(
        _ name: String, _ body: [UInt8], by device: RemoteDevice, _ reply: @escaping (RemoteResponse) -> Void
    ) {
        switch name {
        case "resume", "ring", "next":
            bellsCommand(#"{"command":"\#(name)"}"#, action: name, by: device, reply)
        case "pause":
            struct Pause: Decodable {
                var seconds: Double?
                var until: String?
                var today: Bool?
            }
            guard let pause = (body.isEmpty ? Pause() : try? JSONDecoder().decode(Pause.self, from: Data(body))) else {
                return reply(
                    .error(
                        .badRequest, "badArgument",
                        #"pause takes {"seconds": 3600}, {"until": "14:00"} or {"today": true}"#))
            }
            var line = #"{"command":"pause""#
            if let seconds = pause.seconds { line += #","seconds":\#(seconds)"# }
            if let until = pause.until { line += #","until":\#(JSONText.string(until))"# }
            if pause.today == true { line += #","today":true"# }
            bellsCommand(line + "}", action: "pause", by: device, reply)
        case "schedule":
            // Checked by `gong bells` itself, by the rules its flags and config.toml are read by.
            guard let rules = try? JSONDecoder().decode([String: RawJSON].self, from: Data(body)) else {
                return reply(
                    .error(
                        .badRequest, "badArgument",
                        #"schedule takes the [bells] keys that say when, e.g. {"every": "45m", "active": "09:00-18:00"}"#
                    ))
            }
            let object =
                "{" + rules.keys.sorted().map { JSONText.string($0) + ":" + rules[$0]!.text }.joined(separator: ",")
                + "}"
            bellsCommand(#"{"command":"schedule","rules":\#(object)}"#, action: "schedule", by: device, reply)
        default:
            reply(.error(.notFound, "unknownCommand", "the bells take pause, resume, ring, next, schedule"))
        }
    }

    private func bellsCommand(
        _ line: String, action: String?, by device: RemoteDevice, _ reply: @escaping (RemoteResponse) -> Void
    ) {
        guard let path = bellsPath else {
            if action == nil { return reply(.json(.ok, #"{"bells":null,"serverMs":\#(Self.nowMs())}"#)) }
            return reply(.error(.conflict, "noBells", "gong bells is not running on this box"))
        }
        ControlLink.request(line, to: path, loop: loop, seconds: configuration.limits.controlSeconds) { [self] answer in
            guard let answer else {
                if kill(Int32(path.split(separator: "/").last?.dropLast(5) ?? "") ?? 0, 0) != 0 { bellsPath = nil }
                return reply(.error(.serviceUnavailable, "noAnswer", "gong bells did not answer"))
            }
            var response = Self.response(toReply: answer)
            if response.status == .ok, let bells = Self.field("bells", of: answer) {
                response = .json(.ok, #"{"bells":\#(bells),"serverMs":\#(Self.nowMs())}"#)
                if let action {
                    broadcast(
                        #"{"type":"change","by":\#(JSONText.string(device.name)),"action":"bells.\#(action)","bells":\#(bells),"serverMs":\#(Self.nowMs())}"#
                    )
                }
            }
            reply(response)
        }
    }

    // MARK: History

    /// Stats and the calendar as `gong stats` shows them (without streaks when the config says
    /// so), or a day's bells with `?bells=2026-11-26`. Read-only: a missing history is empty.
    private func history(_ query: [String: String]) -> RemoteResponse {
        guard let path = configuration.historyPath, access(path, F_OK) == 0 else {
            return .json(.ok, #"{"sessions":0,"minutes":0,"days":[]}"#)
        }
        do {
            let history = try SessionHistory(path: path)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            if let day = query["bells"] {
                guard day.count == 10, day.allSatisfy({ $0.isNumber || $0 == "-" }) else {
                    return .error(.badRequest, "badArgument", "bells=\(day): a date such as 2026-11-26")
                }
                return .json(.ok, String(decoding: try encoder.encode(try history.bells(onDay: day)), as: UTF8.self))
            }
            var stats = PracticeStats(
                records: try history.records(), minimumSeconds: configuration.streakMinimumSeconds)
            if !configuration.showStreaks {
                stats.currentStreak = 0
                stats.longestStreak = 0
            }
            var text = String(decoding: try encoder.encode(stats), as: UTF8.self)
            if !configuration.showStreaks {
                text = text.replacing(#""currentStreak":0,"#, with: "").replacing(#""longestStreak":0,"#, with: "")
            }
            return .json(.ok, text)
        } catch {
            return .error(.internalServerError, "history", String(describing: error))
        }
    }

    /// A sit added by hand, written by `gong history add` run as a process of its own: the same
    /// checks and the same one-line errors as on the command line, and the remote never holds the
    /// history open for writing. The write waits for a session's (SQLite's busy timeout) in that
    /// process, on a thread of its own here, so the event loop and the phones never wait; the
    /// phones are told once it is written.
    private func addSit(_ body: [UInt8], by device: RemoteDevice, _ reply: @escaping (RemoteResponse) -> Void) {
        struct Sit: Decodable {
            var pattern: String
            var at: String
            var length: String
        }
        guard let sit = try? JSONDecoder().decode(Sit.self, from: Data(body)) else {
            return reply(
                .error(
                    .badRequest, "badArgument",
                    #"add takes {"pattern": "two-phase", "at": "2026-11-23 07:00", "length": "20m"}"#))
        }
        guard let path = configuration.historyPath, path.hasSuffix("/gong/history.sqlite") else {
            return reply(.error(.conflict, "noHistory", "this remote serves no history"))
        }
        var sessionEnvironment = configuration.sessionEnvironment
        sessionEnvironment["XDG_DATA_HOME"] = String(path.dropLast("/gong/history.sqlite".count))
        let environment = sessionEnvironment
        // `--flag=value`: a value that begins with a dash is still the value.
        let arguments = ["history", "add", "--pattern=\(sit.pattern)", "--at=\(sit.at)", "--length=\(sit.length)"]
        let executable = configuration.gongExecutable
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        pool.runIfActive(eventLoop: loop) { Self.runToEnd(executable, arguments, environment: environment) }
            .assumeIsolated().whenComplete { [self] result in
                pool.shutdownGracefully { _ in }
                guard case .success(let (status, output)) = result else {
                    return reply(.error(.internalServerError, "cannotAdd", "gong history add could not be run"))
                }
                let line = String(output.split(separator: "\n").last ?? "")
                let said = line.hasPrefix("gong: ") ? String(line.dropFirst(6)) : line
                guard status == 0 else {
                    // 64 and 65: what was given is wrong (sysexits); anything else is the box's.
                    let code: HTTPResponseStatus = status == 64 || status == 65 ? .badRequest : .internalServerError
                    return reply(.error(code, code == .badRequest ? "badArgument" : "history", said))
                }
                broadcast(
                    #"{"type":"change","by":\#(JSONText.string(device.name)),"action":"history.add","serverMs":\#(Self.nowMs())}"#
                )
                broadcast(#"{"type":"history","by":\#(JSONText.string(device.name)),"serverMs":\#(Self.nowMs())}"#)
                reply(.json(.ok, #"{"ok":true,"said":\#(JSONText.string(said))}"#))
            }
    }

    /// Runs a process to its end, its output and errors read together: for a short command whose
    /// exit status and last line are the answer. Blocking: never on the event loop.
    static func runToEnd(_ executable: String, _ arguments: [String], environment: [String: String]) -> (Int32, String)
    {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return (-1, "no pipe: \(String(cString: strerror(errno)))") }
        // Not inherited by the sessions the loop starts meanwhile (dup2 gives the child its own).
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], STDERR_FILENO)
        let spawned = spawn(executable, arguments, environment: environment, actions: &actions, attributes: nil)
        close(pipeEnds[1])
        defer { close(pipeEnds[0]) }
        let pid: Int32
        switch spawned {
        case .success(let started): pid = started
        case .failure(let why): return (-1, why.description)
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipeEnds[0], &chunk, chunk.count)
            if count > 0 {
                if output.count < 64 * 1024 { output += chunk[0..<count] }
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : -1, String(decoding: output, as: UTF8.self))
    }

    /// Every descriptor of this process past the standard three made close-on-exec, before a
    /// process is started: swift-nio's sockets are not, and a session that kept the listening
    /// socket would hold the port after the remote is gone, so a remote started again could not
    /// listen on it (nor a phone reach it).
    static func markCloseOnExec() {
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let descriptor = Int32(name), descriptor > STDERR_FILENO, descriptor != own {
                _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
            }
        }
    }

    /// This process's environment with `overrides` set over it, as `NAME=value` lines.
    static func environment(over overrides: [String: String]) -> [String] {
        var inherited: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if !overrides.keys.contains(where: { text.hasPrefix($0 + "=") }) { inherited.append(text) }
            entry += 1
        }
        return inherited + overrides.map { "\($0.key)=\($0.value)" }
    }

    // MARK: Phones

    func attach(_ channel: Channel, device: RemoteDevice) {
        phones[ObjectIdentifier(channel)] = Phone(channel: channel, deviceID: device.id)
    }

    func detach(_ channel: Channel) { phones[ObjectIdentifier(channel)] = nil }

    func greet(_ channel: Channel, device: RemoteDevice) {
        send(
            #"{"type":"hello","device":\#(JSONText.string(device.name)),"role":"\#(device.role.rawValue)","serverMs":\#(Self.nowMs())}"#,
            to: channel)
        for pid in sessions.keys { pushStatus(pid: pid) }
        for announced in cuesAhead.values {
            for frame in announced.keys.sorted() { send(announced[frame]!, to: channel) }
        }
    }

    /// A phone's `{"type": "time", "clientMs": …}` answered with the box's clock, for its offset.
    func answer(webSocketText text: String) -> String? {
        struct Probe: Decodable {
            var type: String
            var clientMs: Double?
        }
        guard let probe = try? JSONDecoder().decode(Probe.self, from: Data(text.utf8)), probe.type == "time",
            let client = probe.clientMs, client.isFinite
        else { return nil }
        return #"{"type":"time","clientMs":\#(client),"serverMs":\#(Self.nowMs())}"#
    }

    /// To every phone; one that does not read (its buffer full) is dropped, never waited for.
    func broadcast(_ text: String) {
        for (key, phone) in phones {
            guard phone.channel.isWritable else {
                phones[key] = nil
                phone.channel.close(promise: nil)
                continue
            }
            send(text, to: phone.channel)
        }
    }

    private func send(_ text: String, to channel: Channel) {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: buffer), promise: nil)
    }

    // MARK: Helpers

    /// A control socket's reply as an HTTP answer: ok, or its error with a status that fits.
    static func response(toReply line: String) -> RemoteResponse {
        struct Reply: Decodable {
            var ok: Bool
            var error: Body?
            struct Body: Decodable {
                var code: String
                var message: String
            }
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: Data(line.utf8)) else {
            return .error(.badGateway, "badReply", "the control socket answered with something that is not a reply")
        }
        guard let error = reply.error, !reply.ok else { return .json(.ok, #"{"ok":true}"#) }
        let status: HTTPResponseStatus =
            switch error.code {
            case "notNow": .conflict
            case "busy": .serviceUnavailable
            case "over": .gone
            default: .badRequest
            }
        return .error(status, error.code, error.message)
    }

    /// The raw JSON of a top-level object field of `line` (a control socket's reply).
    static func field(_ name: String, of line: String) -> String? {
        guard let object = try? JSONDecoder().decode([String: RawJSON].self, from: Data(line.utf8)),
            let value = object[name], value.text != "null"
        else { return nil }
        return value.text
    }

    static func now() -> Int64 { Int64(time(nil)) }

    static func wallMinusMonotonicMs() -> Double {
        var wall = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_REALTIME, &wall)
        return Double(wall.tv_sec - monotonic.tv_sec) * 1000 + Double(wall.tv_nsec - monotonic.tv_nsec) / 1e6
    }

    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// Any JSON value, kept as compact text (to pass a status on as it came).
struct RawJSON: Decodable {
    var text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            text = "null"
        } else if let value = try? container.decode(Bool.self) {
            text = value ? "true" : "false"
        } else if let value = try? container.decode(Double.self) {
            text = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        } else if let value = try? container.decode(String.self) {
            text = JSONText.string(value)
        } else if let value = try? container.decode([String: RawJSON].self) {
            text =
                "{" + value.keys.sorted().map { JSONText.string($0) + ":" + value[$0]!.text }.joined(separator: ",")
                + "}"
        } else {
            text = "[" + (try container.decode([RawJSON].self)).map(\.text).joined(separator: ",") + "]"
        }
    }
}

extension String {
    /// Without spaces and tabs at either end.
    var trimmed: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
