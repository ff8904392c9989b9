import FoundationEssentials

/// Where gong keeps configuration, data and state: the XDG base directories.
public struct GongDirectories: Sendable {
    /// `$XDG_CONFIG_HOME/gong` (user patterns live in `patterns/`).
    public var config: String
    /// `$XDG_DATA_HOME/gong` (user sounds in `sounds/`).
    public var data: String
    /// `$XDG_STATE_HOME/gong` (session snapshots and history).
    public var state: String
    /// `$XDG_CACHE_HOME/gong` (sounds decoded and converted for an output, in `sounds/`).
    public var cache: String
    /// `$XDG_DATA_DIRS/gong` entries, searched after `data` for shared sounds.
    public var sharedData: [String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? homeDirectory()
        func base(_ variable: String, _ fallback: String) -> String {
            // The spec: relative paths in these variables are invalid and must be ignored.
            if let value = environment[variable], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        config = base("XDG_CONFIG_HOME", ".config") + "/gong"
        data = base("XDG_DATA_HOME", ".local/share") + "/gong"
        state = base("XDG_STATE_HOME", ".local/state") + "/gong"
        cache = base("XDG_CACHE_HOME", ".cache") + "/gong"
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        sharedData = dataDirs.split(separator: ":").filter { $0.hasPrefix("/") }.map { $0 + "/gong" }
    }

    public var userPatterns: String { config + "/patterns" }
    public var userSounds: String { data + "/sounds" }
    public var preparedSounds: String { cache + "/sounds" }
}
