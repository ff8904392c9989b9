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
    public let zone: LocalZone
    public let seed: UInt64

    /// Nil when the rules have no timing (`BellRules.checked()` says so in words).
    public init?(rules: BellRules, zone: LocalZone, seed: UInt64) {
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

    /// A moment as the zone's wall clock shows it: `2026-03-29 03:00`, or `2026-03-29 03:00:10`
    /// off the minute (the end of a pause of an hour asked at 02:00:10, which holds the 03:00
    /// bell: shown as 03:00 it would seem to let it ring).
    public func wallText(_ instant: Int64) -> String {
        let minute = unplannedBell(at: instant).description
        let second = Int(((instant + Int64(offset(at: instant))) % 60 + 60) % 60)
        return second == 0 ? minute : minute + (second < 10 ? ":0\(second)" : ":\(second)")
    }

    /// A bell outside the plan (`gong ctl ring`), due at `instant`; numbered 0.
    public func unplannedBell(at instant: Int64) -> PlannedBell {
        let day = localDay(of: instant)
        let wallSecond = Int(instant + Int64(offset(at: instant)) - Int64(day * DayBoundary.secondsPerDay))
        return PlannedBell(instant: instant, day: day, wallSecond: wallSecond, number: 0)
    }

    /// The moment a wall-clock time of a local day happens in the zone: the first of two when the
    /// clocks fall back over it, the end of the gap when they spring forward over it.
    public func instant(day: Int, wallSecond: Int) -> Int64 { zone.instant(day: day, wallSecond: wallSecond) }

    /// 0 is Monday; 1970-01-01 was a Thursday.
    public static func weekday(ofDay day: Int) -> Int {
        ((day + 3) % 7 + 7) % 7
    }

    private func offset(at instant: Int64) -> Int { zone.secondsFromGMT(at: instant) }
}

/// Days since 1970-01-01 and the calendar dates people read: a plan counts days, a person reads dates.
public enum CivilDate {
    /// `2026-03-29 02:00`.
    public static func text(day: Int, wallSecond: Int) -> String {
        let (year, month, dayOfMonth) = from(day: day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(dayOfMonth)) \(two(wallSecond / 3600)):\(two(wallSecond % 3600 / 60))"
    }

    /// The proleptic Gregorian date of a day number (Howard Hinnant's `civil_from_days`).
    public static func from(day: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = day + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfMonth)
    }

    /// Nil when there is no such date (Hinnant's `days_from_civil`).
    public static func day(year: Int, month: Int, day: Int) -> Int? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
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
