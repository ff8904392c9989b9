import FoundationEssentials

/// What a history says about a practice: sessions and minutes, in all and per pattern, streaks
/// of days, and the minutes of each recent day.
///
/// A sitting counts when at least `minimumSeconds` of it were played, however it ended (the
/// minutes of a session stopped early, or killed, count). Days are the person's local days,
/// beginning at the day boundary: a sit at 00:30 with the boundary at 4:00 counts for the day
/// before, so it does not break a streak.
public struct PracticeStats: Sendable, Equatable, Codable {
    public struct Total: Sendable, Equatable, Codable {
        public var sessions: Int
        public var minutes: Double
    }

    public var total: Total
    /// By pattern name, most minutes first.
    public var patterns: [PatternTotal]
    /// Days in a row with a counted sitting, up to today (or up to yesterday while today has
    /// none yet: the day is not over).
    public var currentStreak: Int
    public var longestStreak: Int
    /// Minutes counted on each of the last `days.count` days, oldest first, ending today.
    public var days: [Day]
    /// Today, as days since 1970-01-01.
    public var today: Int

    public struct PatternTotal: Sendable, Equatable, Codable {
        public var pattern: String
        public var sessions: Int
        public var minutes: Double
    }

    public struct Day: Sendable, Equatable, Codable {
        /// `YYYY-MM-DD`.
        public var date: String
        public var minutes: Double
        /// 0 Monday … 6 Sunday.
        public var weekday: Int
    }

    public init(
        records: [SessionRecord], boundary: DayBoundary = .standard, minimumSeconds: Double = 60,
        now: Date = Date(), utcOffsetSeconds: Int = LocalZone.current.secondsFromGMT(for: Date()), recentDays: Int = 84
    ) {
        let counted = records.filter { $0.playedSeconds >= minimumSeconds }
        total = Total(sessions: counted.count, minutes: counted.reduce(0) { $0 + $1.playedSeconds } / 60)
        var byPattern: [String: PatternTotal] = [:]
        var minutesByDay: [Int: Double] = [:]
        for record in counted {
            byPattern[record.pattern, default: PatternTotal(pattern: record.pattern, sessions: 0, minutes: 0)]
                .sessions += 1
            byPattern[record.pattern]?.minutes += record.playedSeconds / 60
            minutesByDay[boundary.dayNumber(of: record), default: 0] += record.playedSeconds / 60
        }
        patterns = byPattern.values.sorted { ($0.minutes, $1.pattern) > ($1.minutes, $0.pattern) }
        let today = boundary.dayNumber(localTime: now.addingTimeInterval(Double(utcOffsetSeconds)))
        self.today = today

        var longest = 0
        var run = 0
        var previous: Int?
        for day in minutesByDay.keys.sorted() {
            run = previous == day - 1 ? run + 1 : 1
            longest = max(longest, run)
            previous = day
        }
        longestStreak = longest
        var current = 0
        var day = minutesByDay[today] == nil ? today - 1 : today
        while minutesByDay[day] != nil {
            current += 1
            day -= 1
        }
        currentStreak = current

        days = (0..<max(0, recentDays)).reversed().map { back in
            let number = today - back
            // 1970-01-01 was a Thursday (3, counting from Monday as 0).
            return Day(
                date: DayBoundary.text(ofDay: number), minutes: minutesByDay[number] ?? 0,
                weekday: ((number + 3) % 7 + 7) % 7)
        }
    }
}
