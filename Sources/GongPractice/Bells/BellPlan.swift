import Foundation

/// One bell of a day's plan.
public struct PlannedBell: Sendable, Equatable, CustomStringConvertible {
    /// When it is due: seconds since 1970-01-01 UTC.
    public var instant: Int64
    /// The local calendar day it belongs to, as days since 1970-01-01.
    public var day: Int
    /// Its time of day as the rules name it, in seconds after midnight. Where the clocks spring
    /// forward over it, `instant` is the first moment after the gap.
    public var wallSecond: Int
    /// Its place in the day's plan, from 1.
    public var number: Int

    /// `2026-03-29 02:00`: the day and time of day as the rules name them.
    public var description: String { CivilDate.text(day: day, wallSecond: wallSecond) }
}

/// The bells that `BellRules` make of each day in one time zone: pure, so a simulated week runs in
/// a test in moments, and the same rules, zone and seed give the same bells on every run.
///
/// A bell is due by the wall clock as people live it. A day's times are laid out in wall-clock
/// seconds after midnight, then each is found on the zone's clock: a time the clocks spring
/// forward over rings at the first moment after the gap (two that land together ring once), and a
/// time the clocks fall back over rings once, at its first occurrence.
public struct BellPlan: Sendable {
    public let rules: BellRules
    public let timing: BellRules.Timing
    public let zone: TimeZone
    public let seed: UInt64

    /// Nil when the rules have no timing (`BellRules.checked()` says so in words).
    public init?(rules: BellRules, zone: TimeZone, seed: UInt64) {
        guard let timing = rules.timing else { return nil }
        self.rules = rules
        self.timing = timing
        self.zone = zone
        self.seed = seed
    }

    /// The day's bells in order: inside the active hours, on an active day, outside quiet hours,
    /// the first `maxPerDay` of them.
    public func bells(onDay day: Int) -> [PlannedBell] {
        guard rules.days.contains(Self.weekday(ofDay: day)) else { return [] }
        let window = rules.active ?? ClockSpan(start: 0, end: DayBoundary.secondsPerDay)
        var seconds: [Int]
        switch timing {
        case .every(let gap):
            seconds = Array(stride(from: window.start, to: window.end, by: gap))
        case .at(let times):
            seconds = times.filter { window.start <= $0 && $0 < window.end }
        case .random(let least, let most):
            var generator = SplitMix64(seed: seed ^ (UInt64(bitPattern: Int64(day)) &* 0x9E37_79B9_7F4A_7C15))
            seconds = []
            var second = window.start
            while true {
                second += least + Int(generator.next() % UInt64(most - least + 1))
                guard second < window.end else { break }
                seconds.append(second)
            }
        }
        seconds.removeAll { second in rules.quiet.contains { $0.contains(second) } }
        var bells: [PlannedBell] = []
        for second in seconds {
            let instant = instant(day: day, wallSecond: second)
            // Two times in the gap of a spring-forward day land on the same moment: one bell.
            if let last = bells.last, last.instant >= instant { continue }
            bells.append(PlannedBell(instant: instant, day: day, wallSecond: second, number: bells.count + 1))
            if let cap = rules.maxPerDay, bells.count == cap { break }
        }
        return bells
    }

    /// The first bell due after `instant`; nil when none falls in the next eight days (the rules
    /// leave no time for one).
    public func next(after instant: Int64) -> PlannedBell? {
        let today = localDay(of: instant)
        for day in (today - 1)...(today + 8) {
            if let bell = bells(onDay: day).first(where: { $0.instant > instant }) { return bell }
        }
        return nil
    }

    /// The local calendar day a moment falls on.
    public func localDay(of instant: Int64) -> Int {
        let local = instant + Int64(offset(at: instant))
        let day = Int64(DayBoundary.secondsPerDay)
        return Int(local >= 0 ? local / day : (local - day + 1) / day)
    }

    /// A moment as the zone's wall clock shows it: `2026-03-29 03:00`.
    public func wallText(_ instant: Int64) -> String { unplannedBell(at: instant).description }

    /// A bell outside the plan (`gong ctl ring`), due at `instant`; numbered 0.
    public func unplannedBell(at instant: Int64) -> PlannedBell {
        let day = localDay(of: instant)
        let wallSecond = Int(instant + Int64(offset(at: instant)) - Int64(day * DayBoundary.secondsPerDay))
        return PlannedBell(instant: instant, day: day, wallSecond: wallSecond, number: 0)
    }

    /// The moment a wall-clock time of a local day happens in the zone: the first of two when the
    /// clocks fall back over it, the end of the gap when they spring forward over it.
    public func instant(day: Int, wallSecond: Int) -> Int64 {
        let dayLength = Int64(DayBoundary.secondsPerDay)
        let wall = Int64(day) * dayLength + Int64(wallSecond)
        // The zone's offsets a day either side cover any change of offset around this time.
        let offsets = [offset(at: wall - dayLength), offset(at: wall + dayLength)].sorted(by: >)
        let candidates = offsets.map { wall - Int64($0) }.filter { Int64(offset(at: $0)) == wall - $0 }
        if let first = candidates.min() { return first }
        // In a gap: the first moment whose wall time is not before `wall`. Wall time only grows
        // across a spring-forward gap, so a binary search finds it.
        var low = wall - Int64(offsets[0])  // its wall time is before `wall`
        var high = wall - Int64(offsets[1])  // its wall time is after
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if middle + Int64(offset(at: middle)) < wall { low = middle } else { high = middle }
        }
        return high
    }

    /// 0 is Monday; 1970-01-01 was a Thursday.
    public static func weekday(ofDay day: Int) -> Int {
        ((day + 3) % 7 + 7) % 7
    }

    private func offset(at instant: Int64) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant)))
    }
}

/// Days since 1970-01-01 and the calendar dates people read: a plan counts days, a person reads dates.
public enum CivilDate {
    /// The Gregorian calendar on UTC: a day number is a local date already, so no zone may shift it.
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// `2026-03-29 02:00`.
    public static func text(day: Int, wallSecond: Int) -> String {
        let (year, month, dayOfMonth) = from(day: day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(dayOfMonth)) \(two(wallSecond / 3600)):\(two(wallSecond % 3600 / 60))"
    }

    public static func from(day: Int) -> (year: Int, month: Int, day: Int) {
        let parts = calendar.dateComponents(
            [.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(day * DayBoundary.secondsPerDay)))
        return (parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    /// Nil when there is no such date.
    public static func day(year: Int, month: Int, day: Int) -> Int? {
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            calendar.component(.day, from: date) == day
        else { return nil }
        return Int((date.timeIntervalSince1970 / TimeInterval(DayBoundary.secondsPerDay)).rounded(.down))
    }
}

/// A small, fast generator whose sequence is fixed by its seed (Steele, Lea and Flood's
/// SplitMix64), so a seed printed today gives the same random bells tomorrow.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
