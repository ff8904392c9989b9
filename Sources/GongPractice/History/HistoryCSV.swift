import FoundationEssentials
import GongKit

/// The history as CSV (RFC 4180: comma-separated, a header row, fields with a comma, quote or
/// line break quoted): one row per sitting, every field of its record, so that reading the file
/// back gives the same records. Times are UTC in ISO 8601 to the millisecond; an empty field is
/// an absent value.
public enum HistoryCSV {
    /// The columns, in order.
    public static let columns = [
        "id", "pattern", "parameters", "source", "startedAt", "endedAt", "utcOffsetSeconds", "day", "plannedSeconds",
        "playedSeconds", "phases", "cycles", "plannedCycles", "ending", "pauses", "skips", "xruns", "deviceLosses",
        "lostFrames", "heard", "maxDeviationMs", "jitterMs", "deviceClockPPM", "resumedFrom"
    ]
    /// Columns a file may lack (one written before they existed): their values are absent.
    static let optionalColumns: Set<String> = ["resumedFrom"]

    public static func text(of records: [SessionRecord]) -> String {
        var lines = [columns.joined(separator: ",")]
        for record in records {
            let fields: [String] = [
                record.id, record.pattern, record.parameters, record.source.rawValue, timestamp(record.startedAt),
                record.endedAt.map(timestamp) ?? "", "\(record.utcOffsetSeconds)", record.day,
                "\(record.plannedSeconds)", "\(record.playedSeconds)", "\(record.phases)", "\(record.cycles)",
                "\(record.plannedCycles)", record.ending.rawValue, "\(record.pauses)", "\(record.skips)",
                "\(record.xruns)", "\(record.deviceLosses)", "\(record.lostFrames)", record.heard ?? "",
                record.maxDeviationMs.map { "\($0)" } ?? "", record.jitterMs.map { "\($0)" } ?? "",
                record.deviceClockPPM.map { "\($0)" } ?? "", record.resumedFrom ?? ""
            ]
            lines.append(fields.map(quoted).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The records in `text`; `file` names it in errors.
    public static func records(in text: String, file: String) throws(HistoryCSVError) -> [SessionRecord] {
        let rows = try split(text, file: file)
        guard let header = rows.first else {
            throw HistoryCSVError(
                file: file, line: 1, problem: "is empty", allowed: "a header row: " + columns.joined(separator: ","))
        }
        let missing = columns.filter { !header.fields.contains($0) && !optionalColumns.contains($0) }
        let unknown = header.fields.filter { !columns.contains($0) }
        guard missing.isEmpty, unknown.isEmpty else {
            let problem = missing.isEmpty ? "unknown column \(unknown[0])" : "no column \(missing[0])"
            var error = HistoryCSVError(
                file: file, line: header.line, problem: problem,
                allowed: "the columns " + columns.joined(separator: ","))
            error.expectedColumns = columns
            throw error
        }
        let index = Dictionary(uniqueKeysWithValues: header.fields.enumerated().map { ($1, $0) })
        var records: [SessionRecord] = []
        for row in rows.dropFirst() where row.fields != [""] {
            guard row.fields.count == header.fields.count else {
                throw HistoryCSVError(
                    file: file, line: row.line, problem: "has \(row.fields.count) fields",
                    allowed: "\(header.fields.count), one per column")
            }
            records.append(try record(row, index: index, file: file))
        }
        return records
    }

    private static func record(_ row: Row, index: [String: Int], file: String) throws(HistoryCSVError) -> SessionRecord
    {
        func field(_ column: String) -> String { index[column].map { row.fields[$0] } ?? "" }
        func bad(_ column: String, _ problem: String, _ allowed: String) -> HistoryCSVError {
            HistoryCSVError(
                file: file, line: row.line, column: column, value: field(column), problem: problem, allowed: allowed)
        }
        func text(_ column: String) throws(HistoryCSVError) -> String {
            let value = field(column)
            guard !value.isEmpty else { throw bad(column, "is empty", "a value") }
            return value
        }
        func whole(_ column: String) throws(HistoryCSVError) -> Int {
            guard let value = Int(field(column)) else {
                throw bad(column, "not a whole number", "a whole number such as 3")
            }
            return value
        }
        func number(_ column: String) throws(HistoryCSVError) -> Double {
            guard let value = Double(field(column)), value.isFinite else {
                throw bad(column, "not a number", "a number such as 1200.5")
            }
            return value
        }
        func optionalNumber(_ column: String) throws(HistoryCSVError) -> Double? {
            field(column).isEmpty ? nil : try number(column)
        }
        func time(_ column: String) throws(HistoryCSVError) -> Date {
            guard let value = date(field(column)) else {
                throw bad(column, "not a time", "UTC in ISO 8601, such as 2026-11-23T07:00:00.000Z")
            }
            return value
        }
        func choice<T: RawRepresentable & CaseIterable>(_ column: String, _: T.Type) throws(HistoryCSVError) -> T
        where T.RawValue == String {
            guard let value = T(rawValue: field(column)) else {
                throw bad(column, "unknown", "one of " + T.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return value
        }
        let day = try text("day")
        guard day.count == 10, date(day + "T00:00:00.000Z") != nil else { throw bad("day", "not a date", "YYYY-MM-DD") }
        return SessionRecord(
            id: try text("id"), pattern: try text("pattern"), parameters: field("parameters"),
            source: try choice("source", SessionRecord.Source.self), startedAt: try time("startedAt"),
            endedAt: field("endedAt").isEmpty ? nil : try time("endedAt"),
            utcOffsetSeconds: try whole("utcOffsetSeconds"),
            day: day, plannedSeconds: try number("plannedSeconds"), playedSeconds: try number("playedSeconds"),
            phases: try whole("phases"), cycles: try whole("cycles"), plannedCycles: try whole("plannedCycles"),
            ending: try choice("ending", SessionRecord.Ending.self), pauses: try whole("pauses"),
            skips: try whole("skips"),
            xruns: try whole("xruns"), deviceLosses: try whole("deviceLosses"),
            lostFrames: Int64(try whole("lostFrames")),
            heard: field("heard").isEmpty ? nil : field("heard"), maxDeviationMs: try optionalNumber("maxDeviationMs"),
            jitterMs: try optionalNumber("jitterMs"), deviceClockPPM: try optionalNumber("deviceClockPPM"),
            resumedFrom: field("resumedFrom").isEmpty ? nil : field("resumedFrom"))
    }

    // MARK: Fields

    private struct Row {
        var line: Int
        var fields: [String]
    }

    /// Rows with the line each begins on; quoted fields may hold commas, quotes and line breaks.
    private static func split(_ text: String, file: String) throws(HistoryCSVError) -> [Row] {
        var rows: [Row] = []
        var fields: [String] = []
        var field = ""
        var line = 1
        var rowLine = 1
        var quoting = false
        var characters = Array(text).makeIterator()
        var pending: Character? = characters.next()
        while let character = pending {
            pending = characters.next()
            if quoting {
                if character == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = characters.next()
                    } else {
                        quoting = false
                    }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where field.isEmpty: quoting = true
            case ",":
                fields.append(field)
                field = ""
            case "\n", "\r\n":
                fields.append(field)
                rows.append(Row(line: rowLine, fields: fields))
                fields = []
                field = ""
                line += 1
                rowLine = line
            default: field.append(character)
            }
        }
        guard !quoting else {
            throw HistoryCSVError(
                file: file, line: rowLine, problem: "a quoted field is never closed", allowed: "a closing \"")
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(field)
            rows.append(Row(line: rowLine, fields: fields))
        }
        return rows
    }

    private static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return field }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }

    /// UTC in ISO 8601 to the millisecond, as the CSV and the JSON write times.
    /// (Worked out from whole milliseconds: Foundation's formatter truncates, and a time read
    /// back as .2309999 would print as .230.)
    public static func timestamp(_ date: Date) -> String {
        let milliseconds = date.millisecondsSince1970
        let seconds = milliseconds.floorDivided(by: 1000)
        return civilText(seconds: seconds, dateTimeSeparator: "T", withSeconds: true) + "."
            + Figure.zeroPadded(Int(milliseconds - seconds * 1000), 3) + "Z"
    }

    static func date(_ text: String) -> Date? {
        (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))).map(
            Date.roundedToMilliseconds)
    }
}

/// A CSV file gong cannot read back: where, which column, the value, what is wrong and what is
/// allowed.
public struct HistoryCSVError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: String?
    public var value: String?
    public var problem: String
    public var allowed: String
    /// Set when the header is what is wrong: the columns a history CSV has (what the history
    /// writes). The command line names the command that writes them.
    public var expectedColumns: [String]?

    public init(file: String, line: Int, column: String? = nil, value: String? = nil, problem: String, allowed: String)
    {
        self.file = file
        self.line = line
        self.column = column
        self.value = value
        self.problem = problem
        self.allowed = allowed
    }

    public var description: String {
        var text = "\(file):\(line): "
        if let column { text += column + (value.map { " = \"\($0)\"" } ?? "") + ": " }
        return text + problem + "; use " + allowed
    }
}

extension Date {
    /// To the nearest millisecond: how the history keeps times.
    var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        self >= 0 ? self / divisor : (self - divisor + 1) / divisor
    }
}

extension JSONEncoder {
    /// Sorted keys, and times as `HistoryCSV.timestamp` writes them: the history's `--json` and
    /// the snapshots.
    static func millisecondTimes() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(HistoryCSV.timestamp(date))
        }
        return encoder
    }
}

extension JSONDecoder {
    /// Reads what `JSONEncoder.millisecondTimes()` writes.
    static func millisecondTimes() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = HistoryCSV.date(text) else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: decoder.codingPath, debugDescription: "not a time: \(text)"))
            }
            return date
        }
        return decoder
    }
}

/// A moment as the clock `utcOffsetSeconds` from UTC showed it: `2026-11-23 07:00`.
func localClockText(_ date: Date, utcOffsetSeconds: Int) -> String {
    civilText(
        seconds: Int64((date.timeIntervalSince1970 + Double(utcOffsetSeconds)).rounded(.down)), dateTimeSeparator: " ",
        withSeconds: false)
}

/// `2026-11-23 07:00` (or with a `T`, or to the second) of seconds since 1970-01-01 on a clock
/// that runs on UTC (a local time shifted by its offset is one).
func civilText(seconds: Int64, dateTimeSeparator: String, withSeconds: Bool) -> String {
    let day = seconds.floorDivided(by: 86400)
    let second = Int(seconds - day * 86400)
    let (year, month, dayOfMonth) = CivilDate.from(day: Int(day))
    return "\(Figure.zeroPadded(year, 4))-\(Figure.zeroPadded(month, 2))-\(Figure.zeroPadded(dayOfMonth, 2))"
        + "\(dateTimeSeparator)\(Figure.zeroPadded(second / 3600, 2)):\(Figure.zeroPadded(second % 3600 / 60, 2))"
        + (withSeconds ? ":" + Figure.zeroPadded(second % 60, 2) : "")
}
