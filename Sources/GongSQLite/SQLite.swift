import CSQLite

/// gong's own small SQLite wrapper, over the system's libsqlite3: a connection, prepared
/// statements with typed binding and reading, transactions, and the schema's version.
///
/// Nothing here starts a thread or a timer: a process that keeps a connection open sleeps until
/// it uses it (`gong bells` waits for hours between bells). A connection is used by one thread
/// at a time; its owner serializes access.
package final class SQLiteConnection {
    private let handle: OpaquePointer

    /// Opens (creating when missing) the database at `path`. A write waits up to
    /// `busyTimeoutMs` for another connection's, then fails with SQLITE_BUSY.
    package init(path: String, busyTimeoutMs: Int32) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else { throw SQLiteError(code: code, message: String(cString: sqlite3_errstr(code))) }
        guard code == SQLITE_OK else {
            let error = SQLiteError(opened, code)
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, busyTimeoutMs)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs statements that take no arguments and return no rows (`;`-separated).
    package func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(handle, code) }
    }

    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, 0, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw SQLiteError(handle, code) }
        return SQLiteStatement(statement, connection: handle)
    }

    /// Runs one statement with `arguments` bound in order, stepping through any rows it returns.
    package func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// The rows of a query, each read by `row`.
    package func rows<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ row: (SQLiteStatement) throws(SQLiteError) -> T
    ) throws(SQLiteError) -> [T] {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        var found: [T] = []
        while try statement.step() { found.append(try row(statement)) }
        return found
    }

    package enum TransactionKind: String {
        /// Takes the write lock at its first write: for reads.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, waiting for it (the busy timeout) before anything is
        /// read, so a writer never fails half-way for a lock another writer holds.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ kind: TransactionKind, _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN \(kind.rawValue)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // Fails only when SQLite already rolled back (after some I/O errors): nothing left to undo.
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The schema's version, kept in the file's header (`PRAGMA user_version`).
    package func userVersion() throws(SQLiteError) -> Int {
        try rows("PRAGMA user_version") { row in row.int(0) }.first ?? 0
    }

    package func setUserVersion(_ version: Int) throws(SQLiteError) {
        try execute("PRAGMA user_version = \(version)")
    }

    package func tableExists(_ name: String) throws(SQLiteError) -> Bool {
        try !rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) { _ in () }
            .isEmpty
    }

    /// Write-ahead logging, so readers never wait for a writer nor a writer for readers, with
    /// the sync at checkpoints only (a power loss may lose the last writes, never the file).
    package func useWriteAheadLog() throws(SQLiteError) {
        let mode = try rows("PRAGMA journal_mode = WAL") { row in row.text(0) }.first
        guard mode == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal mode \(mode ?? "unknown") instead of wal")
        }
        try execute("PRAGMA synchronous = NORMAL")
    }
}

/// A value bound to a statement.
package enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// A prepared statement: bind, step, read the current row's columns.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer

    fileprivate init(_ handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to the parameters in order, from the first.
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code =
                switch value {
                case .null: sqlite3_bind_null(handle, index)
                case .integer(let integer): sqlite3_bind_int64(handle, index, integer)
                case .real(let real): sqlite3_bind_double(handle, index, real)
                case .text(let text): sqlite3_bind_text(handle, index, text, -1, transientDestructor)
                }
            guard code == SQLITE_OK else { throw SQLiteError(connection, code) }
        }
    }

    /// Moves to the next row: true when there is one, false when the statement is done.
    package func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(connection, code)
        }
    }

    /// The current row's columns by position, from 0.
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    package func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    package func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    package func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    package func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    package func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    package func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}

/// SQLite copies a bound text before the call returns (SQLITE_TRANSIENT).
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// What SQLite said: its result code and its message.
package struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code (SQLITE_BUSY, SQLITE_NOTADB, …), extended codes folded in.
    package var code: Int32
    package var message: String

    package init(code: Int32, message: String) {
        self.code = code & 0xff
        self.message = message
    }

    fileprivate init(_ connection: OpaquePointer, _ code: Int32) {
        self.init(code: code, message: String(cString: sqlite3_errmsg(connection)))
    }

    package var description: String { message }

    /// Another connection held the lock past the busy timeout.
    package var isLocked: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }

    /// The file or its directory cannot be opened, written or grown.
    package var isUnwritable: Bool {
        [SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_FULL, SQLITE_IOERR].contains(code)
    }

    /// A stored value of a kind the reader does not take.
    package static func mismatch(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISMATCH, message: message)
    }
}
