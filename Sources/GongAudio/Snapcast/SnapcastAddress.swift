/// Where a `snapcast:` device name leads: the snapserver source gong feeds, and the server's
/// JSON-RPC control port that says what the server does with it.
///
/// `snapcast:/tmp/snapfifo` feeds a `pipe://` source's FIFO; `snapcast:tcp://HOST:PORT` connects
/// to a `tcp://` source (snapserver's default `mode=server`, where the server listens). The control
/// is `HOST:1705` (`127.0.0.1` for a FIFO, which is on this machine) unless `?control=HOST:PORT`
/// says otherwise; `?buffer=MS` is the server's `buffer` setting (1000 ms unless its config says
/// otherwise), which its control API does not tell.
public struct SnapcastAddress: Equatable, Sendable {
    public enum Source: Equatable, Sendable {
        case fifo(path: String)
        case tcp(host: String, port: Int)
    }

    public var source: Source
    public var controlHost: String
    public var controlPort: Int
    /// The server's buffer: how long after it reads a frame every room plays it.
    public var bufferMs: Int

    /// Snapcast's own defaults: its control port, and the buffer its server keeps.
    public static let defaultControlPort = 1705
    public static let defaultBufferMs = 1000

    /// Nil when `name` (what follows `snapcast:`) is no FIFO path or `tcp://HOST:PORT`, or its
    /// options are not `control=HOST:PORT` and `buffer=MS`.
    public init?(_ name: String) {
        let parts = name.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let target = String(parts[0])
        guard !target.isEmpty else { return nil }
        if target.hasPrefix("tcp://") {
            guard let (host, port) = Self.hostAndPort(String(target.dropFirst("tcp://".count))) else { return nil }
            source = .tcp(host: host, port: port)
            controlHost = host
        } else {
            guard !target.contains("://") else { return nil }
            source = .fifo(path: target)
            controlHost = "127.0.0.1"
        }
        controlPort = Self.defaultControlPort
        bufferMs = Self.defaultBufferMs
        for option in parts.count > 1 ? parts[1].split(separator: "&") : [] {
            let pair = option.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            switch pair[0] {
            case "control":
                guard let (host, port) = Self.hostAndPort(String(pair[1])) else { return nil }
                (controlHost, controlPort) = (host, port)
            case "buffer":
                guard let ms = Int(pair[1]), (1...60_000).contains(ms) else { return nil }
                bufferMs = ms
            default:
                return nil
            }
        }
    }

    /// A snapserver's control as a person names it: `HOST:PORT`, or `HOST` for Snapcast's port.
    public static func control(_ text: String) -> (host: String, port: Int)? {
        guard text.contains(":") else { return text.isEmpty ? nil : (text, defaultControlPort) }
        return hostAndPort(text)
    }

    /// `HOST:PORT` with a port in 1…65535.
    private static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon != text.startIndex
        else { return nil }
        return (String(text[..<colon]), port)
    }

    /// What the name says in the source's own terms, for messages: the FIFO's path or `tcp://HOST:PORT`.
    public var sourceDescription: String {
        switch source {
        case .fifo(let path): path
        case .tcp(let host, let port): "tcp://\(host):\(port)"
        }
    }
}
