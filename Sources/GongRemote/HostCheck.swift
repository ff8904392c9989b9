import Glibc
import GongCore

/// The names and addresses this box answers to. A request whose `Host` is anything else is
/// refused: a page on another site that has its own name resolve to this box (DNS rebinding)
/// reaches the port but not the API. `Origin`, sent by browsers on every POST and WebSocket
/// upgrade, must name the same host the request was sent to, so no other site's page can drive
/// the remote with the phone's cookie; there is no CORS.
public struct HostCheck: Sendable {
    public private(set) var names: Set<String>

    /// This machine's host name (and `.local`), `localhost`, every interface address, and `extra`.
    public init(extra: [String] = []) {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count) == 0 {
            let name = String(nulTerminated: buffer).lowercased()
            if !name.isEmpty { names.formUnion([name, name + ".local"]) }
        }
        var list: UnsafeMutablePointer<ifaddrs>?
        if getifaddrs(&list) == 0 {
            var entry = list
            while let current = entry {
                if let address = current.pointee.ifa_addr, let text = Self.text(of: address) { names.insert(text) }
                entry = current.pointee.ifa_next
            }
            freeifaddrs(list)
        }
        names.formUnion(extra.map { $0.lowercased() })
        self.names = names
    }

    /// The host part of a `Host` header (`name`, `name:port`, `[v6]:port`), lowercased.
    public static func hostPart(_ header: String) -> String {
        let value = header.lowercased()
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return value }
            return String(value[value.index(after: value.startIndex)..<close])
        }
        if let colon = value.lastIndex(of: ":"), value.firstIndex(of: ":") == colon { return String(value[..<colon]) }
        return value
    }

    public func allows(host header: String?) -> Bool {
        guard let header, !header.isEmpty else { return false }
        return names.contains(Self.hostPart(header))
    }

    /// True when `origin` is this same host as `host` (http or https, as a proxy may add TLS).
    public static func sameOrigin(_ origin: String, host: String) -> Bool {
        let origin = origin.lowercased()
        let host = host.lowercased()
        return origin == "http://" + host || origin == "https://" + host
    }

    private static func text(of address: UnsafeMutablePointer<sockaddr>) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                var value = ipv4.pointee.sin_addr
                return inet_ntop(AF_INET, &value, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                var value = ipv6.pointee.sin6_addr
                return inet_ntop(AF_INET6, &value, &buffer, socklen_t(buffer.count)).map { String(cString: $0) }
            }
        default: return nil
        }
    }
}
