import Dispatch
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit
import Synchronization

/// Where control sockets live: `$XDG_RUNTIME_DIR/gong/<pid>.sock` (without XDG_RUNTIME_DIR,
/// `/tmp/gong-<uid>`), in a directory of mode 0700 that only its owner can enter. Unix sockets
/// only, never TCP: whoever can reach the socket is the session's own user.
public enum ControlSockets {
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/gong" }
        return "/tmp/gong-\(getuid())"
    }

    public static func path(pid: Int32, directory: String = directory()) -> String { "\(directory)/\(pid).sock" }

    /// A session found in the directory.
    public struct Found: Sendable, Equatable {
        public var pid: Int32
        public var path: String
    }

    /// The sessions whose sockets answer. A socket nobody answers whose process is gone is a
    /// killed session's: it is removed. One that answers is never touched.
    public static func live(directory: String = directory()) -> [Found] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var found: [Found] = []
        for name in names.sorted() where name.hasSuffix(".sock") {
            guard let pid = Int32(name.dropLast(5)) else { continue }
            let path = directory + "/" + name
            if let descriptor = try? connect(path) {
                close(descriptor)
                found.append(Found(pid: pid, path: path))
            } else if kill(pid, 0) != 0 && errno == ESRCH {
                unlink(path)
            }
        }
        return found
    }

    /// A connected socket to `path`.
    public static func connect(_ path: String) throws(ControlSocketError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ControlSocketError(path: path, operation: "socket", code: errno) }
        var address = try unixAddress(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(descriptor)
            throw ControlSocketError(path: path, operation: "connect", code: code)
        }
        return descriptor
    }

    /// Lines from a connected socket, read as they come (blocking): a client's replies and events.
    public struct LineReader {
        public let descriptor: Int32
        private var buffered: [UInt8] = []

        public init(descriptor: Int32) { self.descriptor = descriptor }

        /// The next line without its newline; nil once the other end has closed.
        public mutating func next() -> String? {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffered[..<newline], as: UTF8.self)
                    buffered.removeSubrange(...newline)
                    return line
                }
                let count = recv(descriptor, &chunk, chunk.count, 0)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return nil }
                buffered += chunk[0..<count]
            }
        }
    }

    /// A non-blocking listening socket at `path(pid: getpid())`, 0600 in its 0700 directory
    /// (made if need be): what a session's server and `gong bells` both listen on.
    static func listen(directory: String) throws(ControlSocketError) -> (path: String, descriptor: Int32) {
        let path = path(pid: getpid(), directory: directory)
        try ControlServer.prepare(directory: directory)
        // A socket left at this path (a killed process that had this pid) answers no one.
        if let live = try? connect(path) { Glibc.close(live) } else { unlink(path) }
        let listener = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard listener >= 0 else { throw ControlSocketError(path: path, operation: "socket", code: errno) }
        var address = try unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        // The directory is 0700 already; the socket is made 0600 before anyone is listened to.
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(listener, 16) == 0 else {
            let code = errno
            Glibc.close(listener)
            throw ControlSocketError(path: path, operation: "bind", code: code)
        }
        return (path, listener)
    }

    static func unixAddress(_ path: String) throws(ControlSocketError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw ControlSocketError(path: path, operation: "bind", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }
}

/// A control socket could not be made or reached.
public struct ControlSocketError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var code: Int32

    public var description: String { "control socket \(path): \(String(cString: strerror(code))) (\(operation))" }
}

/// The session's control socket: each connection sends commands as lines of `ControlProtocol`
/// and reads the replies, and after `subscribe` the session's events too.
///
/// One thread serves every connection with `poll`, and never blocks on one: reads and writes
/// are non-blocking, a line longer than `ControlProtocol.maxLineBytes` is answered `tooLong` and
/// skipped, and a connection that lets `maxUnsentBytes` pile up unread is closed.
public final class ControlServer: Sendable {
    public let path: String
    /// Replies and events a connection may leave unread before it is dropped.
    public static let maxUnsentBytes = 1 << 20

    private let listener: Int32
    /// Rung when a subscription has lines to hand over, or to close.
    private let wake = Doorbell()
    /// Event lines for subscribed connections, by connection, handed from their tasks to the
    /// serving thread; `nil` marks a stream that has ended.
    private let pending = Locked<[Int: [String?]]>([:])
    private let closing = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    /// Listens at `ControlSockets.path(pid: getpid())`, making the directory (0700) if need be.
    public init(session: GongSession, directory: String = ControlSockets.directory()) throws(ControlSocketError) {
        (path, listener) = try ControlSockets.listen(directory: directory)
        DetachedThread.start(name: "gong control") { [self] in
            serve(session)
            done.signal()
        }
    }

    /// Closes every connection and removes the socket.
    public func close() {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.ring()
        done.wait()
        unlink(path)
        Glibc.close(listener)
    }

    deinit { close() }

    /// The directory exists, is this user's and is 0700: a directory someone else owns, or a
    /// link, is refused rather than used.
    static func prepare(directory: String) throws(ControlSocketError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ControlSocketError(path: directory, operation: "mkdir", code: errno)
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            throw ControlSocketError(path: directory, operation: "lstat", code: errno)
        }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
            throw ControlSocketError(path: directory, operation: "lstat", code: EPERM)
        }
        if info.st_mode & 0o777 != 0o700, chmod(directory, 0o700) != 0 {
            throw ControlSocketError(path: directory, operation: "chmod", code: errno)
        }
    }

    private static func makeNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    // MARK: Serving

    private final class Connection {
        let descriptor: Int32
        var inbound = ControlLineSplitter()
        var outbound: [UInt8] = []
        var subscription: Task<Void, Never>?
        /// The session's events have ended on this connection: close once everything is sent.
        var closeWhenSent = false

        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    private func serve(_ session: GongSession) {
        var connections: [Int: Connection] = [:]
        var nextID = 0
        defer {
            for connection in connections.values {
                connection.subscription?.cancel()
                Glibc.close(connection.descriptor)
            }
        }
        while !closing.load(ordering: .acquiring) {
            let ids = Array(connections.keys)
            var descriptors = [
                pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            ]
            for id in ids {
                let connection = connections[id]!
                descriptors.append(
                    pollfd(
                        fd: connection.descriptor,
                        events: Int16(POLLIN) | (connection.outbound.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 || errno == EINTR else { return }
            if descriptors[1].revents != 0 {
                wake.drain()
                let handed: [Int: [String?]] = pending.withLock { pending in
                    let taken = pending
                    pending.removeAll()
                    return taken
                }
                for (id, lines) in handed {
                    guard let connection = connections[id] else { continue }
                    for line in lines {
                        if let line {
                            connection.outbound += Array((line + "\n").utf8)
                        } else {
                            connection.closeWhenSent = true
                        }
                    }
                }
            }
            if descriptors[0].revents & Int16(POLLIN) != 0 {
                while true {
                    let descriptor = accept(listener, nil, nil)
                    guard descriptor >= 0 else { break }
                    Self.makeNonBlocking(descriptor)
                    connections[nextID] = Connection(descriptor: descriptor)
                    nextID += 1
                }
            }
            for (index, id) in ids.enumerated() {
                guard let connection = connections[id] else { continue }
                let events = descriptors[index + 2].revents
                var open = events & Int16(POLLERR | POLLNVAL) == 0
                if open, events & Int16(POLLIN | POLLHUP) != 0 { open = receive(connection, id: id, session: session) }
                if open, !connection.outbound.isEmpty { open = send(connection) }
                if open, connection.closeWhenSent, connection.outbound.isEmpty { open = false }
                // A client that does not read is dropped.
                if open, connection.outbound.count > Self.maxUnsentBytes { open = false }
                if !open {
                    connection.subscription?.cancel()
                    Glibc.close(connection.descriptor)
                    connections[id] = nil
                    pending.withLock { $0[id] = nil }
                }
            }
        }
    }

    /// Reads what arrived and answers each whole line; false when the peer has closed.
    private func receive(_ connection: Connection, id: Int, session: GongSession) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(connection.descriptor, &buffer, buffer.count)
            if count == 0 { return false }
            if count < 0 { return errno == EAGAIN || errno == EINTR }
            connection.inbound.feed(buffer[0..<count]) { piece in
                switch piece {
                case .line(let line):
                    answer(line, on: connection, id: id, session: session)
                case .tooLong:
                    // Answered now; the rest of the line is skipped as it comes.
                    connection.outbound += Array((ControlProtocol.tooLongReply + "\n").utf8)
                }
            }
        }
    }

    private func answer(_ line: String, on connection: Connection, id: Int, session: GongSession) {
        guard !line.allSatisfy(\.isWhitespace) else { return }
        let (requestID, parsed) = ControlProtocol.parse(Substring(line))
        let reply: String
        switch parsed {
        case .failure(let failure):
            reply = ControlProtocol.replyLine(id: requestID, failure: failure)
        case .success(let request) where request.command == .subscribe:
            if connection.subscription == nil {
                let events = session.events()
                // Off the cooperative pool, which the process's other work may be holding.
                let executor = QueueExecutor(label: "gong control subscription")
                connection.subscription = Task(executorPreference: executor) { [self] in
                    withExtendedLifetime(executor) {}
                    for await event in events { deliver(event.jsonLine(), to: id) }
                    deliver(nil, to: id)
                }
            }
            reply = ControlProtocol.replyLine(id: requestID, outcome: .done)
        case .success(let request):
            reply = ControlProtocol.replyLine(id: requestID, outcome: ControlProtocol.carryOut(request, on: session))
        }
        // The reply to `subscribe` goes before the events: they reach `outbound` only through
        // `pending`, after this line.
        connection.outbound += Array((reply + "\n").utf8)
    }

    private func deliver(_ line: String?, to id: Int) {
        pending.withLock { $0[id, default: []].append(line) }
        wake.ring()
    }

    /// Writes what the socket takes now; false when the peer is gone.
    private func send(_ connection: Connection) -> Bool {
        let written = connection.outbound.withUnsafeBytes {
            Glibc.send(connection.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if written < 0 { return errno == EAGAIN || errno == EINTR }
        connection.outbound.removeFirst(written)
        return true
    }
}
