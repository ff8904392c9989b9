import FoundationEssentials
import Glibc

/// Everything `gong remote` serves by: where it listens, where its state and the control
/// sockets are, and the limits that keep one client from hurting the others.
public struct RemoteConfiguration: Sendable {
    /// An address to listen on (127.0.0.1 unless told otherwise) and its port (0: any free one).
    public var host = "127.0.0.1"
    public var port = 8787
    public var store: RemoteStore
    /// Where sessions and `gong bells` keep their control sockets (`ControlSockets.directory()`).
    public var controlDirectory: String
    /// The `gong` a session started from the remote runs as (`gong run … --control socket`).
    public var gongExecutable: String
    /// The history, read-only; nil: none served.
    public var historyPath: String?
    /// The config's `streaks = false` (or `--no-streaks`): the history is served without them.
    public var showStreaks = true
    /// The config's `streak-minimum`: a sit counts in the history served from this many seconds
    /// played, as it does in `gong stats`.
    public var streakMinimumSeconds: Double = 60
    /// More names this box answers to (besides its host name, `localhost` and its addresses).
    public var extraHostNames: [String] = []
    public var limits = Limits()
    /// Variables set for the sessions it starts, over its own environment. `XDG_RUNTIME_DIR` is
    /// set besides so a session's socket lands in `controlDirectory`, where the remote looks.
    public var sessionEnvironment: [String: String] = [:]

    public struct Limits: Sendable {
        /// A request's head and body together; a longer one is answered 413 and the connection closed.
        public var maxRequestBytes = 16 * 1024
        /// A WebSocket frame from a client.
        public var maxFrameBytes = 16 * 1024
        /// A request must arrive whole within this long of the connection opening or the last
        /// answer (a slow or silent client is dropped: it is also how long a kept-alive
        /// connection may wait for its next request).
        public var requestSeconds: Double = 10
        /// A WebSocket is pinged this often while open, and dropped when it has said nothing
        /// (not even a pong) for two of them.
        public var pingSeconds: Double = 25
        /// Wrong pairing codes in a row that lock pairing, and for how long.
        public var pairingFailures = 10
        public var pairingLockSeconds: Int64 = 15 * 60
        /// How long a control socket may take to answer.
        public var controlSeconds: Double = 3
        public var maxConnections = 64

        public init() {}
    }

    public init(store: RemoteStore, controlDirectory: String, gongExecutable: String) {
        self.store = store
        self.controlDirectory = controlDirectory
        self.gongExecutable = gongExecutable
    }

    /// `ADDR:PORT`, `ADDR` or `:PORT` (IPv6 in brackets: `[::]:8787`), or why not.
    public mutating func listen(_ text: String) -> String? {
        var address = Substring(text)
        var portText: Substring?
        if address.hasPrefix("[") {
            guard let close = address.firstIndex(of: "]") else { return "an IPv6 address goes in brackets, [::1]:8787" }
            let rest = address[address.index(after: close)...]
            address = address[address.index(after: address.startIndex)..<close]
            if rest.hasPrefix(":") {
                portText = rest.dropFirst()
            } else if !rest.isEmpty {
                return "expected :PORT after ]"
            }
        } else if let colon = address.lastIndex(of: ":") {
            portText = address[address.index(after: colon)...]
            address = address[..<colon]
        }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else {
                return "port \(portText): use a number from 1 to 65535"
            }
            port = number
        }
        if !address.isEmpty {
            var ipv4 = in_addr()
            var ipv6 = in6_addr()
            guard inet_pton(AF_INET, String(address), &ipv4) == 1 || inet_pton(AF_INET6, String(address), &ipv6) == 1
            else { return "\(address): not an IP address; use one such as 0.0.0.0 or 192.168.1.20" }
            host = String(address)
        }
        return nil
    }
}
