import FoundationEssentials
import Glibc
import GongCore

/// A time zone as the C library knows it, from the system's tz database: the process's own
/// (`TZ`, else `/etc/localtime`), or one named (`Europe/Berlin`). Foundation without ICU knows
/// only fixed offsets, and local time is all gong needs a zone for: which day a sitting counts
/// for, and when a bell is due by the wall clock, daylight saving time included.
public struct LocalZone: Sendable, Equatable {
    /// The name `TZ` takes for it; nil for the process's own zone.
    private let name: String?

    /// The zone the machine's clocks show: `TZ` when it is set, else `/etc/localtime`.
    public static let current = LocalZone(name: nil)

    private init(name: String?) { self.name = name }

    /// A zone of the tz database (`Europe/Berlin`, `UTC`); nil when there is none of that name.
    public init?(identifier: String) {
        let directory = getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo"
        guard !identifier.isEmpty, !identifier.hasPrefix("/"), !identifier.split(separator: "/").contains(".."),
            access(directory + "/" + identifier, R_OK) == 0
        else { return nil }
        name = identifier
    }

    /// Its name: the tz database's (`Europe/Berlin`), or `TZ` as set, or `UTC` when the machine
    /// names none.
    public var identifier: String {
        if let name { return name }
        // Read under the lock: a named zone's offsets are found with `TZ` set to it for a moment.
        let tz = Self.zoneLock.withLock { _ in getenv("TZ").map { String(cString: $0) } }
        if let tz, !tz.isEmpty {
            return tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
        }
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink("/etc/localtime", &target, target.count - 1)
        if length > 0 {
            let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let range = path.firstRange(of: "zoneinfo/") { return String(path[range.upperBound...]) }
        }
        return "UTC"
    }

    /// Seconds its clocks are ahead of UTC at `instant` (seconds since 1970-01-01 UTC).
    public func secondsFromGMT(at instant: Int64) -> Int {
        inZone {
            var time = time_t(instant)
            var parts = tm()
            guard localtime_r(&time, &parts) != nil else { return 0 }
            return parts.tm_gmtoff
        }
    }

    /// Seconds its clocks are ahead of UTC at `date`.
    public func secondsFromGMT(for date: Date) -> Int {
        secondsFromGMT(at: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The local calendar date at `instant`.
    public func date(at instant: Int64) -> (year: Int, month: Int, day: Int) {
        let local = instant + Int64(secondsFromGMT(at: instant))
        return CivilDate.from(day: Int(local >= 0 ? local / 86400 : (local - 86399) / 86400))
    }

    /// Where a wall-clock time lands when the clocks spring forward over it.
    public enum Gap: Sendable {
        /// At the first moment after the gap: a bell due at 02:30 rings at 03:00.
        case endOfGap
        /// Moved forward by the gap's length, 02:30 to 03:30: where Foundation's `Calendar` put a
        /// time typed for the history, so it lands where it always has.
        case movedForward
    }

    /// The moment the zone's clocks show `hour:minute` on a date, a time in a gap moved forward
    /// by the gap (see `instant(day:wallSecond:gap:)`); nil when there is no such date.
    public func instant(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0) -> Int64? {
        CivilDate.day(year: year, month: month, day: day).map {
            instant(day: $0, wallSecond: hour * 3600 + minute * 60, gap: .movedForward)
        }
    }

    /// The moment a wall-clock time of a local day (days since 1970-01-01) happens in the zone:
    /// the first of two when the clocks fall back over it; as `gap` says when they spring forward
    /// over it.
    public func instant(day: Int, wallSecond: Int, gap: Gap = .endOfGap) -> Int64 {
        let wall = Int64(day) * 86400 + Int64(wallSecond)
        // The zone's offsets a day either side cover any change of offset around this time.
        let offsets = [secondsFromGMT(at: wall - 86400), secondsFromGMT(at: wall + 86400)].sorted(by: >)
        let candidates = offsets.map { wall - Int64($0) }.filter { Int64(secondsFromGMT(at: $0)) == wall - $0 }
        if let first = candidates.min() { return first }
        // In a gap. Moved forward: read on the clock as it was before the gap.
        if gap == .movedForward { return wall - Int64(offsets[1]) }
        // At its end: the first moment whose wall time is not before `wall`. Wall time only grows
        // across a spring-forward gap, so a binary search finds it.
        var low = wall - Int64(offsets[0])  // its wall time is before `wall`
        var high = wall - Int64(offsets[1])  // its wall time is after
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if middle + Int64(secondsFromGMT(at: middle)) < wall { low = middle } else { high = middle }
        }
        return high
    }

    /// Runs `body` with the C library's local time set to this zone. The C library keeps one
    /// zone for the process, read from `TZ`: a named zone is set there for `body` and the
    /// process's own put back after, all under one lock so no other caller sees it changed.
    private func inZone<Result>(_ body: () -> Result) -> Result {
        Self.zoneLock.withLock { _ in
            guard let name else {
                tzset()
                return body()
            }
            let saved = getenv("TZ").map { String(cString: $0) }
            setenv("TZ", name, 1)
            tzset()
            defer {
                if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
                tzset()
            }
            return body()
        }
    }

    private static let zoneLock = Locked(())
}
