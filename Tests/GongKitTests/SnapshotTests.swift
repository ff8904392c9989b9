import Dispatch
import Foundation
import GongCore
import GongKit
import GongTestSupport
import Synchronization
import Testing

@testable import GongPractice

@Suite struct SnapshotTests {
    final class Scratch {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gong-snapshots-\(UUID().uuidString)")
            .path
        var store: SnapshotStore { SnapshotStore(directory: path + "/sessions") }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A process id that is not running.
    static let deadProcess: Int32 = Int32.max - 7

    static func snapshot(id: String = UUID().uuidString, processID: Int32 = deadProcess, at: Date = Date())
        -> SessionSnapshot
    {
        SessionSnapshot(
            recordID: id, pattern: GongSessionTests.box16, parameters: "--cycles 1", positionSeconds: 6.5,
            state: .paused,
            pauses: 2, processID: processID, device: "null", writtenAt: Date.roundedToMilliseconds(at))
    }

    @Test func aSnapshotIsWrittenWholeAndReadBackAsItWas() throws {
        let scratch = Scratch()
        let older = Self.snapshot(at: Date().addingTimeInterval(-60))
        let newer = Self.snapshot()
        try scratch.store.write(older)
        try scratch.store.write(newer)
        let (found, setAside) = scratch.store.unfinished()
        #expect(found == [newer, older], "newest first")
        #expect(setAside.isEmpty)
        // Written over in place; nothing but the snapshots themselves left in the directory.
        try scratch.store.write(newer)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.store.directory).sorted()
                == [older.recordID + ".json", newer.recordID + ".json"].sorted())
        scratch.store.remove(recordID: older.recordID)
        #expect(scratch.store.unfinished().snapshots == [newer])
    }

    /// The directory is made when missing (the first write of all), and a directory that cannot
    /// be made is a `mkdir` error naming the snapshot, not a crash or a silent loss.
    @Test func theFirstWriteMakesTheDirectoryAndOneThatCannotBeMadeIsAnError() throws {
        let scratch = Scratch()
        #expect(!FileManager.default.fileExists(atPath: scratch.path))
        let snapshot = Self.snapshot()
        try scratch.store.write(snapshot)
        #expect(scratch.store.unfinished().snapshots == [snapshot])

        // A file where the directory should be.
        let blocked = SnapshotStore(directory: scratch.path + "/blocker/sessions")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: scratch.path + "/blocker"))
        let error = #expect(throws: SnapshotError.self) { try blocked.write(snapshot) }
        #expect(error?.path == blocked.path(for: snapshot.recordID))
        #expect(error?.operation == "open" || error?.operation == "mkdir")
    }

    @Test func aSnapshotOfARunningProcessIsNotUnfinished() throws {
        let scratch = Scratch()
        try scratch.store.write(Self.snapshot(processID: getpid()))
        #expect(scratch.store.unfinished().snapshots.isEmpty)
    }

    /// Truncated, garbage, of a newer format, with a pattern gong cannot play: each is moved
    /// aside with its reason, kept byte for byte, and the good one beside them is still found.
    @Test func unreadableSnapshotsAreMovedAsideAndKept() throws {
        let scratch = Scratch()
        let good = Self.snapshot()
        try scratch.store.write(good)
        let text = try String(contentsOfFile: scratch.store.path(for: good.recordID), encoding: .utf8)
        let bad: [String: String] = [
            "truncated": String(text.prefix(text.count / 2)),
            "garbage": "\u{1}\u{2}not json at all",
            "newer": text.replacingOccurrences(of: #""format":1"#, with: #""format":7"#),
            "unplayable": text.replacingOccurrences(of: #""numerator":4"#, with: #""numerator":-4"#),
            "incomplete": #"{"format":1,"recordID":"x"}"#
        ]
        for (name, content) in bad {
            try content.write(toFile: scratch.store.directory + "/\(name).json", atomically: true, encoding: .utf8)
        }
        let (found, setAside) = scratch.store.unfinished()
        #expect(found == [good])
        #expect(setAside.count == bad.count, "\(setAside)")
        for aside in setAside {
            let name = (aside.path as NSString).lastPathComponent.replacingOccurrences(of: ".json", with: "")
            #expect(try String(contentsOfFile: aside.movedTo, encoding: .utf8) == bad[name], "kept as it was: \(name)")
            #expect(!FileManager.default.fileExists(atPath: aside.path))
        }
        let reasons = Dictionary(
            uniqueKeysWithValues: setAside.map { (($0.path as NSString).lastPathComponent, $0.reason) })
        #expect(reasons["newer.json"] == "is of format 7, newer than this gong's 1")
        #expect(reasons["garbage.json"] == "is not a snapshot (truncated or damaged)")
        #expect(reasons["unplayable.json"]?.hasPrefix("holds a pattern gong cannot play") == true, "\(reasons)")
        // Once moved aside they are not looked at again.
        #expect(scratch.store.unfinished().setAside.isEmpty)
    }

    /// While a session plays its snapshot is on disk with where it stands; when it ends, the
    /// snapshot is gone and its record complete.
    @Test func aPlayingSessionKeepsASnapshotThatItsEndRemoves() async throws {
        let scratch = Scratch()
        let history = scratch.path + "/history.sqlite"
        let session = try GongSessionTests.openPaced(GongSessionTests.long)
        let recorder = SessionRecorder(
            of: session,
            keeping: .init(
                history: { () throws(HistoryError) in try SessionHistory(path: history) }, snapshots: scratch.store),
            parameters: "--set sit=1h", device: "null"
        ) { failure in Issue.record("\(failure)") }
        session.start()
        #expect(
            await Waiting.until(seconds: 120) {
                FileManager.default.fileExists(atPath: scratch.store.path(for: recorder.record.id))
            }, "the snapshot was written as the session started")
        try session.send(.pause)
        var written: SessionSnapshot?
        _ = await Waiting.until(seconds: 120) {
            written = try? SnapshotStore.read(scratch.store.path(for: recorder.record.id)).get()
            return written?.state == .paused
        }
        #expect(written?.state == .paused && written?.pauses == 1 && written?.pattern == GongSessionTests.long)
        #expect(written?.device == "null" && written?.parameters == "--set sit=1h" && written?.processID == getpid())
        try session.send(.stop)
        _ = await session.report()
        #expect(await recorder.waitForEnd(timeoutSeconds: 30))
        #expect(!FileManager.default.fileExists(atPath: scratch.store.path(for: recorder.record.id)))
        #expect(try SessionHistory(path: history).record(id: recorder.record.id)?.ending == .stopped)
    }

    /// Between state changes a playing session's snapshot moves on with it; a paused one is not
    /// rewritten, however long it stays paused (each rewrite is a synced file and a commit). The
    /// session is pulled by the test, which says when each frame is heard (now), as a host does.
    /// The recorder takes a session's end in even while every thread of Swift's cooperative pool
    /// is held by someone else (a host's synchronous call, other tests): its tasks run on a
    /// queue of their own. On the pool, a loaded clean run's recorder waited out 60 s for nothing.
    /// Here the test's own thread and as many tasks as the pool has threads besides are blocked,
    /// synchronously, while a pulled session plays to its end and is waited for. (Run alone it
    /// fails with the recorder's tasks on the pool, as measured.)
    @Test func aSessionsEndIsTakenInWhileTheCooperativePoolIsHeld() throws {
        let scratch = Scratch()
        let session = try GongSessionPullTests.pulled(GongSessionTests.box16)
        let recorder = SessionRecorder(
            of: session, keeping: .init(history: nil, snapshots: scratch.store), device: "pull"
        ) { failure in Issue.record("\(failure)") }
        let others = ProcessInfo.processInfo.activeProcessorCount - 1
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<others {
            Task.detached {
                holding.signal()
                release.wait()
            }
        }
        defer { for _ in 0..<others { release.signal() } }
        // In a run of the whole suite other tests may hold the pool already, and a holder then
        // waits for a thread: the pool is held either way, and the test goes on.
        for _ in 0..<others { _ = holding.wait(timeout: .now() + 10) }
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4800 * 2)
        defer { buffer.deallocate() }
        session.start()
        while session.render(into: buffer, frames: 4800) != .over {}
        #expect(recorder.waitForEnd(timeoutSeconds: 20), "the end was not taken in with the pool held")
        #expect(recorder.record.ending == .completed)
    }

    @Test func aPausedSessionIsNotRewrittenUntilItMovesAgain() async throws {
        let scratch = Scratch()
        let session = try GongSessionPullTests.pulled(GongSessionTests.long)
        let recorder = SessionRecorder(
            of: session, keeping: .init(history: nil, snapshots: scratch.store), device: "pull",
            progressSeconds: 0.05
        ) { failure in Issue.record("\(failure)") }
        let path = scratch.store.path(for: recorder.record.id)
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4800 * 2)
        defer { buffer.deallocate() }
        /// Pulls `seconds` of the session, a tenth of a second at a time.
        func play(seconds: Int) {
            for _ in 0..<(seconds * 10) { _ = session.render(into: buffer, frames: 4800, heardAt: .now()) }
        }
        /// Waits until the snapshot on disk satisfies `condition`; the last one read.
        func snapshot(where condition: (SessionSnapshot) -> Bool) async throws -> SessionSnapshot? {
            var read: SessionSnapshot?
            _ = await Waiting.until {
                read = try? SnapshotStore.read(path).get()
                return read.map(condition) ?? false
            }
            return read
        }
        session.start()
        play(seconds: 2)
        let playing = try await snapshot { $0.positionSeconds > 0.2 }
        #expect(try #require(playing?.positionSeconds) > 0.2 && playing?.state == .playing, "rewritten as it played")

        try session.send(.pause)
        play(seconds: 1)  // the pause fades out in 15 ms; the host goes on pulling silence
        let paused = try await snapshot { $0.state == .paused }
        #expect(paused?.state == .paused)
        play(seconds: 1)
        // Twenty rewrite intervals and more: nothing moved, so nothing was written. (Waiting is
        // the test here: it checks that nothing happens.)
        try await Task.sleep(for: .seconds(1.5))
        #expect(try SnapshotStore.read(path).get() == paused)

        try session.send(.resume)
        play(seconds: 1)
        let resumed = try await snapshot { $0.state == .playing && $0.positionSeconds > paused?.positionSeconds ?? 0 }
        #expect(resumed?.state == .playing && resumed?.pauses == 1)
        try session.send(.stop)
        while session.render(into: buffer, frames: 4800) != .over {}
        _ = await session.report()
        #expect(await recorder.waitForEnd(timeoutSeconds: 30))
    }

    /// A resumed session begins at the snapshot's position, plays only what is left, counts on
    /// from its pauses, marks the record it carries on from as resumed, and removes that
    /// snapshot once its own is written.
    @Test func aResumedSessionPlaysTheRestAndTakesOverTheSnapshot() async throws {
        let scratch = Scratch()
        let historyPath = scratch.path + "/history.sqlite"
        let history = try SessionHistory(path: historyPath)
        var interrupted = HistoryTests.sitting("2026-11-23T07:00", minutes: 0.1, pattern: "box", ending: .playing)
        interrupted.processID = Self.deadProcess
        try history.save(interrupted)
        let earlier = Self.snapshot(id: interrupted.id)
        try scratch.store.write(earlier)

        var options = SessionOptions(device: "null")
        options.startSeconds = earlier.positionSeconds
        let session = try GongSession(pattern: earlier.pattern, options: options, bank: shippedBank)
        #expect(session.status.plannedSeconds == 16 - 6.5)
        let recorder = SessionRecorder(
            of: session, keeping: .init(history: { history }, snapshots: scratch.store), parameters: earlier.parameters,
            device: earlier.device, resuming: earlier
        ) { failure in Issue.record("\(failure)") }
        recorder.marksResumed(earlier)
        session.start()
        let report = await session.report()
        #expect(await recorder.waitForEnd(timeoutSeconds: 30))
        #expect(report.plannedSeconds == 9.5)
        #expect(report.phases == 3)
        #expect(try history.record(id: interrupted.id)?.ending == .resumed)
        let rest = try #require(try history.record(id: recorder.record.id))
        #expect(rest.resumedFrom == interrupted.id && rest.ending == .completed)
        #expect(scratch.store.unfinished().snapshots.isEmpty, "neither snapshot is left")
    }
}
