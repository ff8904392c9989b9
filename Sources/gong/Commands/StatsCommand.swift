import ArgumentParser
import FoundationEssentials
import GongAudio
import GongCore
import GongKit
import GongPractice
import GongTerminal

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show your practice: minutes, streaks and a calendar.",
        discussion: """
            Sessions and minutes, streaks, and a calendar of the last weeks. A session counts \
            when at least --minimum of it was played, however it ended. A day begins at \
            --day-starts (4:00 by default), so a sit just after midnight counts for the day \
            before and does not break a streak. --bells shows a day's bells of gong bells \
            instead: each rung or skipped, and why.
            """)

    @Option(
        help: ArgumentHelp(
            "When a day begins, local time (default: the config's day-starts, else 4:00).", valueName: "H:MM"))
    var dayStarts: String?

    @Option(
        help: ArgumentHelp(
            "The least a session must play to count, e.g. 1m or 5m (default: the config's streak-minimum, else 1m).",
            valueName: "DURATION"))
    var minimum: String?

    @Option(help: ArgumentHelp("Weeks in the calendar (1-104).", valueName: "N"))
    var weeks = 12

    @Flag(help: "Do not show streaks (the config's streaks = false does the same).")
    var noStreaks = false

    @Flag(help: "The figures as one JSON object.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "Show the bells of gong bells on a day instead: today, yesterday or a date such as 2026-11-26.",
            valueName: "DAY"))
    var bells: String?

    func run() throws {
        do {
            if let bells { return try showBells(on: bells) }
            var config = try loadConfig()
            if let dayStarts {
                guard let boundary = DayBoundary(text: dayStarts) else {
                    throw UsageError(
                        "--day-starts \(dayStarts): not a time of day; use H:MM from 0:00 to 23:59, such as 4:00")
                }
                config.dayStartsAt.override(boundary, from: .flag("--day-starts"))
            }
            if let minimum {
                guard let least = DurationText.seconds(minimum), least <= PatternLimits.maxSessionSeconds else {
                    throw UsageError(
                        "--minimum \(minimum): not a duration up to \(PatternLimits.maxSessionText); use \(DurationText.allowed), or 0s"
                    )
                }
                config.streakMinimumSeconds.override(least.doubleValue, from: .flag("--minimum"))
            }
            if noStreaks { config.showStreaks.override(false, from: .flag("--no-streaks")) }
            guard (1...104).contains(weeks) else { throw UsageError("--weeks \(weeks): out of range; use 1 to 104") }
            let stats = PracticeStats(
                records: try openHistory().records(), boundary: config.dayStartsAt.value,
                minimumSeconds: config.streakMinimumSeconds.value, recentDays: weeks * 7)
            let showStreaks = config.showStreaks.value
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                var object = AnyJSON(parsing: try encoder.encode(stats))?.object ?? [:]
                if !showStreaks {
                    object["currentStreak"] = nil
                    object["longestStreak"] = nil
                }
                print(AnyJSON.object(object).text())
                return
            }
            print(Self.text(stats, showStreaks: showStreaks).joined(separator: "\n"))
        } catch {
            throw fail(error)
        }
    }

    /// One line a bell of the day, after a count of them.
    private func showBells(on text: String) throws {
        let now = Date()
        let today = Int(
            ((now.timeIntervalSince1970 + Double(LocalZone.current.secondsFromGMT(for: now)))
                / Double(DayBoundary.secondsPerDay)).rounded(.down))
        let parts = text.split(separator: "-").compactMap { Int($0) }
        let number: Int? =
            switch text {
            case "today": today
            case "yesterday": today - 1
            default: parts.count == 3 ? CivilDate.day(year: parts[0], month: parts[1], day: parts[2]) : nil
            }
        guard let number else {
            throw UsageError("--bells \(text): not a day; use today, yesterday or a date such as 2026-11-26")
        }
        // The bells' own form of a date: the plan's day, as their records name it.
        let day = String(CivilDate.text(day: number, wallSecond: 0).prefix(10))
        let records = try openHistory().bells(onDay: day)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(records), as: UTF8.self))
            return
        }
        let rung = records.filter { $0.outcome == "rung" }.count
        print("bells on \(day): \(rung) rung, \(records.count - rung) not")
        for record in records {
            var line = "  \(record.time)  \(record.outcome)"
            if let reason = record.reason { line += ": " + reason }
            if let off = record.offMs { line += " (heard \(Figure.fixed(off, 1, signed: true)) ms from its second)" }
            if record.number == 0 { line += " (gong ctl ring)" }
            print(line)
        }
    }

    static func text(_ stats: PracticeStats, showStreaks: Bool) -> [String] {
        func minutes(_ value: Double) -> String { DurationText.clock(seconds: value * 60) }
        func sessions(_ count: Int) -> String { count == 1 ? "1 session" : "\(count) sessions" }
        var lines = ["\(sessions(stats.total.sessions)), \(minutes(stats.total.minutes)) in all"]
        let width = stats.patterns.map(\.pattern.count).max() ?? 0
        for pattern in stats.patterns {
            lines.append(
                "  " + pattern.pattern.padded(to: width)
                    + "  \(sessions(pattern.sessions)), \(minutes(pattern.minutes))")
        }
        if showStreaks {
            let days = { (count: Int) in count == 1 ? "1 day" : "\(count) days" }
            lines.append("streak: \(days(stats.currentStreak)) now, \(days(stats.longestStreak)) at the longest")
        }
        lines.append("")
        lines += CalendarHeatMap.render(
            stats.days.map { CalendarHeatMap.Day(date: $0.date, minutes: $0.minutes, weekday: $0.weekday) })
        return lines
    }
}
