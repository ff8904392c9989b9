import FoundationEssentials
import GRDB
import Glibc
import GongKit

/// The history of sittings, in SQLite under `$XDG_DATA_HOME/gong/history.sqlite`.
///
/// WAL mode, so several gong processes record at once and a reader never waits for a writer;
/// a writer waits up to `busySeconds` for another. The schema is migrated from its first version
/// on. A file that is not a database, one written by a newer gong, or one locked past the wait
/// is an error saying so: the file is never overwritten, truncated or deleted.
public final class SessionHistory: Sendable {
    public let path: String
    private let pool: DatabasePool

    /// How long a write waits for another process's.
    public static let busySeconds: Double = 5

    /// The history file for these directories.
    public static func defaultPath(_ directories: GongDirectories = GongDirectories()) -> String {
        directories.data + "/history.sqlite"
    }

    /// Opens (creating it and its directory when missing) and migrates the history.
    public init(path: String) throws(HistoryError) {
        self.path = path
        let directory = parentDirectory(of: path)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw HistoryError(path: path, kind: .cannotCreate, detail: "cannot create \(directory)")
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(Self.busySeconds)
        configuration.label = "gong history"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            let migrator = Self.migrator
            try pool.read { db in
                if try migrator.hasBeenSuperseded(db) {
                    throw HistoryError(path: path, kind: .newerVersion, detail: nil)
                }
            }
            try migrator.migrate(pool)
        } catch let error as HistoryError {
            throw error
        } catch {
            throw HistoryError(path: path, error)
        }
    }

    /// Every version of the schema, in order. A new version is a new migration appended here;
    /// a published one is never changed.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: sittings") { db in
            try db.create(table: "sitting") { table in
                table.primaryKey("id", .text)
                table.column("pattern", .text).notNull()
                table.column("parameters", .text).notNull()
                table.column("source", .text).notNull()
                // Milliseconds since 1970 (see databaseDateEncodingStrategy).
                table.column("startedAt", .integer).notNull().indexed()
                table.column("endedAt", .integer)
                table.column("utcOffsetSeconds", .integer).notNull()
                table.column("day", .text).notNull()
                table.column("plannedSeconds", .double).notNull()
                table.column("playedSeconds", .double).notNull()
                table.column("phases", .integer).notNull()
                table.column("cycles", .integer).notNull()
                table.column("plannedCycles", .integer).notNull()
                table.column("ending", .text).notNull()
                table.column("pauses", .integer).notNull()
                table.column("skips", .integer).notNull()
                table.column("xruns", .integer).notNull()
                table.column("deviceLosses", .integer).notNull()
                table.column("lostFrames", .integer).notNull()
                table.column("heard", .text)
                table.column("maxDeviationMs", .double)
                table.column("jitterMs", .double)
                table.column("deviceClockPPM", .double)
                table.column("processID", .integer)
            }
        }
        migrator.registerMigration("v2: resumed sessions") { db in
            try db.alter(table: "sitting") { table in table.add(column: "resumedFrom", .text) }
        }
        migrator.registerMigration("v3: bells") { db in
            try db.create(table: "bell") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("due", .integer).notNull().indexed()
                table.column("day", .text).notNull().indexed()
                table.column("time", .text).notNull()
                table.column("number", .integer).notNull()
                table.column("outcome", .text).notNull()
                table.column("reason", .text)
                table.column("offMs", .double)
            }
        }
        return migrator
    }

    /// Adds the record, or replaces the one with its id.
    public func save(_ record: SessionRecord) throws(HistoryError) {
        try write { db in try record.save(db) }
    }

    /// Adds or replaces each (by id) in one transaction: all or none.
    public func save(_ records: [SessionRecord]) throws(HistoryError) {
        try write { db in for record in records { try record.save(db) } }
    }

    /// The record with this id.
    public func record(id: String) throws(HistoryError) -> SessionRecord? {
        try read { db in try SessionRecord.fetchOne(db, key: id) }
    }

    /// Newest first: those begun at or after `since`, at most `limit`. A record still `playing`
    /// whose process is gone comes back `interrupted`.
    public func records(since: Date? = nil, limit: Int? = nil) throws(HistoryError) -> [SessionRecord] {
        let found = try read { db in
            var request = SessionRecord.order(Column("startedAt").desc, Column("id"))
            if let since { request = request.filter(Column("startedAt") >= since.millisecondsSince1970) }
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
        return found.map(\.asSeenNow)
    }

    /// Keeps a bell of `gong bells`, rung or skipped.
    public func save(bell: BellRecord) throws(HistoryError) {
        try write { db in try bell.insert(db) }
    }

    /// The bells of a local calendar date (`2026-11-26`), in the order they were due.
    public func bells(onDay day: String) throws(HistoryError) -> [BellRecord] {
        try read { db in try BellRecord.filter(Column("day") == day).order(Column("due")).fetchAll(db) }
    }

    private func write(_ body: @escaping @Sendable (Database) throws -> Void) throws(HistoryError) {
        do { try pool.write(body) } catch { throw HistoryError(path: path, error) }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) throws(HistoryError) -> T {
        do { return try pool.read(body) } catch { throw HistoryError(path: path, error) }
    }
}

extension SessionRecord: FetchableRecord, PersistableRecord {
    public static var databaseTableName: String { "sitting" }
    /// Whole milliseconds since 1970, rounded: exact both ways, and sorted as numbers.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { $0.millisecondsSince1970 }
    }
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .custom { value in Int64.fromDatabaseValue(value).map { Date(timeIntervalSince1970: Double($0) / 1000) } }
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

    init(path: String, _ error: any Error) {
        self.path = path
        guard let error = error as? DatabaseError else {
            kind = .damaged
            detail = "\(error)"
            return
        }
        detail = error.message
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED: kind = .locked
        case .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_FULL, .SQLITE_IOERR: kind = .cannotCreate
        default: kind = .damaged
        }
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
