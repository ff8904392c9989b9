import Foundation
import Synchronization

/// Keeps a live session's record in the history while it plays: written when it starts, again
/// at every pause, resume, skip and phase and at least every `progressSeconds` while it plays,
/// and completed from its report. A process killed mid-way leaves its record with what was
/// played up to then.
///
/// All of it happens off the session's threads: the events arrive through a stream of their own,
/// and every write is queued on a serial queue of the recording's, so a slow or locked database
/// never delays the audio or the control loop. A write that fails is reported once, through
/// `failed`, and the session plays on.
public final class HistoryRecording: Sendable {
    public static let progressSeconds: Double = 5

    /// Opens the history on the write queue, at the first write: opening may wait on the disk
    /// or on another program's lock, which the session must not.
    private let open: @Sendable () throws(HistoryError) -> SessionHistory
    private let writes = DispatchQueue(label: "gong history")
    private let state: Mutex<State>
    private let failed: @Sendable (HistoryError) -> Void
    private let written = DispatchGroup()

    private struct State {
        var record: SessionRecord
        var started = false
        var finished = false
        var phasesBegun = 0
        var reportedFailure = false
        var history: SessionHistory?
        /// Opening failed: nothing more is tried.
        var unusable = false
    }

    /// Subscribes to the session's events: make it before `start()`.
    /// - Parameters:
    ///   - parameters: what was asked of the pattern, in the caller's words.
    ///   - failed: told once, on a background thread, if the history cannot be written.
    public convenience init(
        of session: GongSession, in history: SessionHistory, parameters: String = "", boundary: DayBoundary = .standard,
        failed: @escaping @Sendable (HistoryError) -> Void
    ) {
        self.init(of: session, opening: { history }, parameters: parameters, boundary: boundary, failed: failed)
    }

    /// - Parameter open: opens the history, on the recording's own queue.
    public init(
        of session: GongSession, opening open: @escaping @Sendable () throws(HistoryError) -> SessionHistory,
        parameters: String = "", boundary: DayBoundary = .standard, failed: @escaping @Sendable (HistoryError) -> Void
    ) {
        self.open = open
        self.failed = failed
        let now = Date.roundedToMilliseconds()
        let offset = TimeZone.current.secondsFromGMT(for: now)
        let record = SessionRecord(
            pattern: session.pattern.name, parameters: parameters, source: .played, startedAt: now,
            utcOffsetSeconds: offset,
            day: DayBoundary.text(ofDay: boundary.dayNumber(localTime: now.addingTimeInterval(Double(offset)))),
            plannedSeconds: session.status.plannedSeconds, plannedCycles: session.status.cycles, ending: .playing,
            processID: getpid())
        state = Mutex(State(record: record))
        let events = session.events()
        Task.detached { [weak session, self] in
            for await event in events {
                self.take(event, status: session?.status)
            }
        }
        Task.detached { [weak session, self] in
            while true {
                try? await Task.sleep(for: .seconds(Self.progressSeconds))
                guard let status = session?.status, self.progress(status) else { return }
            }
        }
    }

    /// The record as last written or about to be.
    public var record: SessionRecord { state.withLock { $0.record } }

    /// Waits at most `timeoutSeconds` for the writes queued so far; true when they are done.
    public func waitForWrites(timeoutSeconds: Double) -> Bool {
        written.wait(timeout: .now() + timeoutSeconds) == .success
    }

    private func take(_ event: SessionEvent, status: SessionStatus?) {
        let snapshot: SessionRecord? = state.withLock { state in
            guard !state.finished else { return nil }
            switch event.kind {
            case .started:
                state.started = true
            case .phaseBegan:
                state.phasesBegun += 1
                state.record.phases = max(0, state.phasesBegun - 1)
            case .paused: state.record.pauses += 1
            case .skipped: state.record.skips += 1
            case .xrun: state.record.xruns += 1
            case .deviceLost: state.record.deviceLosses += 1
            case .resumed: break
            case .finished(let report):
                state.finished = true
                state.record.finish(with: report, at: .roundedToMilliseconds())
                return state.record
            default:
                return nil
            }
            guard state.started else { return nil }
            if let status { state.record.apply(status) }
            return state.record
        }
        if let snapshot { queue(snapshot) }
    }

    /// False once the session is over.
    private func progress(_ status: SessionStatus) -> Bool {
        let snapshot: SessionRecord?? = state.withLock { state in
            guard !state.finished else { return .none }
            guard state.started else { return .some(nil) }
            state.record.apply(status)
            return .some(state.record)
        }
        guard let snapshot else { return false }
        if let snapshot { queue(snapshot) }
        return true
    }

    private func queue(_ record: SessionRecord) {
        writes.async(group: written) { [self] in
            do throws(HistoryError) {
                guard let history = try openedHistory() else { return }
                try history.save(record)
            } catch {
                let first = state.withLock { state in
                    defer { state.reportedFailure = true }
                    return !state.reportedFailure
                }
                if first { failed(error) }
            }
        }
    }
}

extension HistoryRecording {
    /// The history, opened at the first call; nil once opening has failed. On the write queue.
    private func openedHistory() throws(HistoryError) -> SessionHistory? {
        let (history, unusable) = state.withLock { ($0.history, $0.unusable) }
        if let history { return history }
        guard !unusable else { return nil }
        do {
            let opened = try open()
            state.withLock { $0.history = opened }
            return opened
        } catch {
            state.withLock { $0.unusable = true }
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
