import Foundation
import Glibc

/// What a snapserver says of itself through its JSON-RPC control (`Server.GetStatus`): its
/// streams and the rooms (clients) that play them. Asked on the control side only, never by the
/// audio thread: it is a network round trip.
public struct SnapcastStatus: Equatable, Sendable {
    public struct Stream: Equatable, Sendable {
        public var id: String
        /// `pipe`, `tcp`, …
        public var scheme: String
        /// The FIFO's path for a pipe source.
        public var path: String
        /// `host:port` for a tcp source (`host` only when the URI names no port).
        public var host: String
        /// `RATE:BITS:CHANNELS`, as the server's `sampleformat`.
        public var sampleFormat: String
        /// How much the server reads of the source at a time (`chunk_ms`, 20 by default).
        public var chunkMs: Int
        /// How the server sends the stream to its clients (`codec`: `flac` by default, `pcm`,
        /// `ogg`, `opus`), with its options after a colon if it was given any (`flac:5`).
        public var codec: String
        /// `playing` or `idle`.
        public var status: String
        public var uri: String
    }

    public struct Room: Equatable, Sendable {
        /// The client's id (its `--hostID`; by default its MAC address).
        public var id: String
        /// The name given to it on the server, else its machine's host name.
        public var name: String
        public var streamID: String
        public var connected: Bool
        /// The client's configured latency (`Client.SetLatency`, snapclient `--latency`): the
        /// latency of its own output, which it plays ahead of by as much.
        public var latencyMs: Int
    }

    public var streams: [Stream]
    public var rooms: [Room]

    /// Frames by which the rooms hear a stream later than the server's buffer says, for its
    /// codec: a `pcm` stream is heard its buffer after the FIFO's level places it, a `flac` one a
    /// FLAC block later still, since the server encodes whole blocks (libFLAC makes them 1152
    /// frames at compression levels 0 to 2, the default being 2, and 4096 at 3 to 8, at any
    /// rate). `ogg` and `opus` are taken as `pcm`: not measured. The rooms recorded against this:
    /// bench/RESULTS.md, "Snapcast rooms".
    public static func codecDelayFrames(codec: String) -> Int {
        let parts = codec.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first == "flac" else { return 0 }
        let level = parts.count > 1 ? Int(parts[1]) ?? 2 : 2
        return level <= 2 ? 1152 : 4096
    }

    /// The stream `address` feeds: the pipe source of its FIFO, or the tcp source on its port.
    public func stream(fedBy address: SnapcastAddress) -> Stream? {
        streams.first { stream in
            switch address.source {
            case .fifo(let path): stream.scheme == "pipe" && stream.path == path
            case .tcp(_, let port): stream.scheme == "tcp" && stream.host.hasSuffix(":\(port)")
            }
        }
    }

    /// Reads `Server.GetStatus`'s reply; nil when it is not one.
    public init?(reply: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: reply) as? [String: Any],
            let result = object["result"] as? [String: Any], let server = result["server"] as? [String: Any]
        else { return nil }
        streams = (server["streams"] as? [[String: Any]] ?? []).map { stream in
            let uri = stream["uri"] as? [String: Any] ?? [:]
            let query = uri["query"] as? [String: Any] ?? [:]
            return Stream(
                id: stream["id"] as? String ?? "", scheme: uri["scheme"] as? String ?? "",
                path: uri["path"] as? String ?? "", host: uri["host"] as? String ?? "",
                sampleFormat: query["sampleformat"] as? String ?? "",
                chunkMs: Int(query["chunk_ms"] as? String ?? "") ?? 20, codec: query["codec"] as? String ?? "flac",
                status: stream["status"] as? String ?? "",
                uri: uri["raw"] as? String ?? "")
        }
        rooms = (server["groups"] as? [[String: Any]] ?? []).flatMap { group in
            (group["clients"] as? [[String: Any]] ?? []).map { client in
                let config = client["config"] as? [String: Any] ?? [:]
                let host = client["host"] as? [String: Any] ?? [:]
                let configured = config["name"] as? String ?? ""
                return Room(
                    id: client["id"] as? String ?? "",
                    name: configured.isEmpty ? (host["name"] as? String ?? client["id"] as? String ?? "") : configured,
                    streamID: group["stream_id"] as? String ?? "", connected: client["connected"] as? Bool ?? false,
                    latencyMs: config["latency"] as? Int ?? 0)
            }
        }
    }

    init(streams: [Stream], rooms: [Room]) {
        self.streams = streams
        self.rooms = rooms
    }

    /// Asks the server at `host:port`, waiting at most `timeoutMs` in all. The errno of what
    /// failed (`ECONNREFUSED`, `ETIMEDOUT`, `EPROTO` for a reply that is no status).
    public static func ask(host: String, port: Int, timeoutMs: Int32 = 1000) -> Result<
        SnapcastStatus, SnapcastSocketError
    > {
        let deadline = MonotonicTime.now().nanoseconds + Int64(timeoutMs) * 1_000_000
        let socket: Int32
        switch SnapcastSocket.connect(host: host, port: port, timeoutMs: timeoutMs) {
        case .success(let descriptor): socket = descriptor
        case .failure(let error): return .failure(error)
        }
        defer { close(socket) }
        let request = Array("{\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"Server.GetStatus\"}\r\n".utf8)
        guard send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            return .failure(SnapcastSocketError(errno: errno, operation: "send"))
        }
        // The reply is one line; the server may push notifications after it, which are not read.
        var reply = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !reply.contains(UInt8(ascii: "\n")) {
            let left = Int32(max(0, (deadline - MonotonicTime.now().nanoseconds) / 1_000_000))
            var ready = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&ready, 1, left) == 1 else {
                return .failure(SnapcastSocketError(errno: ETIMEDOUT, operation: "Server.GetStatus"))
            }
            let count = recv(socket, &chunk, chunk.count, 0)
            guard count > 0 else {
                return .failure(SnapcastSocketError(errno: count == 0 ? ECONNRESET : errno, operation: "recv"))
            }
            reply.append(contentsOf: chunk[0..<count])
        }
        guard let status = SnapcastStatus(reply: reply.prefix { $0 != UInt8(ascii: "\n") }) else {
            return .failure(SnapcastSocketError(errno: EPROTO, operation: "Server.GetStatus"))
        }
        return .success(status)
    }
}

/// A socket call that failed: its errno and the call.
public struct SnapcastSocketError: Error, Equatable, Sendable {
    public var errno: Int32
    public var operation: String
}

/// The TCP connections the Snapcast route makes, to a control port and to a `tcp://` source.
enum SnapcastSocket {
    /// A connected TCP socket to `host:port`, made within `timeoutMs`, left non-blocking.
    static func connect(host: String, port: Int, timeoutMs: Int32) -> Result<Int32, SnapcastSocketError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let looked = getaddrinfo(host, String(port), &hints, &found)
        guard looked == 0, let first = found else {
            return .failure(
                SnapcastSocketError(errno: looked == EAI_SYSTEM ? errno : EHOSTUNREACH, operation: "getaddrinfo"))
        }
        defer { freeaddrinfo(first) }
        var failure = SnapcastSocketError(errno: ECONNREFUSED, operation: "connect")
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let socket = Glibc.socket(
                info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else { continue }
            if Glibc.connect(socket, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 || errno == EINPROGRESS {
                var ready = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                var result: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if poll(&ready, 1, timeoutMs) == 1, getsockopt(socket, SOL_SOCKET, SO_ERROR, &result, &length) == 0 {
                    if result == 0 { return .success(socket) }
                    failure = SnapcastSocketError(errno: result, operation: "connect")
                } else {
                    failure = SnapcastSocketError(errno: ETIMEDOUT, operation: "connect")
                }
            } else {
                failure = SnapcastSocketError(errno: errno, operation: "connect")
            }
            close(socket)
        }
        return .failure(failure)
    }
}
