import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

/// Where a playing session stands, kept on disk so that it can be resumed after its process
/// died (`kill -9`, a power loss): the pattern as it was played, the position on its clock, its
/// state and its pauses so far. A session that ends removes its snapshot.
public struct SessionSnapshot: Sendable, Equatable, Codable {
    /// The format this gong writes. A newer one is not read (it is moved aside); an older one
    /// is migrated when read (none exists yet: 1 is the first).
    public static let currentFormat = 1

    public var format: Int
    public var writtenAt: Date
    /// The session's record in the history.
    public var recordID: String
    /// The pattern as played, overrides applied.
    public var pattern: Pattern
    /// What was asked of the pattern, in the caller's words.
    public var parameters: String
    /// Where the session stood on its clock, in seconds, from the pattern's start.
    public var positionSeconds: Double
    public var state: State
    public var pauses: Int
    /// The process playing it; a snapshot whose process is gone is an unfinished session.
    public var processID: Int32
    /// The device it played on, as asked for.
    public var device: String

    /// When it was written, on this machine's clock now: `2026-11-23 07:12`.
    public var localWrittenText: String {
        localClockText(writtenAt, utcOffsetSeconds: LocalZone.current.secondsFromGMT(for: writtenAt))
    }

    public enum State: String, Sendable, Codable {
        case playing, paused
    }

    public init(
        recordID: String, pattern: Pattern, parameters: String, positionSeconds: Double, state: State, pauses: Int,
        processID: Int32 = getpid(), device: String, writtenAt: Date = Date()
    ) {
        format = Self.currentFormat
        self.writtenAt = writtenAt
        self.recordID = recordID
        self.pattern = pattern
        self.parameters = parameters
        self.positionSeconds = positionSeconds
        self.state = state
        self.pauses = pauses
        self.processID = processID
        self.device = device
    }
}

/// The snapshots under `$XDG_STATE_HOME/gong/sessions/`, one file per session named by its
/// record's id. Each is written whole or not at all: a temporary file, synced, renamed over the
/// old one, and the directory synced, so a power loss leaves the old snapshot or the new one.
public struct SnapshotStore: Sendable {
    public let directory: String

    public init(directory: String = GongDirectories().state + "/sessions") {
        self.directory = directory
    }

    /// One that could not be read, and where it was moved.
    public struct SetAside: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var movedTo: String
        public var reason: String

        public var description: String {
            "snapshot \(path) \(reason); moved aside to \(movedTo) (kept, not deleted)"
        }
    }

    public func path(for recordID: String) -> String { directory + "/" + recordID + ".json" }

    public func write(_ snapshot: SessionSnapshot) throws(SnapshotError) {
        let data: Data
        do { data = try JSONEncoder.millisecondTimes().encode(snapshot) } catch {
            throw SnapshotError(path: directory, operation: "encode", code: EINVAL)
        }
        try AtomicFile.write(data, to: path(for: snapshot.recordID), directory: directory)
    }

    public func remove(recordID: String) {
        unlink(path(for: recordID))
    }

    /// The snapshots whose process is gone, newest first, and those that could not be read,
    /// which are moved aside (`NAME.json.unreadable-TIME`), never deleted.
    public func unfinished() -> (snapshots: [SessionSnapshot], setAside: [SetAside]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return ([], []) }
        var found: [SessionSnapshot] = []
        var setAside: [SetAside] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            let path = directory + "/" + name
            switch Self.read(path) {
            case .success(let snapshot):
                if !SessionRecord.isRunning(snapshot.processID) { found.append(snapshot) }
            case .failure(let reason):
                let movedTo =
                    path + ".unreadable-" + HistoryCSV.timestamp(Date()).replacing(":", with: "")
                if rename(path, movedTo) == 0 {
                    setAside.append(SetAside(path: path, movedTo: movedTo, reason: reason.text))
                }
            }
        }
        return (found.sorted { $0.writtenAt > $1.writtenAt }, setAside)
    }

    struct Unreadable: Error {
        var text: String
    }

    /// A snapshot read and brought to the current format.
    static func read(_ path: String) -> Result<SessionSnapshot, Unreadable> {
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(Unreadable(text: "cannot be read"))
        }
        guard let object = AnyJSON(parsing: data)?.object else {
            return .failure(Unreadable(text: "is not a snapshot (truncated or damaged)"))
        }
        guard let format = object["format"]?.int else { return .failure(Unreadable(text: "has no format version")) }
        guard format <= SessionSnapshot.currentFormat else {
            return .failure(
                Unreadable(text: "is of format \(format), newer than this gong's \(SessionSnapshot.currentFormat)"))
        }
        // Older formats are migrated here, one step at a time, as they come to exist.
        guard let snapshot = try? JSONDecoder.millisecondTimes().decode(SessionSnapshot.self, from: data) else {
            return .failure(Unreadable(text: "is not a snapshot of format \(format) (a field is missing or wrong)"))
        }
        do {
            try snapshot.pattern.validate()
        } catch {
            return .failure(Unreadable(text: "holds a pattern gong cannot play (\(error))"))
        }
        guard snapshot.positionSeconds.isFinite, snapshot.positionSeconds >= 0 else {
            return .failure(Unreadable(text: "holds no valid position"))
        }
        return .success(snapshot)
    }
}

/// A snapshot could not be written.
public struct SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var code: Int32

    public var description: String {
        "snapshot \(path) cannot be written (\(operation): \(String(cString: strerror(code))))"
    }
}

/// Writing a file whole or not at all.
enum AtomicFile {
    /// Temporary file beside it, written and synced; renamed over it. The directory is made only
    /// when it is missing, and synced only when the name is new, so that the rename itself
    /// survives a power loss: a rename over an existing file needs no sync of its own, since
    /// whichever of the two files the name holds after a power loss was complete on disk (the
    /// new one was synced before the rename). A session rewrites its snapshot every few seconds;
    /// this keeps each rewrite to one sync.
    static func write(_ data: Data, to path: String, directory: String) throws(SnapshotError) {
        func failure(_ operation: String) -> SnapshotError {
            SnapshotError(path: path, operation: operation, code: errno)
        }
        let temporary = path + ".tmp-\(getpid())"
        var descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if descriptor < 0 && errno == ENOENT {
            guard
                (try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)) != nil
            else {
                throw SnapshotError(path: path, operation: "mkdir", code: EACCES)
            }
            descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        }
        guard descriptor >= 0 else { throw failure("open") }
        let written = data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 { if errno == EINTR { continue }; return false }
                offset += count
            }
            return true
        }
        guard written, fsync(descriptor) == 0 else {
            let error = failure("write")
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        let replacing = access(path, F_OK) == 0
        guard rename(temporary, path) == 0 else {
            let error = failure("rename")
            unlink(temporary)
            throw error
        }
        guard !replacing else { return }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}
