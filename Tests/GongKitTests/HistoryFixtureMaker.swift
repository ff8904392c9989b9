import Foundation
import GRDB
import Testing

@testable import GongPractice

/// Writes the histories of today's release (GRDB) that HistoryTests open after the change:
/// run once with GONG_MAKE_HISTORY_FIXTURES set to a directory.
@Suite struct HistoryFixtureMaker {
    /// Whole milliseconds, as the history keeps times.
    static func at(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    static let records: [SessionRecord] = {
        let completed = SessionRecord(
            id: "3f1c0a52-7d2e-4a8b-9c61-0e5b2d9f7a10", pattern: "two-phase", parameters: "--set meditation=20m",
            source: .played, startedAt: at(1_795_676_400_231),
            endedAt: at(1_795_677_612_500), utcOffsetSeconds: 3600, day: "2026-11-23",
            plannedSeconds: 1200, playedSeconds: 1212.25, phases: 2, cycles: 1, plannedCycles: 1, ending: .completed,
            pauses: 1, skips: 0, xruns: 2, deviceLosses: 1, lostFrames: 480, heard: "onFrame", maxDeviationMs: 0.042,
            jitterMs: 0.0123456789, deviceClockPPM: -12.5)
        let added = SessionRecord(
            id: "a0000000-0000-4000-8000-000000000002", pattern: "sitting by the lake, \"quiet\"\nnoon",
            source: .added, startedAt: at(1_795_730_400_000), endedAt: nil,
            utcOffsetSeconds: -18000, day: "2026-11-23", plannedSeconds: 900, playedSeconds: 900, ending: .completed)
        let interrupted = SessionRecord(
            id: "b0000000-0000-4000-8000-000000000003", pattern: "box", source: .played,
            startedAt: at(1_795_762_800_999), utcOffsetSeconds: 3600, day: "2026-11-24",
            plannedSeconds: 960, playedSeconds: 400.5, phases: 9, cycles: 2, plannedCycles: 4, ending: .resumed,
            heard: "audioLost", processID: nil)
        let rest = SessionRecord(
            id: "c0000000-0000-4000-8000-000000000004", pattern: "box", source: .played,
            startedAt: at(1_795_763_300_000), endedAt: at(1_795_763_900_000),
            utcOffsetSeconds: 3600, day: "2026-11-24", plannedSeconds: 560, playedSeconds: 559.5, phases: 7,
            cycles: 2, plannedCycles: 2, ending: .stopped, heard: "onFrame", resumedFrom: interrupted.id)
        // Left playing by a process long gone: reads back interrupted.
        let playing = SessionRecord(
            id: "d0000000-0000-4000-8000-000000000005", pattern: "zazen ☯ 座禅", source: .played,
            startedAt: at(1_795_849_200_000), utcOffsetSeconds: 32400, day: "2026-11-25",
            plannedSeconds: 2700, playedSeconds: 61, ending: .playing, processID: Int32.max - 3)
        return [completed, added, interrupted, rest, playing]
    }()

    static let bells: [BellRecord] = [
        BellRecord(
            due: 1_795_820_400, day: "2026-11-25", time: "10:00", number: 1, outcome: "rung", offMs: 0.021),
        BellRecord(
            due: 1_795_827_600, day: "2026-11-25", time: "12:00", number: 2, outcome: "skipped",
            reason: "a session was playing"),
        BellRecord(
            due: 1_795_831_200, day: "2026-11-25", time: "13:00", number: 0, outcome: "failed",
            reason: "device lost"),
        BellRecord(due: 1_795_906_800, day: "2026-11-26", time: "10:00", number: 1, outcome: "rung")
    ]

    @Test func makeTheFixtures() throws {
        guard let directory = ProcessInfo.processInfo.environment["GONG_MAKE_HISTORY_FIXTURES"] else { return }
        let v3 = directory + "/history-grdb-v3.sqlite"
        let history = try SessionHistory(path: v3)
        try history.save(Self.records)
        for bell in Self.bells { try history.save(bell: bell) }

        // One of the release before bells (migrations v1 and v2 only), by the same migrator.
        let v2 = directory + "/history-grdb-v2.sqlite"
        var configuration = Configuration()
        configuration.busyMode = .timeout(SessionHistory.busySeconds)
        let pool = try DatabasePool(path: v2, configuration: configuration)
        try SessionHistory.migrator.migrate(pool, upTo: "v2: resumed sessions")
        try pool.write { db in for record in Self.records.prefix(4) { try record.save(db) } }
        try pool.close()
    }
}
