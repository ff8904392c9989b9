import ArgumentParser
import FoundationEssentials
import GongCore
import GongKit
import GongPractice

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List, export, import and add the sessions you sat.",
        discussion: """
            Every session gong plays is recorded in $XDG_DATA_HOME/gong/history.sqlite (unless \
            --no-history), from its start: one killed mid-way keeps the minutes it played.

            Examples:
              gong history --since 7d
              gong history --csv > sits.csv; gong history import sits.csv
              gong history add --pattern two-phase --at "2026-11-23 07:00" --length 20m
            """,
        subcommands: [List.self, Import.self, Add.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the sessions, newest first: a table, JSON or CSV.")

        @Option(
            help: ArgumentHelp(
                "Only sessions begun since: a date (2026-11-01) or days or weeks ago (7d, 2w).", valueName: "WHEN"))
        var since: String?

        @Option(help: ArgumentHelp("At most this many.", valueName: "N"))
        var limit: Int?

        @Flag(help: "One JSON object per session, one per line.")
        var json = false

        @Flag(help: "CSV with a header row, every field (gong history import reads it back).")
        var csv = false

        func run() throws {
            do {
                guard !(json && csv) else { throw UsageError("--json and --csv: choose one") }
                if let limit, limit < 1 {
                    throw UsageError("--limit \(limit): out of range; use a whole number from 1")
                }
                let start = try since.map { text throws(UsageError) in try HistoryTime.since(text, flag: "--since") }
                let records = try openHistory().records(since: start, limit: limit)
                if csv {
                    print(HistoryCSV.text(of: records), terminator: "")
                } else if json {
                    for record in records { print(try record.jsonLine()) }
                } else {
                    HistoryTable.print(records)
                }
            } catch {
                throw fail(error)
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Add the sessions of a CSV file from gong history --csv.",
            discussion:
                "A session already in the history (by its id) is replaced, not added twice. The file is read whole before anything is written: a bad line adds nothing."
        )

        @Argument(help: "The CSV file.")
        var file: String

        func run() throws {
            do {
                guard let data = FileManager.default.contents(atPath: file) else { throw UnreadableFile(path: file) }
                let records = try HistoryCSV.records(in: String(decoding: data, as: UTF8.self), file: file)
                let history = try openHistory()
                let known = Set(try history.records().map(\.id))
                try history.save(records)
                let replaced = records.filter { known.contains($0.id) }.count
                print(
                    "gong: \(records.count - replaced) sessions added, \(replaced) already there replaced, from \(file)"
                )
            } catch {
                throw fail(error)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Record a session you sat without gong.",
            discussion: """
                Example:
                  gong history add --pattern two-phase --at "2026-11-23 07:00" --length 20m
                """)

        @Option(help: ArgumentHelp("What you sat: a pattern's name, or any word.", valueName: "NAME"))
        var pattern: String

        @Option(
            help: ArgumentHelp(
                "When it began, local time: \"2026-11-23 07:00\", or \"today 07:00\", \"yesterday 21:30\".",
                valueName: "TIME"))
        var at: String

        @Option(help: ArgumentHelp("How long it lasted, e.g. 20m or 1h15m.", valueName: "DURATION"))
        var length: String

        func run() throws {
            do {
                guard let seconds = DurationText.seconds(length), seconds.isPositive,
                    seconds <= PatternLimits.maxSessionSeconds
                else {
                    throw UsageError(
                        "--length \(length): not a duration from 1s to \(PatternLimits.maxSessionText); use \(DurationText.allowed)"
                    )
                }
                let (start, offset) = try HistoryTime.localTime(at, flag: "--at")
                let played = seconds.doubleValue
                let boundary = try loadConfig().dayStartsAt.value
                let record = SessionRecord(
                    pattern: pattern, source: .added, startedAt: start, endedAt: start.addingTimeInterval(played),
                    utcOffsetSeconds: offset,
                    day: DayBoundary.text(
                        ofDay: boundary.dayNumber(localTime: start.addingTimeInterval(Double(offset)))),
                    plannedSeconds: played, playedSeconds: played, ending: .completed)
                try openHistory().save(record)
                print(
                    "gong: added \(pattern), \(DurationText.format(seconds)) at \(record.localStartText), counted for \(record.day)"
                )
            } catch {
                throw fail(error)
            }
        }
    }
}

func openHistory() throws(HistoryError) -> SessionHistory {
    try SessionHistory(path: SessionHistory.defaultPath())
}

/// Times as the history commands read and write them.
enum HistoryTime {
    /// `2026-11-23 07:00` (or with a `T`), `today 07:00`, `yesterday 07:00`: local time, and its
    /// offset from UTC then.
    static func localTime(_ text: String, flag: String, now: Date = Date()) throws(UsageError) -> (Date, Int) {
        let allowed = "a local time such as \"2026-11-23 07:00\", \"today 07:00\" or \"yesterday 21:30\""
        let pieces = text.trimmingSpaces().split(whereSeparator: { $0 == " " || $0 == "T" })
        guard pieces.count == 2 else { throw UsageError("\(flag) \"\(text)\": not a time; use \(allowed)") }
        let zone = LocalZone.current
        let nowSecond = Int64(now.timeIntervalSince1970.rounded(.down))
        let day: (year: Int, month: Int, day: Int)
        switch pieces[0] {
        case "today": day = zone.date(at: nowSecond)
        case "yesterday": day = zone.date(at: nowSecond - Int64(DayBoundary.secondsPerDay))
        default:
            let numbers = pieces[0].split(separator: "-").compactMap { Int($0) }
            guard numbers.count == 3 else { throw UsageError("\(flag) \"\(text)\": not a date; use \(allowed)") }
            day = (numbers[0], numbers[1], numbers[2])
        }
        let clock = pieces[1].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 2, (0..<24).contains(clock[0]), (0..<60).contains(clock[1]) else {
            throw UsageError("\(flag) \"\(text)\": not a time of day; use \(allowed)")
        }
        guard
            let instant = zone.instant(year: day.year, month: day.month, day: day.day, hour: clock[0], minute: clock[1])
        else { throw UsageError("\(flag) \"\(text)\": no such day; use \(allowed)") }
        let date = Date(timeIntervalSince1970: Double(instant))
        guard date <= now else { throw UsageError("\(flag) \"\(text)\": is in the future; use \(allowed)") }
        return (date, zone.secondsFromGMT(at: instant))
    }

    /// `2026-11-01` (local midnight), `7d` or `2w` ago.
    static func since(_ text: String, flag: String, now: Date = Date()) throws(UsageError) -> Date {
        let allowed = "a date such as 2026-11-01, or days or weeks ago such as 7d or 2w"
        if let unit = text.last, unit == "d" || unit == "w", let count = Int(text.dropLast()), count >= 0,
            count <= 100_000
        {
            return now.addingTimeInterval(-Double(count * (unit == "w" ? 7 : 1) * DayBoundary.secondsPerDay))
        }
        let numbers = text.split(separator: "-").compactMap { Int($0) }
        // A month or day past its end runs on into the next (2026-02-30 is March 2), as it did
        // when Foundation's Calendar read it.
        guard numbers.count == 3, abs(numbers[0]) < 1_000_000, abs(numbers[1]) < 12_000_000,
            abs(numbers[2]) < 400_000_000
        else { throw UsageError("\(flag) \(text): not a date; use \(allowed)") }
        let months = numbers[0] * 12 + numbers[1] - 1
        let year = months >= 0 ? months / 12 : (months - 11) / 12
        let firstOfMonth = CivilDate.day(year: year, month: months - year * 12 + 1, day: 1) ?? 0
        let midnight = LocalZone.current.instant(
            day: firstOfMonth + numbers[2] - 1, wallSecond: 0, gap: .movedForward)
        return Date(timeIntervalSince1970: Double(midnight))
    }
}

/// The history as a table a person reads.
enum HistoryTable {
    static func print(_ records: [SessionRecord]) {
        guard !records.isEmpty else {
            Swift.print("No sessions recorded yet (\(SessionHistory.defaultPath())).")
            return
        }
        let rows =
            [["started", "pattern", "played", "of", "ended", "pauses", "skips", "heard"]]
            + records.map { record in
                [
                    record.localStartText, record.pattern, DurationText.clock(seconds: record.playedSeconds),
                    DurationText.clock(seconds: record.plannedSeconds),
                    record.source == .added ? "added" : record.ending.rawValue, "\(record.pauses)", "\(record.skips)",
                    record.heard ?? "-"
                ]
            }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.indices.map { column in
                column >= 2 && column != 4 && column != 7
                    ? String(repeating: " ", count: widths[column] - row[column].count) + row[column]
                    : row[column].padded(to: widths[column])
            }
            Swift.print(cells.joined(separator: "  ").trimmingSpaces())
        }
    }
}
