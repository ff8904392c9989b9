import GongAudio
import GongCore
import GongKit

/// When `gong bells` rings through the day: every N, at clock times, or at random gaps; inside
/// active hours and days, outside quiet hours, at most so many a day.
///
/// ```toml
/// [bells]
/// every = "45m"              # or at = ["08:00", "12:30"], or random = "20m-60m"
/// active = "09:00-18:00"     # when bells may ring (the whole day when absent)
/// days = "mon-fri"           # which days (every day when absent)
/// quiet = "12:00-13:00"      # no bells then; a list such as "12:00-13:00,22:00-07:00"
/// max = 12                   # at most this many bells planned a day
/// seed = 7                   # random gaps repeat for the same seed
/// sound = "bowl"             # the cue, as in a pattern
/// gain = -6                  # dB
/// then = "breathe 3 breaths" # a short practice after each bell: a pattern, so many breaths
/// ```
///
/// Every key has a flag of the same name (`--every 45m`), and a flag's value reads as the key's
/// does, so the two cannot drift apart: each value is parsed in `set(_:_:)` only.
public struct BellRules: Sendable, Equatable {
    /// What a bell's time follows.
    public enum Timing: Sendable, Equatable {
        /// From the start of the active hours (midnight without them), every so many seconds.
        case every(seconds: Int)
        /// At these times of day, in seconds after midnight, sorted.
        case at([Int])
        /// From the start of the active hours, gaps drawn between a least and a most, in seconds.
        case random(least: Int, most: Int)
    }

    public var timing: Timing?
    /// Nil: the whole day.
    public var active: ClockSpan?
    /// 0 is Monday. All seven when none are given.
    public var days: Set<Int> = Set(0..<7)
    public var quiet: [ClockSpan] = []
    /// Nil: no cap.
    public var maxPerDay: Int?
    /// Nil: a seed is drawn when the bells start, and said, so a day can be heard again.
    public var seed: UInt64?
    /// Nil: the bank's default bell.
    public var sound: String?
    public var gainDB: Double = 0
    /// Nil: the bell alone.
    public var then: BellPractice?

    public init() {}

    /// A key of `[bells]` (the command line's flags are named after them).
    public enum Key: String, Sendable, CaseIterable {
        case every, at, random, active, days, quiet, max, seed, sound, gain, then
    }

    /// The shortest gap between bells: a bell rings out for seconds, and a minute apart is already
    /// more than people ask for.
    public static let shortestGap = 60
    public static let longestGap = DayBoundary.secondsPerDay

    /// Reads one key's value as a person wrote it (a flag's text, or a TOML value in text form).
    /// Setting a second kind of timing is an error: which one was meant cannot be guessed.
    public mutating func set(_ key: Key, _ text: String) throws(BellRuleProblem) {
        switch key {
        case .every:
            let seconds = try Self.gap(text)
            try setTiming(.every(seconds: seconds), key)
        case .at:
            let parts = text.split(separator: ",").map { String($0).trimmed }
            let times = parts.compactMap { DayBoundary(text: $0)?.secondsAfterMidnight }
            guard !parts.isEmpty, times.count == parts.count else {
                throw BellRuleProblem("not a list of times of day", "times such as 08:00,12:30")
            }
            guard Set(times).count == times.count else {
                throw BellRuleProblem("a time given twice", "each time of day once")
            }
            try setTiming(.at(times.sorted()), key)
        case .random:
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 2, let least = try? Self.gap(parts[0]), let most = try? Self.gap(parts[1]),
                least <= most
            else {
                throw BellRuleProblem(
                    "not a range of gaps from 1m to 24h", "the least and the most gap, such as 20m-60m")
            }
            try setTiming(.random(least: least, most: most), key)
        case .active:
            guard let span = ClockSpan(text: text), span.start < span.end else {
                throw BellRuleProblem("not a span of the day", "a start before its end, such as 09:00-18:00")
            }
            active = span
        case .days:
            guard let parsed = Self.days(text) else {
                throw BellRuleProblem("not a set of days", "days such as mon-fri, sat,sun or mon,wed-fri")
            }
            days = parsed
        case .quiet:
            let spans = text.split(separator: ",").map { ClockSpan(text: String($0)) }
            guard !spans.isEmpty, spans.allSatisfy({ $0 != nil && $0!.start != $0!.end }) else {
                throw BellRuleProblem("not a list of spans of the day", "spans such as 12:00-13:00,22:00-07:00")
            }
            quiet = spans.compactMap { $0 }
        case .max:
            guard let count = Int(text.trimmed), (1...1440).contains(count) else {
                throw BellRuleProblem("not a count from 1 to 1440", "a whole number such as 12")
            }
            maxPerDay = count
        case .seed:
            guard let value = UInt64(text.trimmed) else {
                throw BellRuleProblem("not a seed", "a whole number from 0 to 18446744073709551615")
            }
            seed = value
        case .sound:
            guard !text.trimmed.isEmpty else {
                throw BellRuleProblem("not a sound name", remedy: .soundOfTheBank)
            }
            sound = text.trimmed
        case .gain:
            guard let db = Double(text.trimmed), db.isFinite, SessionLimits.gainDB.contains(db) else {
                throw BellRuleProblem("out of range", SessionLimits.gainAllowed)
            }
            gainDB = db
        case .then:
            guard let practice = BellPractice(text: text) else {
                throw BellRuleProblem(
                    "not a practice",
                    "breathe N breaths, or a pattern with N breaths or N cycles from 1 to \(BellPractice.mostCycles)")
            }
            then = practice
        }
    }

    /// These rules with every key `other` has set taken from it: flags over the config file.
    public func overridden(by other: BellRules, keys: Set<Key>) -> BellRules {
        var merged = self
        if keys.contains(.every) || keys.contains(.at) || keys.contains(.random) { merged.timing = other.timing }
        if keys.contains(.active) { merged.active = other.active }
        if keys.contains(.days) { merged.days = other.days }
        if keys.contains(.quiet) { merged.quiet = other.quiet }
        if keys.contains(.max) { merged.maxPerDay = other.maxPerDay }
        if keys.contains(.seed) { merged.seed = other.seed }
        if keys.contains(.sound) { merged.sound = other.sound }
        if keys.contains(.gain) { merged.gainDB = other.gainDB }
        if keys.contains(.then) { merged.then = other.then }
        return merged
    }

    /// Reads `[bells]` from a config file, each problem placed at its file and line.
    package static func read(_ value: TOMLValue, path: String, lines: TOMLLines) throws(PatternError)
        -> (rules: BellRules, keys: Set<Key>)
    {
        guard let table = value.table else {
            throw PatternError(
                location: lines.line(of: "bells").map { "\(path):\($0)" } ?? path, key: "bells",
                problem: "not a table", allowed: "a [bells] section with keys such as every = \"45m\"")
        }
        var rules = BellRules()
        var keys = Set<Key>()
        // In the file's order, so of two clashing keys the later one is named.
        let entries = table.map { (name: $0.0, item: $0.1, line: lines.line(of: "bells.\($0.0)")) }
        for (name, item, line) in entries.sorted(by: { ($0.line ?? 0) < ($1.line ?? 0) }) {
            let location = line.map { "\(path):\($0)" } ?? path
            let written = item.string ?? item.debugDescription
            guard let key = Key(rawValue: name) else {
                throw PatternError(
                    location: location, key: "bells.\(name)", value: written, problem: "unknown key",
                    allowed: "one of " + Key.allCases.map(\.rawValue).joined(separator: ", "))
            }
            let text: String? =
                if let string = item.string {
                    string
                } else if let array = item.array, array.allSatisfy({ $0.string != nil }) {
                    array.compactMap(\.string).joined(separator: ",")
                } else if let int = item.int, key == .max || key == .seed || key == .gain {
                    String(int)
                } else if let double = item.double, key == .gain {
                    String(double)
                } else {
                    nil
                }
            try rules.set(key, text, placed: location, written: written)
            keys.insert(key)
        }
        return (rules, keys)
    }

    /// Sets one key as `read` does, a problem placed as the config file places it
    /// (`bells.every = "5s": …; use …`), `location` before it when there is one.
    mutating func set(_ key: Key, _ text: String?, placed location: String?, written: String) throws(PatternError) {
        do throws(BellRuleProblem) {
            guard let text else { throw BellRuleProblem("not a value this key takes", key.example) }
            try set(key, text)
        } catch {
            throw PatternError(
                location: location, key: "bells.\(key.rawValue)", value: written, problem: error.problem,
                allowed: error.allowed, remedy: error.remedy)
        }
    }

    // MARK: The schedule

    /// The keys that say when bells ring, which `gong bells` takes while it runs (`schedule` on
    /// its socket); the others say how a bell sounds, found once when it starts.
    public static let scheduleKeys: [Key] = [.every, .at, .random, .active, .days, .quiet, .max]

    /// A whole schedule, each value as a person writes it (`at` and `quiet` also as lists, `max`
    /// also as a number), read by the same `set` a flag and the config file's key are: a problem
    /// is the config file's line without its file. Keys left out take their defaults (all day,
    /// every day, no quiet hours, no cap); a timing is needed.
    public static func schedule(_ values: [String: AnyJSON]) throws(PatternError) -> BellRules {
        var rules = BellRules()
        for name in values.keys.sorted() {
            let item = values[name]!
            let written = item.string ?? item.text()
            guard let key = Key(rawValue: name), scheduleKeys.contains(key) else {
                throw PatternError(
                    key: "bells.\(name)", value: written, problem: "not part of the schedule",
                    allowed: "one of " + scheduleKeys.map(\.rawValue).joined(separator: ", ")
                        + " (sound, gain, then and seed are set in config.toml or by flags)")
            }
            let text: String? =
                if let string = item.string {
                    string
                } else if let array = item.array, array.allSatisfy({ $0.string != nil }) {
                    array.compactMap(\.string).joined(separator: ",")
                } else if key == .max, let number = item.int {
                    String(number)
                } else {
                    nil
                }
            try rules.set(key, text, placed: nil, written: written)
        }
        do throws(BellRuleProblem) { return try rules.checked() } catch {
            throw PatternError(key: "bells", problem: error.problem, allowed: error.allowed)
        }
    }

    /// The schedule's keys as a person writes them (and `schedule` reads them back): only those
    /// set.
    public var scheduleTexts: [String: String] {
        var texts: [String: String] = [:]
        switch timing {
        case .every(let seconds): texts["every"] = Self.gapText(seconds)
        case .at(let times): texts["at"] = times.map(Self.clockText).joined(separator: ",")
        case .random(let least, let most): texts["random"] = Self.gapText(least) + "-" + Self.gapText(most)
        case nil: break
        }
        if let active { texts["active"] = active.description }
        if days.count < 7 {
            texts["days"] = Self.dayNames.indices.filter(days.contains).map { Self.dayNames[$0] }.joined(separator: ",")
        }
        if !quiet.isEmpty { texts["quiet"] = quiet.map(\.description).joined(separator: ",") }
        if let maxPerDay { texts["max"] = String(maxPerDay) }
        return texts
    }

    private static func gapText(_ seconds: Int) -> String { DurationText.format(seconds: Double(seconds)) }

    static func clockText(_ second: Int) -> String {
        second == DayBoundary.secondsPerDay
            ? "24:00" : Figure.zeroPadded(second / 3600, 2) + ":" + Figure.zeroPadded(second % 3600 / 60, 2)
    }

    /// The keys that set a timing, one of which the rules need.
    public static let timingKeys: [Key] = [.every, .at, .random]

    /// Checks what no single key can: that there is a timing at all.
    public func checked() throws(BellRuleProblem) -> BellRules {
        guard timing != nil else {
            throw BellRuleProblem("no timing for the bells", "one of every, at and random", missing: Self.timingKeys)
        }
        return self
    }

    private mutating func setTiming(_ new: Timing, _ key: Key) throws(BellRuleProblem) {
        if let timing, Self.key(of: timing) != key {
            throw BellRuleProblem(
                "\(Self.key(of: timing).rawValue) is given too", "one of every, at and random")
        }
        timing = new
    }

    private static func key(of timing: Timing) -> Key {
        switch timing {
        case .every: .every
        case .at: .at
        case .random: .random
        }
    }

    private static func gap(_ text: String) throws(BellRuleProblem) -> Int {
        guard let seconds = DurationText.seconds(text), seconds.denominator == 1,
            (Rational(Int64(shortestGap))...Rational(Int64(longestGap))).contains(seconds)
        else { throw BellRuleProblem("not a whole-second gap from 1m to 24h", "a duration such as 45m or 1h30m") }
        return Int(seconds.numerator)
    }

    private static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// `mon-fri`, `sat,sun`, `mon,wed-fri`, `fri-mon` (through the weekend); nil when not days.
    private static func days(_ text: String) -> Set<Int>? {
        var days = Set<Int>()
        for part in text.lowercased().split(separator: ",", omittingEmptySubsequences: false) {
            let ends = part.split(separator: "-", omittingEmptySubsequences: false).map {
                dayNames.firstIndex(of: String($0).trimmed)
            }
            guard (1...2).contains(ends.count), let first = ends[0], let last = ends[ends.count - 1] else { return nil }
            var day = first
            while true {
                days.insert(day)
                if day == last { break }
                day = (day + 1) % 7
            }
        }
        return days
    }
}

extension BellRules.Key {
    /// A value this key takes, for a person who gave one it does not.
    var example: String {
        switch self {
        case .every: "a duration such as \"45m\""
        case .at: "times such as [\"08:00\", \"12:30\"]"
        case .random: "a range such as \"20m-60m\""
        case .active: "a span such as \"09:00-18:00\""
        case .days: "days such as \"mon-fri\""
        case .quiet: "a span such as \"12:00-13:00\""
        case .max: "a whole number such as 12"
        case .seed: "a whole number such as 7"
        case .sound: "a sound name such as \"bowl\""
        case .gain: "dB such as -6"
        case .then: "a practice such as \"breathe 3 breaths\" or \"box 2 cycles\""
        }
    }
}

/// A short practice after each bell, as a person writes it: `breathe 3 breaths` (resonant
/// breathing, the pattern `gong breathe` plays), or a pattern by name with or without a count,
/// `box 2 cycles`, `4-7-8 4 breaths`, `sigh`. Whether the pattern exists is for whoever has the
/// catalog to say.
public struct BellPractice: Sendable, Equatable, CustomStringConvertible {
    /// A pattern name or file, as `gong run` takes.
    public var pattern: String
    /// Nil: as many as the pattern has.
    public var cycles: Int?

    /// A practice after a bell is short: more than this is a session of its own.
    public static let mostCycles = 60

    public init(pattern: String, cycles: Int? = nil) {
        self.pattern = pattern
        self.cycles = cycles
    }

    /// Nil when the text is not `NAME`, `NAME N breaths|cycles` or `breathe N breaths`.
    public init?(text: String) {
        let words = text.split(separator: " ").map(String.init)
        guard let name = words.first else { return nil }
        let breathe = name.lowercased() == "breathe"
        switch words.count {
        case 1 where !breathe:
            self.init(pattern: name)
        case 3:
            guard let count = Int(words[1]), (1...Self.mostCycles).contains(count),
                ["breath", "breaths", "cycle", "cycles"].contains(words[2].lowercased())
            else { return nil }
            self.init(pattern: breathe ? "resonant" : name, cycles: count)
        default:
            return nil
        }
    }

    public var description: String {
        guard let cycles else { return pattern }
        return "\(pattern) \(cycles) \(cycles == 1 ? "cycle" : "cycles")"
    }
}

/// What is wrong with one bell rule's value, or with the rules as a whole, and what would be
/// accepted; whoever read the value places it (a file and line, or a flag), and says `missing`
/// and `remedy` in its own words (as keys, or as flags).
public struct BellRuleProblem: Error, Sendable, Equatable {
    public var problem: String
    public var allowed: String
    /// Keys one of which the rules need and do not have: none when a value is wrong.
    public var missing: [BellRules.Key]
    /// What would be accepted, as data, when `allowed` could only say it fully by naming a command.
    public var remedy: PatternError.Remedy?

    public init(_ problem: String, _ allowed: String, missing: [BellRules.Key] = []) {
        self.problem = problem
        self.allowed = allowed
        self.missing = missing
    }

    public init(_ problem: String, remedy: PatternError.Remedy) {
        self.init(problem, remedy.description)
        self.remedy = remedy
    }
}

/// A span of the day by the wall clock, `09:00-18:00`; an end before its start runs past
/// midnight (`22:00-07:00`).
public struct ClockSpan: Sendable, Equatable, CustomStringConvertible {
    /// Seconds after midnight.
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// `H:MM-H:MM`, each end from 0:00 to 23:59, or `24:00` as an end; nil otherwise.
    public init?(text: String) {
        let ends = text.split(separator: "-", omittingEmptySubsequences: false).map { String($0).trimmed }
        guard ends.count == 2, let start = DayBoundary(text: ends[0]) else { return nil }
        let end = ends[1] == "24:00" ? DayBoundary.secondsPerDay : DayBoundary(text: ends[1])?.secondsAfterMidnight
        guard let end else { return nil }
        self.init(start: start.secondsAfterMidnight, end: end)
    }

    /// `09:00-18:00`, as `init?(text:)` reads it.
    public var description: String { BellRules.clockText(start) + "-" + BellRules.clockText(end) }

    /// Whether a time of day (seconds after midnight) falls inside, its start included, its end not.
    public func contains(_ second: Int) -> Bool {
        start <= end ? (start <= second && second < end) : (second >= start || second < end)
    }
}

extension String {
    fileprivate var trimmed: String { trimmingSpaces() }
}
