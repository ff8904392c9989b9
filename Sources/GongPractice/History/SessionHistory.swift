import FoundationEssentials
import Glibc
import GongKit
import GongSQLite
import Synchronization

/// The history of sittings, in SQLite under `$XDG_DATA_HOME/gong/history.sqlite`.
///
/// WAL mode, so several gong processes record at once and a reader never waits for a writer;
/// a writer waits up to `busySeconds` for another. The schema is migrated from its first version
/// on. A file that is not a database, one written by a newer gong, or one locked past the wait
/// is an error saying so: the file is never overwritten, truncated or deleted.
///
/// Two connections, each used by one thread at a time: one writes, the other reads, so a read in
/// this process never waits behind a write that waits for another process's lock.
public final class SessionHistory: Sendable {
    public let path: String
    private let writer: Mutex<SQLiteConnection>
    private let reader: Mutex<SQLiteConnection>

    /// How long a write waits for another process's.
    public static let busySeconds: Double = 5

    /// The history file for these directories.
    public static func defaultPath(_ directories: GongDirectories = GongDirectories()) -> String {
        directories.data + "/history.sqlite"
    }

    /// Opens (creating it and its directory when missing) and migrates the history.
    public init(path: String) throws(HistoryError) {
        self.path = path
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw HistoryError(path: path, kind: .cannotCreate, detail: "cannot create \(directory)")
        }
        let writing: SQLiteConnection
        let reading: SQLiteConnection
        do throws(SQLiteError) {
            let timeout = Int32(Self.busySeconds * 1000)
            writing = try SQLiteConnection(path: path, busyTimeoutMs: timeout)
            try writing.useWriteAheadLog()
            reading = try SQLiteConnection(path: path, busyTimeoutMs: timeout)
        } catch {
            throw HistoryError(path: path, error)
        }
        try Self.migrate(writing, path: path)
        writer = Mutex(writing)
        reader = Mutex(reading)
    }

    // MARK: The schema

    /// Every version of the schema, in order: version N is the file after the first N. A new
    /// version is a new migration appended here; a published one is never changed. The names
    /// are those the histories of gong's GRDB days list in their `grdb_migrations` table.
    static let migrations: [(name: String, sql: String)] = [
        (
            "v1: sittings",
            """
            CREATE TABLE "sitting" ("id" TEXT PRIMARY KEY NOT NULL, "pattern" TEXT NOT NULL, \
            "parameters" TEXT NOT NULL, "source" TEXT NOT NULL, "startedAt" INTEGER NOT NULL, "endedAt" INTEGER, \
            "utcOffsetSeconds" INTEGER NOT NULL, "day" TEXT NOT NULL, "plannedSeconds" DOUBLE NOT NULL, \
            "playedSeconds" DOUBLE NOT NULL, "phases" INTEGER NOT NULL, "cycles" INTEGER NOT NULL, \
            "plannedCycles" INTEGER NOT NULL, "ending" TEXT NOT NULL, "pauses" INTEGER NOT NULL, \
            "skips" INTEGER NOT NULL, "xruns" INTEGER NOT NULL, "deviceLosses" INTEGER NOT NULL, \
            "lostFrames" INTEGER NOT NULL, "heard" TEXT, "maxDeviationMs" DOUBLE, "jitterMs" DOUBLE, \
            "deviceClockPPM" DOUBLE, "processID" INTEGER);
            CREATE INDEX "sitting_on_startedAt" ON "sitting"("startedAt");
            """
        ),
        ("v2: resumed sessions", #"ALTER TABLE "sitting" ADD COLUMN "resumedFrom" TEXT;"#),
        (
            "v3: bells",
            """
            CREATE TABLE "bell" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "due" INTEGER NOT NULL, \
            "day" TEXT NOT NULL, "time" TEXT NOT NULL, "number" INTEGER NOT NULL, "outcome" TEXT NOT NULL, \
            "reason" TEXT, "offMs" DOUBLE);
            CREATE INDEX "bell_on_due" ON "bell"("due");
            CREATE INDEX "bell_on_day" ON "bell"("day");
            """
        )
    ]

    /// Brings the file to the newest version, in one transaction; a file of a newer gong is left
    /// as it is. An up-to-date file is only read, so opening it never waits for a writer.
    static func migrate(_ connection: SQLiteConnection, path: String) throws(HistoryError) {
        let known: Bool
        do throws(SQLiteError) {
            known = try bringUpToDate(connection)
        } catch {
            throw HistoryError(path: path, error)
        }
        guard known else { throw HistoryError(path: path, kind: .newerVersion, detail: nil) }
    }

    /// False, having changed nothing, for a file of a newer gong.
    private static func bringUpToDate(_ connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        guard try version(connection) != nil else { return false }
        // Up to date only once the version is the file's own: a history of the GRDB days gets
        // its user_version at its first opening.
        if try connection.userVersion() == migrations.count { return true }
        return try connection.transaction(.immediate) { () throws(SQLiteError) -> Bool in
            // Read again under the write lock: another gong may have migrated meanwhile.
            guard let applied = try version(connection) else { return false }
            let keepsGRDBList = try connection.tableExists("grdb_migrations")
            for migration in migrations[applied...] {
                try connection.execute(migration.sql)
                // A history of the GRDB days keeps its list up to date, so the gong of those days
                // can still open it, and finds any later version too new for it.
                if keepsGRDBList {
                    try connection.run("INSERT INTO grdb_migrations VALUES (?)", [.text(migration.name)])
                }
            }
            try connection.setUserVersion(migrations.count)
            return true
        }
    }

    /// The file's version: `user_version`, or for a history of the GRDB days (version 0 and a
    /// `grdb_migrations` table) the migrations that table lists; nil when newer than this gong.
    private static func version(_ connection: SQLiteConnection) throws(SQLiteError) -> Int? {
        var version = try connection.userVersion()
        if version == 0, try connection.tableExists("grdb_migrations") {
            let names = try connection.rows("SELECT identifier FROM grdb_migrations") { row in row.text(0) }
            guard names.allSatisfy({ name in migrations.contains { $0.name == name } }) else { return nil }
            version = migrations.prefix { migration in names.contains(migration.name) }.count
        }
        return version <= migrations.count ? version : nil
    }

    // MARK: Sittings

    /// Adds the record, or replaces the one with its id.
    public func save(_ record: SessionRecord) throws(HistoryError) {
        try save([record])
    }

    /// Adds or replaces each (by id) in one transaction: all or none.
    public func save(_ records: [SessionRecord]) throws(HistoryError) {
        try write { connection throws(SQLiteError) in
            for record in records { try connection.run(SessionRecord.upsert, record.databaseValues) }
        }
    }

    /// The record with this id.
    public func record(id: String) throws(HistoryError) -> SessionRecord? {
        try read { connection throws(SQLiteError) in
            try connection.rows(SessionRecord.select + " WHERE id = ?", [.text(id)], SessionRecord.init(row:)).first
        }
    }

    /// Newest first: those begun at or after `since`, at most `limit`. A record still `playing`
    /// whose process is gone comes back `interrupted`.
    public func records(since: Date? = nil, limit: Int? = nil) throws(HistoryError) -> [SessionRecord] {
        let found = try read { connection throws(SQLiteError) in
            var sql = SessionRecord.select
            var arguments: [SQLiteValue] = []
            if let since {
                sql += " WHERE startedAt >= ?"
                arguments.append(.integer(since.millisecondsSince1970))
            }
            sql += " ORDER BY startedAt DESC, id"
            if let limit {
                sql += " LIMIT ?"
                arguments.append(.integer(Int64(limit)))
            }
            return try connection.rows(sql, arguments, SessionRecord.init(row:))
        }
        return found.map(\.asSeenNow)
    }

    // MARK: Bells

    /// Keeps a bell of `gong bells`, rung or skipped.
    public func save(bell: BellRecord) throws(HistoryError) {
        try write { connection throws(SQLiteError) in
            try connection.run(
                "INSERT INTO bell (due, day, time, number, outcome, reason, offMs) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    .integer(bell.due), .text(bell.day), .text(bell.time), .integer(Int64(bell.number)),
                    .text(bell.outcome), bell.reason.map(SQLiteValue.text) ?? .null,
                    bell.offMs.map(SQLiteValue.real) ?? .null
                ])
        }
    }

    /// The bells of a local calendar date (`2026-11-26`), in the order they were due.
    public func bells(onDay day: String) throws(HistoryError) -> [BellRecord] {
        try read { connection throws(SQLiteError) in
            try connection.rows(
                "SELECT due, day, time, number, outcome, reason, offMs FROM bell WHERE day = ? ORDER BY due, id",
                [.text(day)]
            ) { row in
                BellRecord(
                    due: row.int64(0), day: row.text(1), time: row.text(2), number: row.int(3), outcome: row.text(4),
                    reason: row.optionalText(5), offMs: row.optionalDouble(6))
            }
        }
    }

    // MARK: Access

    /// Runs `body` in a write transaction: all of it or none.
    private func write(_ body: @Sendable (SQLiteConnection) throws(SQLiteError) -> Void) throws(HistoryError) {
        do throws(SQLiteError) {
            try writer.withLock { connection throws(SQLiteError) in
                try connection.transaction(.immediate) { () throws(SQLiteError) in try body(connection) }
            }
        } catch {
            throw HistoryError(path: path, error)
        }
    }

    /// Runs `body` in a read transaction: one consistent view of the file.
    private func read<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws(SQLiteError) -> T) throws(HistoryError)
        -> T
    {
        do throws(SQLiteError) {
            return try reader.withLock { connection throws(SQLiteError) -> T in
                try connection.transaction(.deferred) { () throws(SQLiteError) in try body(connection) }
            }
        } catch {
            throw HistoryError(path: path, error)
        }
    }
}

extension SessionRecord {
    /// The columns of the `sitting` table, `id` first, in the order `databaseValues` binds them.
    static let columns = [
        "id", "pattern", "parameters", "source", "startedAt", "endedAt", "utcOffsetSeconds", "day", "plannedSeconds",
        "playedSeconds", "phases", "cycles", "plannedCycles", "ending", "pauses", "skips", "xruns", "deviceLosses",
        "lostFrames", "heard", "maxDeviationMs", "jitterMs", "deviceClockPPM", "processID", "resumedFrom"
    ]
    static let select = "SELECT " + quotedColumns.joined(separator: ", ") + " FROM sitting"
    /// Adds a record, or replaces every column of the one with its id.
    static let upsert = """
        INSERT INTO sitting (\(quotedColumns.joined(separator: ", "))) \
        VALUES (\(quotedColumns.map { _ in "?" }.joined(separator: ", "))) \
        ON CONFLICT(id) DO UPDATE SET \(quotedColumns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        """
    private static let quotedColumns = columns.map { "\"\($0)\"" }

    /// Times as whole milliseconds since 1970, rounded: exact both ways, and sorted as numbers.
    var databaseValues: [SQLiteValue] {
        func text(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
        func real(_ value: Double?) -> SQLiteValue { value.map(SQLiteValue.real) ?? .null }
        func integer(_ value: Int64?) -> SQLiteValue { value.map(SQLiteValue.integer) ?? .null }
        return [
            .text(id), .text(pattern), .text(parameters), .text(source.rawValue),
            .integer(startedAt.millisecondsSince1970), integer(endedAt?.millisecondsSince1970),
            .integer(Int64(utcOffsetSeconds)), .text(day), .real(plannedSeconds), .real(playedSeconds),
            .integer(Int64(phases)), .integer(Int64(cycles)), .integer(Int64(plannedCycles)), .text(ending.rawValue),
            .integer(Int64(pauses)), .integer(Int64(skips)), .integer(Int64(xruns)), .integer(Int64(deviceLosses)),
            .integer(lostFrames), text(heard), real(maxDeviationMs), real(jitterMs), real(deviceClockPPM),
            integer(processID.map(Int64.init)), text(resumedFrom)
        ]
    }

    /// A row of `select`. A source or an ending this gong does not know is an error naming it:
    /// the history reads as damaged rather than wrong.
    init(row: SQLiteStatement) throws(SQLiteError) {
        let id = row.text(0)
        func known<Value: RawRepresentable<String>>(_ column: Int32, _ name: String) throws(SQLiteError) -> Value {
            let text = row.text(column)
            guard let value = Value(rawValue: text) else {
                throw SQLiteError.mismatch("sitting \(id) has \(name) \"\(text)\"")
            }
            return value
        }
        func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        self.init(
            id: id, pattern: row.text(1), parameters: row.text(2), source: try known(3, "source"),
            startedAt: date(row.int64(4)), endedAt: row.optionalInt64(5).map(date), utcOffsetSeconds: row.int(6),
            day: row.text(7), plannedSeconds: row.double(8), playedSeconds: row.double(9), phases: row.int(10),
            cycles: row.int(11), plannedCycles: row.int(12), ending: try known(13, "ending"), pauses: row.int(14),
            skips: row.int(15), xruns: row.int(16), deviceLosses: row.int(17), lostFrames: row.int64(18),
            heard: row.optionalText(19), maxDeviationMs: row.optionalDouble(20), jitterMs: row.optionalDouble(21),
            deviceClockPPM: row.optionalDouble(22),
            processID: row.optionalInt64(23).map { Int32(truncatingIfNeeded: $0) },
            resumedFrom: row.optionalText(24))
    }

    /// A record still `playing` whose process is gone was interrupted.
    var asSeenNow: SessionRecord {
        guard ending == .playing, let processID, !Self.isRunning(processID) else { return self }
        var seen = self
        seen.ending = .interrupted
        seen.processID = nil
        return seen
    }

    /// Whether a process of this id runs: one that exists and is not a zombie (a killed
    /// process nobody has reaped yet is as dead as it will be).
    static func isRunning(_ processID: Int32) -> Bool {
        guard processID > 0, kill(processID, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8),
            let afterName = stat.ranges(of: ") ").last
        else { return true }
        return stat[afterName.upperBound...].first != "Z"
    }
}

/// Why the history cannot be read or written: one line, and the file left as it was.
public struct HistoryError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not a database, or a damaged one.
        case damaged
        /// Another program holds it past the wait.
        case locked
        /// Written by a newer gong, whose schema this one does not know.
        case newerVersion
        /// The file or its directory cannot be made or written.
        case cannotCreate
    }

    public var path: String
    public var kind: Kind
    /// What SQLite or the system said.
    public var detail: String?

    public init(path: String, kind: Kind, detail: String?) {
        self.path = path
        self.kind = kind
        self.detail = detail
    }

    init(path: String, _ error: SQLiteError) {
        self.path = path
        detail = error.message
        kind = error.isLocked ? .locked : error.isUnwritable ? .cannotCreate : .damaged
    }

    public var description: String {
        let why = detail.map { " (\($0))" } ?? ""
        switch kind {
        case .damaged:
            return "history \(path) is damaged\(why); it is left as it is: move it aside to start a new one"
        case .locked:
            return "history \(path) is locked by another program\(why) after \(Int(SessionHistory.busySeconds)) s"
        case .newerVersion:
            return "history \(path) was written by a newer gong; it is left as it is: use that gong, or move it aside"
        case .cannotCreate:
            return "history \(path) cannot be written\(why)"
        }
    }
}
