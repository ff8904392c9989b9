import Foundation
import GongCore
import GongKit
import GongTestSupport
import Testing

@testable import GongPractice

/// The history on a real SQLite file in a scratch directory.
@Suite struct HistoryTests {
    final class Scratch {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gong-history-\(UUID().uuidString)")
            .path
        var history: String { path + "/history.sqlite" }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A sitting at a local time (`YYYY-MM-DDTHH:MM`) in a zone `offsetHours` from UTC.
    static func sitting(
        _ local: String, offsetHours: Int = 1, minutes: Double, pattern: String = "two-phase",
        ending: SessionRecord.Ending = .completed
    ) -> SessionRecord {
        let offset = offsetHours * 3600
        let start = HistoryCSV.date(local + ":00.000Z")!.addingTimeInterval(-Double(offset))
        return SessionRecord(
            pattern: pattern, source: .played, startedAt: start, endedAt: start.addingTimeInterval(minutes * 60),
            utcOffsetSeconds: offset, day: String(local.prefix(10)), plannedSeconds: minutes * 60,
            playedSeconds: minutes * 60, phases: 2, cycles: 1, plannedCycles: 1, ending: ending)
    }

    @Test func recordsComeBackNewestFirstAsTheyWereSaved() throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        var early = Self.sitting("2026-11-20T07:00", minutes: 20)
        early.maxDeviationMs = 0.04
        early.heard = "onFrame"
        let late = Self.sitting("2026-11-21T07:00", minutes: 5, ending: .stopped)
        try history.save([early, late])
        #expect(try history.records() == [late, early])
        #expect(try history.records(limit: 1) == [late])
        #expect(try history.records(since: late.startedAt) == [late])
        // Saved again under its id: replaced, not added.
        early.playedSeconds = 600
        try history.save(early)
        #expect(try history.records().count == 2)
        #expect(try history.record(id: early.id)?.playedSeconds == 600)
        // A second opening of the same file (another gong) sees the same and migrates nothing.
        #expect(try SessionHistory(path: scratch.history).records() == [late, early])
    }

    /// A record left `playing` by a process that is gone reads as interrupted, with its minutes.
    @Test func aSittingWhoseProcessDiedReadsAsInterrupted() throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        var killed = Self.sitting("2026-11-22T07:00", minutes: 7, ending: .playing)
        killed.processID = Int32.max - 1
        var alive = Self.sitting("2026-11-22T08:00", minutes: 3, ending: .playing)
        alive.processID = getpid()
        try history.save([killed, alive])
        let found = try history.records()
        #expect(found.map(\.ending) == [.playing, .interrupted])
        #expect(found[1].playedSeconds == 420)
    }

    @Test func csvGoesOutAndComesBackWithoutLoss() throws {
        var odd = Self.sitting("2026-11-22T23:59", offsetHours: -5, minutes: 12.345, pattern: "my, \"quoted\"\npattern")
        odd.parameters = "--set meditation=12m"
        // Milliseconds that a double holds only nearly (.231 reads back as .2309999…).
        odd.startedAt = HistoryCSV.date("2026-11-23T22:41:57.231Z")!
        #expect(HistoryCSV.timestamp(odd.startedAt) == "2026-11-23T22:41:57.231Z")
        odd.endedAt = nil
        odd.ending = .interrupted
        odd.deviceClockPPM = -12.5
        odd.jitterMs = 0.123456789
        var added = Self.sitting("2026-11-23T06:30", minutes: 20)
        added.source = .added
        added.heard = nil
        let records = [odd, added]
        let text = HistoryCSV.text(of: records)
        #expect(try HistoryCSV.records(in: text, file: "x.csv") == records)
        // Through the database and out again: the same text.
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        try history.save(try HistoryCSV.records(in: text, file: "x.csv"))
        #expect(HistoryCSV.text(of: try history.records()) == text, "newest first, as they were")
    }

    @Test func aBadCsvNamesTheLineTheColumnAndWhatIsAllowed() {
        let header = HistoryCSV.columns.joined(separator: ",")
        let good = HistoryCSV.text(of: [Self.sitting("2026-11-23T06:30", minutes: 20)])
        func error(_ text: String) -> String? {
            do {
                _ = try HistoryCSV.records(in: text, file: "in.csv")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(error("") == "in.csv:1: is empty; use a header row: " + header)
        #expect(error("id,pattern\n")?.hasPrefix("in.csv:1: no column parameters") == true)
        #expect(
            error(good.replacingOccurrences(of: ",completed,", with: ",done,"))?.hasPrefix(
                "in.csv:2: ending = \"done\": unknown; use one of playing, completed") == true)
        #expect(error(good.replacingOccurrences(of: "1200.0", with: "lots")) != nil)
        #expect(error(good + "x,y\n")?.hasPrefix("in.csv:3: has 2 fields") == true)
        #expect(error(good + "\"open") == "in.csv:3: a quoted field is never closed; use a closing \"")
    }

    /// The classic case: sits every morning, one just after midnight. With the day beginning at
    /// 4:00 the midnight sit counts for the evening before and the streak holds; with midnight as
    /// the boundary it falls on the next day and the streak breaks.
    @Test func aSitJustAfterMidnightKeepsTheStreakWithTheFourOClockBoundary() {
        let records = [
            Self.sitting("2026-11-18T07:00", minutes: 20),
            Self.sitting("2026-11-19T07:00", minutes: 20),
            // The night of the 20th: after midnight, before 4:00.
            Self.sitting("2026-11-21T00:30", minutes: 15),
            Self.sitting("2026-11-21T07:00", minutes: 20, pattern: "box"),
            Self.sitting("2026-11-22T07:00", minutes: 0.5),  // under the minimum: not counted
            Self.sitting("2026-11-23T07:00", minutes: 20)
        ]
        let now = HistoryCSV.date("2026-11-23T12:00:00.000Z")!
        let stats = PracticeStats(records: records, now: now, utcOffsetSeconds: 3600, recentDays: 7)
        #expect(stats.total == .init(sessions: 5, minutes: 95))
        #expect(stats.patterns.map(\.pattern) == ["two-phase", "box"])
        #expect(stats.patterns[0].sessions == 4 && stats.patterns[0].minutes == 75)
        #expect(stats.longestStreak == 4, "18, 19, 20 (the midnight sit), 21")
        #expect(stats.currentStreak == 1, "the 22nd had only half a minute")
        #expect(stats.days.map(\.date).last == "2026-11-23" && stats.days.count == 7)
        #expect(stats.days.first { $0.date == "2026-11-20" }?.minutes == 15)
        #expect(stats.days.last?.weekday == 0, "2026-11-23 is a Monday")

        let atMidnight = PracticeStats(
            records: records, boundary: DayBoundary(secondsAfterMidnight: 0), now: now, utcOffsetSeconds: 3600)
        #expect(atMidnight.longestStreak == 2)
        // Without a minimum the 22nd counts and the streak runs to today.
        let everySit = PracticeStats(records: records, minimumSeconds: 0, now: now, utcOffsetSeconds: 3600)
        #expect(everySit.currentStreak == 6)
        // Today not sat yet: the streak up to yesterday still stands.
        let nextMorning = PracticeStats(
            records: records, minimumSeconds: 0, now: now.addingTimeInterval(86400), utcOffsetSeconds: 3600)
        #expect(nextMorning.currentStreak == 6)
        let dayAfter = PracticeStats(
            records: records, minimumSeconds: 0, now: now.addingTimeInterval(2 * 86400), utcOffsetSeconds: 3600)
        #expect(dayAfter.currentStreak == 0)
    }

    @Test func dayBoundariesReadAndPrint() {
        #expect(DayBoundary(text: "4:00") == .standard)
        #expect(DayBoundary(text: "23:59")?.secondsAfterMidnight == 86340)
        #expect(DayBoundary(text: "0:00")?.description == "0:00")
        for bad in ["24:00", "4", "4:0", "-1:00", "4:60", "a:bc", ""] {
            #expect(DayBoundary(text: bad) == nil, "\(bad)")
        }
    }

    // MARK: Recording sessions

    /// Two sessions at once, each recorded as it ends: one played to its end, one stopped while
    /// it plays (paced, so it is still playing when the stop comes).
    @Test func twoSessionsAtOnceAreBothRecordedWithHowTheyEnded() async throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        let whole = try GongSessionTests.open(GongSessionTests.box16)
        let stopped = try GongSessionTests.openPaced(GongSessionTests.long)
        let failures = Locked<[SessionRecorder.Failure]>([])
        let recordings = [whole, stopped].map { session in
            SessionRecorder(of: session, keeping: .init(history: { history }, snapshots: nil), parameters: "--cycles 1")
            {
                failure in failures.withLock { $0.append(failure) }
            }
        }
        whole.start()
        stopped.start()
        let wholeReport = await whole.report()
        // Stopped once it has played (its record was written as it started).
        #expect(
            try await Waiting.until(seconds: 120) { try history.record(id: recordings[1].record.id) != nil },
            "the second session's record was written as it started")
        try stopped.send(.stop)
        let stoppedReport = await stopped.report()
        for recording in recordings { #expect(await recording.waitForEnd(timeoutSeconds: 30)) }
        #expect(failures.withLock { $0 }.isEmpty)

        let first = try #require(try history.record(id: recordings[0].record.id))
        #expect(first.ending == .completed && first.pattern == "box" && first.parameters == "--cycles 1")
        #expect(first.playedSeconds == wholeReport.playedSeconds && first.phases == wholeReport.phases)
        #expect(first.cycles == 1 && first.plannedCycles == 1 && first.heard == wholeReport.heard.word)
        #expect(first.endedAt != nil && first.processID == nil && first.source == .played)
        let second = try #require(try history.record(id: recordings[1].record.id))
        #expect(second.ending == .stopped && second.pattern == "long")
        #expect(second.playedSeconds == stoppedReport.playedSeconds && second.playedSeconds < second.plannedSeconds)
        #expect(try history.records().count == 2)
    }

    /// A history that cannot be written (another program holds it past the wait) is told of
    /// once, and the session plays on to its end without waiting for it.
    @Test func aSessionPlaysOnWhenItsHistoryCannotBeWritten() async throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        let lock = try HeldLock(on: scratch.history, history: history)
        defer { lock.release() }
        let session = try GongSessionTests.open(GongSessionTests.box16)
        let failures = Locked<[SessionRecorder.Failure]>([])
        let recording = SessionRecorder(of: session, keeping: .init(history: { history }, snapshots: nil)) { failure in
            failures.withLock { $0.append(failure) }
        }
        session.start()
        let report = await session.report()
        #expect(report.cycles == 1 && !report.stoppedEarly, "played to its end while its writes waited")
        #expect(await recording.waitForEnd(timeoutSeconds: 60))
        let told = failures.withLock { $0 }
        guard case .history(let error)? = told.first, told.count == 1 else {
            Issue.record("told once: \(told)")
            return
        }
        #expect(error.kind == .locked)
    }

    // MARK: A file that is not usable

    /// Garbage, a database of a newer gong, and one held by another program: each is one
    /// clear error, and the file is byte for byte as it was.
    @Test func aDamagedOrNewerHistoryIsAnErrorAndLeftAsItIs() throws {
        let scratch = Scratch()
        try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try garbage.write(to: URL(fileURLWithPath: scratch.history))
        #expect(throws: HistoryError.self) { try SessionHistory(path: scratch.history) }
        do {
            _ = try SessionHistory(path: scratch.history)
        } catch {
            #expect(error.kind == .damaged)
            #expect(error.description.contains("is damaged") && error.description.contains("left as it is"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.history)) == garbage)

        // A history from a gong with a migration this one does not know.
        let newer = scratch.path + "/newer.sqlite"
        try SessionHistory(path: newer).save(Self.sitting("2026-11-23T07:00", minutes: 20))
        try sqlite(newer, "PRAGMA user_version = \(SessionHistory.migrations.count + 1)")
        let before = try sqlite(newer, ".dump")
        do {
            _ = try SessionHistory(path: newer)
            Issue.record("a newer history was opened")
        } catch {
            #expect(error.kind == .newerVersion)
        }
        #expect(try sqlite(newer, ".dump") == before, "its schema and every row as they were")
    }

    /// A row this gong cannot read (an ending another program wrote) is named, not read wrongly.
    @Test func aSittingWithAnEndingThisGongDoesNotKnowReadsAsDamaged() throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        let record = Self.sitting("2026-11-23T07:00", minutes: 20)
        try history.save(record)
        try sqlite(scratch.history, "UPDATE sitting SET ending = 'levitated'")
        #expect(
            throws: HistoryError(
                path: scratch.history, kind: .damaged, detail: "sitting \(record.id) has ending \"levitated\"")
        ) { try history.records() }
    }

    @Test func aHistoryLockedByAnotherProgramIsAnErrorAfterTheWait() throws {
        let scratch = Scratch()
        let history = try SessionHistory(path: scratch.history)
        let record = Self.sitting("2026-11-23T07:00", minutes: 20)
        try history.save(record)
        let lock = try HeldLock(on: scratch.history, history: history)
        defer { lock.release() }
        #expect(throws: HistoryError(path: scratch.history, kind: .locked, detail: "database is locked")) {
            try history.save(record)
        }
        // Readers are not held up by the writer (WAL).
        #expect(try history.records() == [record])
    }

    /// sqlite3 holding a write transaction open, as another program might.
    final class HeldLock {
        let holder = Process()
        let input = Pipe()

        /// Returns once the lock is held: a write of `history`'s fails.
        init(on path: String, history: SessionHistory) throws {
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            holder.arguments = [path]
            holder.standardInput = input
            holder.standardOutput = Pipe()
            try holder.run()
            // With a busy timeout of its own: its BEGIN may come while a probe below holds the
            // lock for a moment, and without one it would fail at once, hold nothing, and leave
            // every probe succeeding (the test would then wait out the whole minute for nothing).
            input.fileHandleForWriting.write(Data(".timeout 60000\nBEGIN IMMEDIATE;\n".utf8))
            // sqlite3 without a busy timeout: its write fails at once while the lock is held.
            let held = try Waiting.until {
                let probe = Process()
                probe.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
                probe.arguments = [path, "BEGIN IMMEDIATE; ROLLBACK;"]
                probe.standardError = Pipe()
                try probe.run()
                probe.waitUntilExit()
                return probe.terminationStatus != 0
            }
            guard held else { throw POSIXError(.ETIMEDOUT) }
        }

        func release() {
            input.fileHandleForWriting.write(Data("ROLLBACK;\n.quit\n".utf8))
            holder.waitUntilExit()
        }
    }
}

/// What sqlite3 prints for `statement`.
@discardableResult
func sqlite(_ path: String, _ statement: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
    process.arguments = [path, statement]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let printed = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try #require(process.terminationStatus == 0)
    return String(decoding: printed, as: UTF8.self)
}
