import Foundation
import Testing

@testable import GongPractice

/// Histories written by the gong that kept them through GRDB open unchanged. The files in
/// Tests/Fixtures were made by that gong's own code (commit aeee659, whose
/// Tests/GongKitTests/HistoryFixtureMaker.swift saved these records and bells through its
/// SessionHistory): one of its last release, migrated to v3 (bells), and one migrated only
/// to v2, as the release before bells left it.
@Suite struct GRDBHistoryTests {
    /// Whole milliseconds, as the history keeps times.
    static func at(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// What the fixtures hold, as they were saved.
    static let records: [SessionRecord] = {
        let completed = SessionRecord(
            id: "3f1c0a52-7d2e-4a8b-9c61-0e5b2d9f7a10", pattern: "two-phase", parameters: "--set meditation=20m",
            source: .played, startedAt: at(1_795_676_400_231), endedAt: at(1_795_677_612_500), utcOffsetSeconds: 3600,
            day: "2026-11-23", plannedSeconds: 1200, playedSeconds: 1212.25, phases: 2, cycles: 1, plannedCycles: 1,
            ending: .completed, pauses: 1, skips: 0, xruns: 2, deviceLosses: 1, lostFrames: 480, heard: "onFrame",
            maxDeviationMs: 0.042, jitterMs: 0.0123456789, deviceClockPPM: -12.5)
        let added = SessionRecord(
            id: "a0000000-0000-4000-8000-000000000002", pattern: "sitting by the lake, \"quiet\"\nnoon",
            source: .added, startedAt: at(1_795_730_400_000), endedAt: nil, utcOffsetSeconds: -18000,
            day: "2026-11-23", plannedSeconds: 900, playedSeconds: 900, ending: .completed)
        let interrupted = SessionRecord(
            id: "b0000000-0000-4000-8000-000000000003", pattern: "box", source: .played,
            startedAt: at(1_795_762_800_999), utcOffsetSeconds: 3600, day: "2026-11-24", plannedSeconds: 960,
            playedSeconds: 400.5, phases: 9, cycles: 2, plannedCycles: 4, ending: .resumed, heard: "audioLost",
            processID: nil)
        let rest = SessionRecord(
            id: "c0000000-0000-4000-8000-000000000004", pattern: "box", source: .played,
            startedAt: at(1_795_763_300_000), endedAt: at(1_795_763_900_000), utcOffsetSeconds: 3600,
            day: "2026-11-24", plannedSeconds: 560, playedSeconds: 559.5, phases: 7, cycles: 2, plannedCycles: 2,
            ending: .stopped, heard: "onFrame", resumedFrom: interrupted.id)
        // Left playing by a process long gone: reads back interrupted.
        let playing = SessionRecord(
            id: "d0000000-0000-4000-8000-000000000005", pattern: "zazen ☯ 座禅", source: .played,
            startedAt: at(1_795_849_200_000), utcOffsetSeconds: 32400, day: "2026-11-25", plannedSeconds: 2700,
            playedSeconds: 61, ending: .playing, processID: Int32.max - 3)
        return [completed, added, interrupted, rest, playing]
    }()

    static let bells: [BellRecord] = [
        BellRecord(due: 1_795_820_400, day: "2026-11-25", time: "10:00", number: 1, outcome: "rung", offMs: 0.021),
        BellRecord(
            due: 1_795_827_600, day: "2026-11-25", time: "12:00", number: 2, outcome: "skipped",
            reason: "a session was playing"),
        BellRecord(
            due: 1_795_831_200, day: "2026-11-25", time: "13:00", number: 0, outcome: "failed", reason: "device lost"),
        BellRecord(due: 1_795_906_800, day: "2026-11-26", time: "10:00", number: 1, outcome: "rung")
    ]

    /// Newest first, as `records()` gives them, the one left playing read as interrupted.
    static func asRead(_ saved: [SessionRecord]) -> [SessionRecord] {
        saved.sorted { $0.startedAt > $1.startedAt }.map { record in
            guard record.ending == .playing else { return record }
            var read = record
            read.ending = .interrupted
            read.processID = nil
            return read
        }
    }

    /// A copy of a fixture in a scratch directory (opening migrates the file).
    static func copy(_ fixture: String, into scratch: HistoryTests.Scratch) throws -> String {
        try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: packageRoot + "/Tests/Fixtures/" + fixture, toPath: scratch.history)
        return scratch.history
    }

    @Test func aHistoryOfTheLastGRDBReleaseOpensWithEverySittingAndBellAsSaved() throws {
        let scratch = HistoryTests.Scratch()
        let path = try Self.copy("history-grdb-v3.sqlite", into: scratch)
        let history = try SessionHistory(path: path)
        #expect(try history.records() == Self.asRead(Self.records))
        #expect(try history.record(id: Self.records[3].id) == Self.records[3])
        #expect(try history.bells(onDay: "2026-11-25") == Array(Self.bells.prefix(3)))
        #expect(try history.bells(onDay: "2026-11-26") == [Self.bells[3]])
        #expect(try sqlite(path, "PRAGMA user_version") == "3\n")
        // GRDB's list stays, as it was, so the gong of those days can still open the file.
        #expect(try sqlite(path, "SELECT identifier FROM grdb_migrations ORDER BY rowid") == Self.grdbList(3))

        // And it goes on: written, read, opened again.
        var next = HistoryTests.sitting("2026-11-27T07:00", minutes: 20)
        next.parameters = "--cycles 2"
        try history.save(next)
        try history.save(
            bell: BellRecord(due: 1_795_993_200, day: "2026-11-27", time: "10:00", number: 1, outcome: "rung"))
        let reopened = try SessionHistory(path: path)
        #expect(try reopened.records() == Self.asRead(Self.records + [next]))
        #expect(try reopened.bells(onDay: "2026-11-27").count == 1)
    }

    @Test func aHistoryFromBeforeBellsGainsTheBellTableAndKeepsItsSittings() throws {
        let scratch = HistoryTests.Scratch()
        let path = try Self.copy("history-grdb-v2.sqlite", into: scratch)
        #expect(try sqlite(path, "SELECT identifier FROM grdb_migrations ORDER BY rowid") == Self.grdbList(2))
        let history = try SessionHistory(path: path)
        #expect(try history.records() == Self.asRead(Array(Self.records.prefix(4))))
        #expect(try history.bells(onDay: "2026-11-25") == [])
        try history.save(bell: Self.bells[0])
        #expect(try history.bells(onDay: "2026-11-25") == [Self.bells[0]])
        #expect(try sqlite(path, "PRAGMA user_version") == "3\n")
        // The migration is listed where GRDB looks too: that gong opens the file as its own.
        #expect(try sqlite(path, "SELECT identifier FROM grdb_migrations ORDER BY rowid") == Self.grdbList(3))
    }

    /// A history begun now has the very tables and indexes GRDB made, so either reads the other's.
    @Test func aNewHistoryHasTheSchemaGRDBMade() throws {
        let scratch = HistoryTests.Scratch()
        let fixture = try Self.copy("history-grdb-v3.sqlite", into: scratch)
        let fresh = scratch.path + "/fresh.sqlite"
        _ = try SessionHistory(path: fresh)
        let schema = "SELECT type, name, tbl_name FROM sqlite_master WHERE tbl_name NOT LIKE 'grdb%' ORDER BY name"
        #expect(try sqlite(fresh, schema) == sqlite(fixture, schema))
        for table in ["sitting", "bell"] {
            let columns = "SELECT name, type, \"notnull\", pk FROM pragma_table_info('\(table)')"
            #expect(try sqlite(fresh, columns) == sqlite(fixture, columns), "\(table)")
        }
        #expect(try sqlite(fresh, "PRAGMA journal_mode") == "wal\n")
    }

    @Test func aGRDBHistoryWithAMigrationThisGongDoesNotKnowIsNewerAndLeftAsItIs() throws {
        let scratch = HistoryTests.Scratch()
        let path = try Self.copy("history-grdb-v3.sqlite", into: scratch)
        try sqlite(path, "INSERT INTO grdb_migrations VALUES ('v4: from the future')")
        let before = try sqlite(path, ".dump")
        #expect(throws: HistoryError(path: path, kind: .newerVersion, detail: nil)) { try SessionHistory(path: path) }
        #expect(try sqlite(path, ".dump") == before)
    }

    static func grdbList(_ count: Int) -> String {
        SessionHistory.migrations.prefix(count).map { $0.name + "\n" }.joined()
    }
}
