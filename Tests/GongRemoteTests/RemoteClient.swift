import Glibc

/// A client on real sockets, written out byte by byte so the tests can send what no HTTP
/// library would: malformed requests, a byte at a time, frames of any shape.
struct RawClient {
    let descriptor: Int32

    /// Connected to 127.0.0.1:`port`, with reads that give up after `timeout` seconds.
    init(port: Int, timeout: Double = 5) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            throw ClientError.cannotConnect
        }
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    enum ClientError: Error { case cannotConnect }

    func close() { Glibc.close(descriptor) }

    /// False once the server has closed its end (a write then fails).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// What arrives until the server closes, or nothing more comes within the timeout.
    func readAll(limit: Int = 1 << 20) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count < limit {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// Exactly `count` bytes, or fewer when the server closed or the timeout passed.
    func read(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: count)
        while bytes.count < count {
            let got = recv(descriptor, &chunk, count - bytes.count, 0)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            bytes += chunk[0..<got]
        }
        return bytes
    }

    /// True when the server has closed the connection (a read sees the end), within the timeout.
    func closedByServer() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// Asks to upgrade to a WebSocket on `/ws` of 127.0.0.1:`port`, with `headers` besides the
    /// handshake's own; the server's answer.
    func upgradeToWebSocket(port: Int, headers: [String]) -> HTTPReply? {
        _ = send(
            request(
                "GET", "/ws", port: port,
                headers: [
                    "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
                ] + headers))
        return response()
    }

    /// One response's head and its body (by Content-Length).
    func response() -> HTTPReply? {
        var bytes: [UInt8] = []
        while true {
            let got = read(1)
            guard let byte = got.first else { return nil }
            bytes.append(byte)
            if bytes.suffix(4) == [13, 10, 13, 10] { break }
        }
        let head = String(decoding: bytes, as: UTF8.self)
        var lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        lines.removeFirst()
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (line[..<colon].lowercased(), String(line[line.index(after: colon)...].drop { $0 == " " })))
        }
        let length = Int(headers.first { $0.0 == "content-length" }?.1 ?? "0") ?? 0
        return HTTPReply(status: status, headers: headers, body: String(decoding: read(length), as: UTF8.self))
    }
}

struct HTTPReply {
    var status: Int
    var headers: [(String, String)]
    var body: String

    func header(_ name: String) -> String? { headers.first { $0.0 == name.lowercased() }?.1 }
}

/// A whole request as text: `Host` is 127.0.0.1:`port` unless given.
func request(
    _ method: String, _ path: String, port: Int, host: String? = nil, headers: [String] = [], body: String = ""
) -> String {
    var lines = ["\(method) \(path) HTTP/1.1", "Host: \(host ?? "127.0.0.1:\(port)")"] + headers
    if !body.isEmpty || method == "POST" { lines.append("Content-Length: \(body.utf8.count)") }
    return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
}

/// Sends one request on a connection of its own and reads the answer.
func exchange(
    _ method: String, _ path: String, port: Int, host: String? = nil, headers: [String] = [], body: String = ""
) throws -> HTTPReply? {
    let client = try RawClient(port: port)
    defer { client.close() }
    client.send(request(method, path, port: port, host: host, headers: headers, body: body))
    return client.response()
}

/// A WebSocket frame as a client sends it (masked) or a server does (not).
func frame(opcode: UInt8, payload: [UInt8], fin: Bool = true, mask: [UInt8]? = [1, 2, 3, 4]) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    if payload.count < 126 {
        bytes.append(maskBit | UInt8(payload.count))
    } else if payload.count < 65536 {
        bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 255)]
    } else {
        bytes.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift))
        }
    }
    if let mask {
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    } else {
        bytes += payload
    }
    return bytes
}

/// Reads one unfragmented frame from the server: its opcode and payload.
func readFrame(_ client: RawClient) -> (opcode: UInt8, payload: [UInt8])? {
    let head = client.read(2)
    guard head.count == 2 else { return nil }
    var length = Int(head[1] & 0x7f)
    if length == 126 {
        let more = client.read(2)
        guard more.count == 2 else { return nil }
        length = Int(more[0]) << 8 | Int(more[1])
    } else if length == 127 {
        let more = client.read(8)
        guard more.count == 8 else { return nil }
        length = more.reduce(0) { $0 << 8 | Int($1) }
    }
    let payload = client.read(length)
    guard payload.count == length else { return nil }
    return (head[0] & 0x0f, payload)
}

/// A small deterministic generator (SplitMix64), so a failing fuzz run is repeated by its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
