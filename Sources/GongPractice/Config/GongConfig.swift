import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

/// gong's settings and where each came from: built in, `$XDG_CONFIG_HOME/gong/config.toml`, the
/// environment, or a flag, each over the one before.
///
/// ```toml
/// device = "pulse"              # as --device
/// latency = 500                 # ms, as --latency
/// volume = -6                   # dB, as --volume
/// pattern = "two-phase"         # what gong run plays when no pattern is named
/// patterns = ["~/zen/patterns"] # directories searched for NAME.toml after your own
/// sounds = ["~/zen/sounds"]     # directories searched for sounds before the built-in bank
/// day-starts = "4:00"           # when a day begins, for streaks
/// streak-minimum = "1m"         # the least a session plays to count
/// streaks = true                # whether gong stats shows streaks
/// ```
///
/// A bad file is a `PatternError` naming the file, line, key, value and what is allowed, like a
/// bad pattern file; unknown keys are errors too.
public struct GongConfig: Sendable {
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        case standard
        case file(String)
        case environment(String)
        case flag(String)

        public var description: String {
            switch self {
            case .standard: "default"
            case .file(let path): "file \(path)"
            case .environment(let name): "environment \(name)"
            case .flag(let flag): "flag \(flag)"
            }
        }
    }

    /// A setting's value and where it came from.
    public struct Setting<Value: Sendable>: Sendable {
        public var value: Value
        public var source: Source

        /// `value` from `source`, when there is one.
        public mutating func override(_ value: Value?, from source: Source) {
            guard let value else { return }
            self.value = value
            self.source = source
        }
    }

    public var device = Setting(value: OutputRoute.automatic, source: .standard)
    /// Nil: the route's own default.
    public var latencyMs = Setting<Double?>(value: nil, source: .standard)
    public var volumeDB = Setting(value: 0.0, source: .standard)
    public var pattern = Setting(value: "two-phase", source: .standard)
    public var patternDirectories = Setting<[String]>(value: [], source: .standard)
    public var soundDirectories = Setting<[String]>(value: [], source: .standard)
    public var dayStartsAt = Setting(value: DayBoundary.standard, source: .standard)
    public var streakMinimumSeconds = Setting(value: 60.0, source: .standard)
    public var showStreaks = Setting(value: true, source: .standard)
    /// `[bells]`, for `gong bells`, and which of its keys the file set (flags override only those).
    public var bells = Setting(value: BellRules(), source: .standard)
    public var bellKeys: Set<BellRules.Key> = []

    /// The keys a config file may hold.
    public static let keys = [
        "device", "latency", "volume", "pattern", "patterns", "sounds", "day-starts", "streak-minimum", "streaks"
    ]

    public static func path(_ directories: GongDirectories = GongDirectories()) -> String {
        directories.config + "/config.toml"
    }

    public init() {}

    /// The built-in settings, then the file's (when there is one), then the environment's
    /// (`GONG_DEVICE`, `GONG_LATENCY`, `GONG_VOLUME`, `GONG_PATTERN`).
    public static func load(
        directories: GongDirectories = GongDirectories(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(PatternError) -> GongConfig {
        var config = GongConfig()
        let path = Self.path(directories)
        if FileManager.default.fileExists(atPath: path) {
            let text: String
            do {
                text = try readTextFile(path)
            } catch {
                var unreadable = PatternError(location: path, problem: error.message, allowed: "a readable config file")
                unreadable.kind = .unreadableFile
                throw unreadable
            }
            try config.read(text, path: path)
        }
        try config.readEnvironment(environment)
        return config
    }

    /// Reads a config file's text over these settings.
    public mutating func read(_ text: String, path: String) throws(PatternError) {
        let table = try PatternFile.table(text, path: path)
        let lines = TOMLLines(text)
        let source = Source.file(path)
        func fail(_ key: String, _ value: TOMLValue, _ problem: String, _ allowed: String) -> PatternError {
            PatternError(
                location: lines.line(of: key).map { "\(path):\($0)" } ?? path, key: key,
                value: value.string ?? value.debugDescription, problem: problem, allowed: allowed)
        }
        for (key, value) in table {
            switch key {
            case "device":
                guard let text = value.string, !text.isEmpty else {
                    throw fail(key, value, "not a device name", "a name such as \"pulse\", \"default\" or \"hw:0\"")
                }
                device.override(text, from: source)
            case "latency":
                guard let ms = Self.number(value), ms.isFinite, SessionLimits.latencyMs.contains(ms) else {
                    throw fail(key, value, "out of range", SessionLimits.latencyAllowed)
                }
                latencyMs.override(ms, from: source)
            case "volume":
                guard let db = Self.number(value), db.isFinite, SessionLimits.gainDB.contains(db) else {
                    throw fail(key, value, "out of range", SessionLimits.gainAllowed)
                }
                volumeDB.override(db, from: source)
            case "pattern":
                guard let name = value.string, !name.isEmpty else {
                    throw fail(key, value, "not a pattern name", "a name such as \"two-phase\"")
                }
                pattern.override(name, from: source)
            case "patterns", "sounds":
                guard let array = value.array, array.allSatisfy({ $0.string?.isEmpty == false }) else {
                    throw fail(key, value, "not a list of directories", "a list such as [\"~/zen/\(key)\"]")
                }
                let paths = array.compactMap(\.string).map(expandingTilde)
                if key == "patterns" {
                    patternDirectories.override(paths, from: source)
                } else {
                    soundDirectories.override(paths, from: source)
                }
            case "day-starts":
                guard let boundary = value.string.flatMap(DayBoundary.init(text:)) else {
                    throw fail(key, value, "not a time of day", "H:MM from 0:00 to 23:59, such as \"4:00\"")
                }
                dayStartsAt.override(boundary, from: source)
            case "streak-minimum":
                guard let seconds = value.string.flatMap(DurationText.seconds),
                    seconds <= PatternLimits.maxSessionSeconds
                else {
                    throw fail(
                        key, value, "not a duration up to \(PatternLimits.maxSessionText)",
                        DurationText.allowed + ", or \"0s\"")
                }
                streakMinimumSeconds.override(seconds.doubleValue, from: source)
            case "streaks":
                guard let show = value.bool else { throw fail(key, value, "not true or false", "true or false") }
                showStreaks.override(show, from: source)
            case "bells":
                let read = try BellRules.read(value, path: path, lines: lines)
                bells.override(read.rules, from: source)
                bellKeys = read.keys
            default:
                throw fail(key, value, "unknown key", "one of " + Self.keys.joined(separator: ", ") + " or [bells]")
            }
        }
    }

    private mutating func readEnvironment(_ environment: [String: String]) throws(PatternError) {
        func given(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        func bad(_ name: String, _ value: String, _ allowed: String) -> PatternError {
            PatternError(location: "environment", key: name, value: value, problem: "out of range", allowed: allowed)
        }
        device.override(given("GONG_DEVICE"), from: .environment("GONG_DEVICE"))
        pattern.override(given("GONG_PATTERN"), from: .environment("GONG_PATTERN"))
        if let text = given("GONG_LATENCY") {
            guard let ms = Double(text), ms.isFinite, SessionLimits.latencyMs.contains(ms) else {
                throw bad("GONG_LATENCY", text, SessionLimits.latencyAllowed)
            }
            latencyMs.override(ms, from: .environment("GONG_LATENCY"))
        }
        if let text = given("GONG_VOLUME") {
            guard let db = Double(text), db.isFinite, SessionLimits.gainDB.contains(db) else {
                throw bad("GONG_VOLUME", text, SessionLimits.gainAllowed)
            }
            volumeDB.override(db, from: .environment("GONG_VOLUME"))
        }
    }

    private static func number(_ value: TOMLValue) -> Double? {
        value.double ?? value.int.map(Double.init)
    }

    /// A number as C's `%g` prints it: `20`, `-6.5`, `0.25`.
    private static func printed(_ value: Double) -> String {
        withVaList([value]) { arguments in
            var buffer = [CChar](repeating: 0, count: 32)
            _ = vsnprintf(&buffer, buffer.count, "%g", arguments)
            return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }

    /// Every setting as `(key, value as written in the file, source)`, in the file's order.
    public var listing: [(key: String, value: String, source: Source)] {
        func quoted(_ text: String) -> String { "\"" + text + "\"" }
        func list(_ paths: [String]) -> String { "[" + paths.map(quoted).joined(separator: ", ") + "]" }
        return [
            ("device", quoted(device.value), device.source),
            ("latency", latencyMs.value.map(Self.printed) ?? "(the route's default)", latencyMs.source),
            ("volume", Self.printed(volumeDB.value), volumeDB.source),
            ("pattern", quoted(pattern.value), pattern.source),
            ("patterns", list(patternDirectories.value), patternDirectories.source),
            ("sounds", list(soundDirectories.value), soundDirectories.source),
            ("day-starts", quoted(dayStartsAt.value.description), dayStartsAt.source),
            (
                "streak-minimum", quoted(DurationText.format(seconds: streakMinimumSeconds.value)),
                streakMinimumSeconds.source
            ),
            ("streaks", showStreaks.value ? "true" : "false", showStreaks.source)
        ]
    }
}
