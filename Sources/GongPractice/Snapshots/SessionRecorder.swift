import Dispatch
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

/// Keeps a live session safe from its process dying: its record in the history and its snapshot
/// to resume from, written when it starts, again at every pause, resume, skip and phase, and at
/// least every `progressSeconds` while it plays. When it ends, the record is completed from its
/// report and the snapshot removed. A process killed mid-way leaves both: the record with what
/// was played, the snapshot with where to carry on.
///
/// Every state change is written when it happens; the steady rewrites in between only move the
/// position on, and a process that dies between two of them is resumed at most
/// `progressSeconds` early. Each rewrite is a JSON encoding, a synced file and an SQLite commit,
/// so they are kept few, and a session that has not moved (paused) is not rewritten at all.
///
/// All of it happens off the session's threads: the events arrive through a stream of their own,
/// and every write is queued on a serial queue of the recorder's (the history is even opened
/// there), so a slow disk or a locked database never delays the audio or the control loop. Each
/// kind of failure is reported once, through `failed`, and the session plays on.
///
/// It lives in GongPractice, beside the history it writes, and not inside `GongSession`: all it
/// needs is what any subscriber gets (`GongSession.events()` and `status`), so the facade needs
/// no recorder hook, and a program that embeds sessions (libgong.so) links no database.
public final class SessionRecorder: Sendable {
    public static let progressSeconds: Double = 15

    /// What to keep, and where.
    public struct Keeping: Sendable {
        /// Opens the history; nil keeps none. Called on the recorder's queue at the first write.
        public var history: (@Sendable () throws(HistoryError) -> SessionHistory)?
        /// Where snapshots go; nil keeps none.
        public var snapshots: SnapshotStore?

        public init(
            history: (@Sendable () throws(HistoryError) -> SessionHistory)?, snapshots: SnapshotStore?
        ) {
            self.history = history
            self.snapshots = snapshots
        }

        /// Both, in their places under the XDG directories.
        public static var standard: Keeping {
            Keeping(
                history: { () throws(HistoryError) in try SessionHistory(path: SessionHistory.defaultPath()) },
                snapshots: SnapshotStore())
        }
    }

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case history(HistoryError)
        case snapshot(SnapshotError)

        public var description: String {
            switch self {
            case .history(let error): "not recorded in the history: \(error)"
            case .snapshot(let error): "cannot be resumed after a crash: \(error)"
            }
        }
    }

    private let keeping: Keeping
    private let pattern: Pattern
    private let device: String
    /// Where the session began on its pattern's clock (a resumed one: its snapshot's position).
    private let startSeconds: Double
    /// Pauses before a resume, which the snapshot carries on counting.
    private let earlierPauses: Int
    /// The snapshot this session carries on from, removed once this session's is on disk.
    private let resumedID: String?
    private let writes = DispatchQueue(label: "gong session recorder")
    private let state: Locked<State>
    private let failed: @Sendable (Failure) -> Void
    private let written = DispatchGroup()
    /// Signalled once the session's end has been taken in (and its last writes queued).
    private let ended = DispatchSemaphore(value: 0)

    private struct State {
        var record: SessionRecord
        var paused = false
        var started = false
        var finished = false
        var phasesBegun = 0
        var reportedHistory = false
        var reportedSnapshot = false
        var history: SessionHistory?
        /// Opening failed: nothing more is tried.
        var historyUnusable = false
        /// The record as last queued for writing: a steady rewrite that would change nothing is
        /// skipped.
        var lastQueued: SessionRecord?
    }

    /// Subscribes to the session's events: make it before `start()`.
    /// - Parameters:
    ///   - parameters: what was asked of the pattern, in the caller's words.
    ///   - device: the device as asked for, for a resume.
    ///   - resuming: the snapshot this session carries on from, if it does.
    ///   - progressSeconds: how often a playing session is rewritten between its state changes.
    ///   - failed: told once per kind, on a background thread, when something cannot be kept.
    public init(
        of session: GongSession, keeping: Keeping, parameters: String = "", device: String = OutputRoute.automatic,
        resuming: SessionSnapshot? = nil, boundary: DayBoundary = .standard,
        progressSeconds: Double = SessionRecorder.progressSeconds,
        failed: @escaping @Sendable (Failure) -> Void
    ) {
        self.keeping = keeping
        self.failed = failed
        self.device = device
        pattern = session.pattern
        startSeconds = resuming?.positionSeconds ?? 0
        earlierPauses = resuming?.pauses ?? 0
        resumedID = resuming?.recordID
        let now = Date.roundedToMilliseconds()
        let offset = LocalZone.current.secondsFromGMT(for: now)
        let status = session.status
        let record = SessionRecord(
            pattern: session.pattern.name, parameters: parameters, source: .played, startedAt: now,
            utcOffsetSeconds: offset,
            day: DayBoundary.text(ofDay: boundary.dayNumber(localTime: now.addingTimeInterval(Double(offset)))),
            plannedSeconds: status.plannedSeconds, plannedCycles: status.cycles, ending: .playing,
            processID: getpid(), resumedFrom: resuming?.recordID)
        state = Locked(State(record: record))
        let events = session.events()
        // Not on the cooperative pool: a caller that blocks its threads must not keep the end
        // from being taken in (QueueExecutor says why). The tasks hold the executor.
        let executor = QueueExecutor(label: "gong session recorder events")
        Task.detached(executorPreference: executor) { [weak session, self] in
            withExtendedLifetime(executor) {}
            for await event in events {
                self.take(event, status: session?.status)
            }
        }
        Task.detached(executorPreference: executor) { [weak session, self] in
            withExtendedLifetime(executor) {}
            while true {
                try? await Task.sleep(for: .seconds(progressSeconds))
                guard let status = session?.status, self.progress(status) else { return }
            }
        }
    }

    /// Marks the record a resume carries on from as `resumed`, so it no longer reads as
    /// interrupted. (Its snapshot is removed once this session's own is written.)
    public func marksResumed(_ snapshot: SessionSnapshot) {
        writes.async(group: written) { [self] in
            guard let history = try? openedHistory(), var earlier = try? history.record(id: snapshot.recordID) else {
                return
            }
            earlier.ending = .resumed
            earlier.processID = nil
            try? history.save(earlier)
        }
    }

    /// The record as last written or about to be.
    public var record: SessionRecord { state.withLock { $0.record } }

    /// Waits at most `timeoutSeconds` for the session's end to be taken in and every write to
    /// be done; true when they are. (The recorder reads its own copy of the events: the session
    /// may be over for its caller before the recorder has seen `finished`.)
    public func waitForEnd(timeoutSeconds: Double) -> Bool {
        let deadline = DispatchTime.now() + timeoutSeconds
        guard ended.wait(timeout: deadline) == .success else { return false }
        ended.signal()
        return written.wait(timeout: deadline) == .success
    }

    /// The same wait for async code. It blocks a thread of its own, never one of Swift's
    /// cooperative pool: that pool has as many threads as cores (two on the machines gong is
    /// tested on), the recorder's own event task needs one of them for the end to come, and a
    /// caller blocking one while another test blocks the other waits out its timeout for nothing.
    public func waitForEnd(timeoutSeconds: Double) async -> Bool {
        await withCheckedContinuation { continuation in
            DetachedThread.start { continuation.resume(returning: self.waitForEnd(timeoutSeconds: timeoutSeconds)) }
        }
    }

    private func take(_ event: SessionEvent, status: SessionStatus?) {
        let update: Update? = state.withLock { state in
            guard !state.finished else { return nil }
            switch event.kind {
            case .started:
                state.started = true
            case .phaseBegan:
                state.phasesBegun += 1
                state.record.phases = max(0, state.phasesBegun - 1)
            case .paused:
                state.record.pauses += 1
                state.paused = true
            case .resumed: state.paused = false
            case .skipped: state.record.skips += 1
            case .xrun: state.record.xruns += 1
            case .deviceLost: state.record.deviceLosses += 1
            case .finished(let report):
                state.finished = true
                // A session that never started (one left for later) leaves nothing.
                guard state.started else { return nil }
                state.record.finish(with: report, at: .roundedToMilliseconds())
                return Update(record: state.record, snapshot: nil)
            default:
                return nil
            }
            guard state.started else { return nil }
            if let status { state.record.apply(status) }
            state.lastQueued = state.record
            return Update(record: state.record, snapshot: snapshot(of: state, status: status))
        }
        if let update { queue(update) }
        if case .finished = event.kind { ended.signal() }
    }

    /// False once the session is over.
    private func progress(_ status: SessionStatus) -> Bool {
        let update: Update?? = state.withLock { state in
            guard !state.finished else { return .none }
            guard state.started else { return .some(nil) }
            state.record.apply(status)
            guard state.record != state.lastQueued else { return .some(nil) }
            state.lastQueued = state.record
            return .some(Update(record: state.record, snapshot: snapshot(of: state, status: status)))
        }
        guard let update else { return false }
        if let update { queue(update) }
        return true
    }

    /// What to write: the record, and the snapshot (nil: the session is over, remove it).
    private struct Update {
        var record: SessionRecord
        var snapshot: SessionSnapshot?
    }

    private func snapshot(of state: State, status: SessionStatus?) -> SessionSnapshot {
        SessionSnapshot(
            recordID: state.record.id, pattern: pattern, parameters: state.record.parameters,
            positionSeconds: startSeconds + (status?.elapsedSeconds ?? state.record.playedSeconds),
            state: state.paused ? .paused : .playing, pauses: earlierPauses + state.record.pauses, device: device)
    }

    private func queue(_ update: Update) {
        writes.async(group: written) { [self] in
            if let snapshots = keeping.snapshots {
                do throws(SnapshotError) {
                    if let snapshot = update.snapshot {
                        try snapshots.write(snapshot)
                        if let resumedID { snapshots.remove(recordID: resumedID) }
                    } else {
                        snapshots.remove(recordID: update.record.id)
                    }
                } catch {
                    report(.snapshot(error))
                }
            }
            do throws(HistoryError) {
                guard let history = try openedHistory() else { return }
                try history.save(update.record)
            } catch {
                report(.history(error))
            }
        }
    }

    private func report(_ failure: Failure) {
        let first = state.withLock { state in
            switch failure {
            case .history:
                defer { state.reportedHistory = true }
                return !state.reportedHistory
            case .snapshot:
                defer { state.reportedSnapshot = true }
                return !state.reportedSnapshot
            }
        }
        if first { failed(failure) }
    }

    /// The history, opened at the first call; nil when none is kept or opening has failed. On
    /// the write queue.
    private func openedHistory() throws(HistoryError) -> SessionHistory? {
        guard let open = keeping.history else { return nil }
        let (history, unusable) = state.withLock { ($0.history, $0.historyUnusable) }
        if let history { return history }
        guard !unusable else { return nil }
        do {
            let opened = try open()
            state.withLock { $0.history = opened }
            return opened
        } catch {
            state.withLock { $0.historyUnusable = true }
            throw error
        }
    }
}

extension SessionRecord {
    /// Takes in where a playing session stands.
    mutating func apply(_ status: SessionStatus) {
        playedSeconds = max(playedSeconds, status.elapsedSeconds)
        cycles = max(cycles, status.cycle - 1)
    }
}

extension Date {
    /// Now, to the millisecond: what the history keeps, so a record reads back as it was written.
    static func roundedToMilliseconds(_ date: Date = Date()) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}
