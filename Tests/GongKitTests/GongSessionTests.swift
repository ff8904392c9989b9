import Foundation
import GongAudio
import GongCore
import GongTestSupport
import Synchronization
import Testing

@testable import GongKit

/// The facade as an embedding program uses it, on ALSA's `null` device (which takes frames as
/// fast as they come, so a session plays in a fraction of its length).
@Suite struct GongSessionTests {
    /// Box breathing, one 16 s cycle: chime, click, woodblock, click, and the bowl at 16 s.
    static let box16: Pattern = {
        var overrides = PatternOverrides()
        overrides.cycles = 1
        return try! BuiltInPatterns.named("box")!.applying(overrides)
    }()
    /// Long enough that no test sees it end by itself (played paced): commands and drops land
    /// while it plays. Its first cue and its end cue woodblocks (no test reaches the walk): a
    /// stopped session rings out what sounds and then its end cue, in real time, and a gong's 30 s
    /// of it made five tests here half a minute each, which pinned nothing (the ring-out has tests
    /// of its own).
    static let long = Pattern(
        name: "long",
        phases: [Phase("sit", length: 3600, cue: Cue("woodblock")), Phase("walk", length: 3600, cue: Cue("bowl"))],
        length: .cycles(6), endCue: Cue("woodblock"))

    static func open(_ pattern: Pattern) throws -> GongSession {
        try GongSession(pattern: pattern, options: SessionOptions(device: "null"), bank: shippedBank)
    }

    /// A session on `null` paced as a sound card is, so that it lasts as long as it says:
    /// however slow the machine, commands and drops land while it plays.
    static func openPaced(_ pattern: Pattern) throws -> GongSession {
        try GongSession(pattern: pattern, bank: shippedBank, options: SessionOptions()) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in
            do {
                return try FaultInjectingPCM(realTime: true)
            } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
    }

    /// Why `session` refused `command`; nil when it took it.
    static func refusal(of command: SessionCommand, by session: GongSession) -> CommandRefusal? {
        do throws(CommandRefusal) {
            try session.send(command)
            return nil
        } catch {
            return error
        }
    }

    /// Collects a stream's events until it ends.
    static func collect(_ events: AsyncStream<SessionEvent>) async -> [SessionEvent] {
        var seen: [SessionEvent] = []
        for await event in events { seen.append(event) }
        return seen
    }

    /// Waits until the stream has yielded an event matching `matches`, looking no further once
    /// `seconds` have passed. Generous: a whole suite starting at once on two cores, each test
    /// preparing its sounds, has taken over 30 s to hear its first event.
    static func first(
        _ iterator: inout AsyncStream<SessionEvent>.Iterator, seconds: Double = 120,
        where matches: (SessionEvent) -> Bool
    ) async -> SessionEvent? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, let event = await iterator.next() {
            if matches(event) { return event }
        }
        return nil
    }

    @Test func aSessionPlaysToItsEndAndTheStreamEndsWithItsReport() async throws {
        let session = try Self.open(Self.box16)
        let events = session.events()
        session.start()
        let seen = await Self.collect(events)
        #expect(seen.first?.type == "started")
        #expect(seen.last?.type == "finished")
        let cues = seen.compactMap { if case .cue(let sound, _, _) = $0.kind { (sound, $0.frame) } else { nil } }
        #expect(cues.map(\.0) == ["chime", "click", "woodblock", "click", "bowl"])
        #expect(cues.map(\.1) == [0, 192_000, 384_000, 576_000, 768_000].map { Int64($0) }, "every cue on its frame")
        let report = await session.report()
        #expect(report.cues == 5 && report.cycles == 1 && !report.stoppedEarly && report.failure == nil)
        #expect(seen.last == SessionEvent(.finished(report)))
        // A stream asked for after the end gets the end at once.
        #expect(await Self.collect(session.events()) == [SessionEvent(.finished(report))])
        #expect(throws: CommandRefusal(command: .pause, reason: .over)) { try session.send(.pause) }
    }

    @Test func twoSessionsPlayAtOnceEachOnItsOwnFrames() async throws {
        let first = try Self.open(Self.box16)
        let second = try GongSession(
            pattern: Self.box16, options: SessionOptions(device: "null", rate: 44100, channels: 1), bank: shippedBank)
        let (a, b) = (first.events(), second.events())
        first.start()
        second.start()
        async let seenA = Self.collect(a)
        async let seenB = Self.collect(b)
        let (eventsA, eventsB) = await (seenA, seenB)
        let framesA = eventsA.compactMap { if case .cue = $0.kind { $0.frame } else { nil } }
        let framesB = eventsB.compactMap { if case .cue = $0.kind { $0.frame } else { nil } }
        #expect(framesA == [0, 4, 8, 12, 16].map { Int64($0 * 48000) })
        #expect(framesB == [0, 4, 8, 12, 16].map { Int64($0 * 44100) })
        #expect(first.output.rate == 48000 && second.output.rate == 44100 && second.output.channels == 1)
    }

    @Test func commandsFromSeveralTasksAreEachTakenOrRefusedWithTheStateTheyMet() async throws {
        // More phases than the flood's 30 skips could pass: however many are taken (more on a
        // busy machine, where fewer are refused as busy), the session is still playing when the
        // stop comes.
        let session = try Self.openPaced(
            Pattern(
                name: "many", phases: [Phase("sit", length: 600, cue: Cue("woodblock")), Phase("walk", length: 600)],
                length: .cycles(40), endCue: Cue("woodblock")))
        var iterator = session.events().makeAsyncIterator()
        let all = session.events()
        session.start()
        _ = try #require(await Self.first(&iterator) { $0.type == "cue" })
        let commands: [SessionCommand] = [.pause, .resume, .skip, .setGain(decibels: -6), .pause, .resume]
        let outcomes = await withTaskGroup(of: [(SessionCommand, CommandRefusal?)].self) { group in
            for task in 0..<6 {
                group.addTask {
                    var outcomes: [(SessionCommand, CommandRefusal?)] = []
                    for round in 0..<30 {
                        let command = commands[(task + round) % commands.count]
                        outcomes.append((command, Self.refusal(of: command, by: session)))
                    }
                    return outcomes
                }
            }
            var all: [(SessionCommand, CommandRefusal?)] = []
            for await outcome in group { all += outcome }
            return all
        }
        // Sent after the flood: refused while the audio thread catches up, then taken.
        var notBusy: CommandRefusal?
        #expect(
            await Waiting.until {
                guard let refusal = Self.refusal(of: .stop, by: session) else { return true }
                if refusal.reason != .busy { notBusy = refusal }
                return refusal.reason != .busy
            }, "the stop was taken once the audio thread caught up")
        #expect(notBusy == nil, "refused for another reason than busy: \(String(describing: notBusy))")
        let report = await session.report()
        let events = await Self.collect(all)
        for (command, refusal) in outcomes {
            // Sent faster than the audio thread takes them: refused whole, never half done.
            guard let refusal, refusal.reason != .busy else { continue }
            guard case .notNow(let state) = refusal.reason else {
                Issue.record("\(command) refused for \(refusal.reason)")
                continue
            }
            let input: SessionInput.Kind =
                switch command {
                case .pause: .pause
                case .resume: .resume
                case .skip: .skip
                default: .stop
                }
            #expect(!SessionMachine.accepts(input, in: state), "\(command) was refused in \(state), which takes it")
        }
        func taken(_ command: SessionCommand) -> Int { outcomes.filter { $0.0 == command && $0.1 == nil }.count }
        #expect(report.pauses == taken(.pause) && report.skips == taken(.skip), "\(report)")
        #expect(events.filter { $0.type == "gainChanged" }.count == taken(.setGain(decibels: -6)))
        let notNow = outcomes.filter { if case .notNow = $0.1?.reason { true } else { false } }.count
        #expect(events.filter { $0.type == "ignored" }.count == notNow)
        #expect(!events.contains { $0.type == "internalError" }, "\(events.filter { $0.type == "internalError" })")
        #expect(report.stoppedEarly && events.last?.type == "finished")
        let frames = events.compactMap(\.frame)
        #expect(frames == frames.sorted(), "events come in the order they happened")
    }

    /// Two tasks pressing the one pause button at once: each toggle is decided by the session on
    /// the state it is in, so none is refused for that state (as a pause read as playing and
    /// sent after the other task's pause would be), and the session is told paused, resumed,
    /// paused… never twice the same in a row.
    @Test func togglesFromTwoTasksAtOnceAreDecidedByTheSessionAndAlternate() async throws {
        let session = try Self.openPaced(Self.long)
        var iterator = session.events().makeAsyncIterator()
        let all = session.events()
        session.start()
        _ = try #require(await Self.first(&iterator) { $0.type == "cue" })
        let refusals = await withTaskGroup(of: [CommandRefusal].self) { group in
            for _ in 0..<2 {
                group.addTask { (0..<20).compactMap { _ in Self.refusal(of: .togglePause, by: session) } }
            }
            var all: [CommandRefusal] = []
            for await refused in group { all += refused }
            return all
        }
        #expect(
            await Waiting.until { Self.refusal(of: .stop, by: session).map { $0.reason != .busy } ?? true },
            "the stop was taken once the audio thread caught up")
        let report = await session.report()
        let events = await Self.collect(all)
        #expect(refusals.allSatisfy { $0.reason == .busy }, "\(refusals)")
        let changes = events.map(\.type).filter { $0 == "paused" || $0 == "resumed" }
        #expect(changes.first == "paused" && zip(changes, changes.dropFirst()).allSatisfy { $0 != $1 }, "\(changes)")
        let taken = 40 - refusals.count
        #expect(report.pauses == (taken + 1) / 2 && changes.count == taken, "\(taken) taken: \(changes)")
        #expect(!events.contains { $0.type == "ignored" })
    }

    @Test func pauseAndWaitReturnsOnceTheFadeIsDone() async throws {
        let session = try Self.openPaced(Self.long)
        var iterator = session.events().makeAsyncIterator()
        session.start()
        _ = try #require(await Self.first(&iterator) { $0.type == "cue" })
        #expect(session.pauseAndWait(timeoutSeconds: 30), "the fade-out ended")
        #expect(session.status.state == .paused)
        #expect(await Self.first(&iterator) { $0.type == "paused" } != nil, "and said so")
        #expect(session.pauseAndWait(timeoutSeconds: 0.05), "paused already: true at once, and nothing changed")
        try session.send(.halt)
        #expect(await session.report().stoppedEarly)
    }

    @Test func aCommandOutOfRangeOrBeforeTheStartChangesNothing() async throws {
        let session = try Self.open(Self.box16)
        #expect(throws: CommandRefusal(command: .pause, reason: .notNow(.idle))) { try session.send(.pause) }
        #expect(throws: CommandRefusal(command: .gain, reason: .gainOutOfRange(40))) {
            try session.send(.setGain(decibels: 40))
        }
        #expect(throws: CommandRefusal.self) { try session.send(.setGain(decibels: .nan)) }
        #expect(session.status.gainDB == 0 && session.status.state == .idle)
        try session.send(.setGain(decibels: -12))
        #expect(session.status.gainDB == -12)
    }

    @Test func droppingTheLastReferenceWhilePlayingHaltsTheSessionAndEndsItsStreams() async throws {
        var session: GongSession? = try Self.openPaced(Self.long)
        weak let watched = session
        var iterator = try #require(session).events().makeAsyncIterator()
        session?.start()
        _ = try #require(await Self.first(&iterator) { $0.type == "cue" })
        // Where it stood when let go: on a loaded machine the test may hear of the first cue a
        // minute after it played, so the halt is judged from here, not from the start.
        let playedWhenLetGo = try #require(session).status.elapsedSeconds
        session = nil
        #expect(watched == nil, "nothing but the caller keeps a session alive")
        let finished = try #require(await Self.first(&iterator) { $0.isFinished }, "the stream ends with finished")
        guard case .finished(let report) = finished.kind else { return }
        #expect(
            report.stoppedEarly && report.playedSeconds < playedWhenLetGo + 30,
            "\(report), let go at \(playedWhenLetGo) s")
        #expect(await iterator.next() == nil, "and then ends")
    }

    @Test func badSettingsAreTypedErrorsNamingTheSetting() throws {
        let cases: [(SessionOptions, SettingError.Setting)] = [
            (SessionOptions(device: "null", rate: 7), .rate),
            (SessionOptions(device: "null", channels: 3), .channels),
            (SessionOptions(device: "null", latencyMs: 0), .latency),
            (SessionOptions(device: "null", periodFrames: 1), .period),
            (SessionOptions(device: "null", gainDB: 13), .gain)
        ]
        for (options, setting) in cases {
            do {
                _ = try GongSession(pattern: Self.box16, options: options, bank: shippedBank)
                Issue.record("\(setting) accepted")
            } catch {
                guard case .setting(let error) = error else { Issue.record("\(error)"); continue }
                #expect(error.setting == setting)
            }
        }
    }

    @Test func aPatternWrittenInTOMLPlays() async throws {
        let pattern = try PatternCatalog.pattern(
            toml: """
                name = "tiny"
                [[phases]]
                name = "sit"
                length = "2s"
                cue = "bowl"
                """)
        let session = try Self.open(pattern)
        let events = session.events()
        session.start()
        let seen = await Self.collect(events)
        #expect(seen.contains { if case .cue("bowl", _, _) = $0.kind { true } else { false } })
        #expect(throws: PatternError.self) { try PatternCatalog.pattern(toml: "[[phases]]\nname = 4") }
    }
}

/// Every type of event, written and read back the same: the schema is what `--json` prints.
@Suite struct SessionEventSchemaTests {
    static let report = SessionReport.sample
    static let every: [SessionEvent] = [
        SessionEvent(
            .started(pattern: "box", device: "pulse", rate: 48000, channels: 2, format: "float32", latencyMs: 500)),
        SessionEvent(.firstFrameAudible, frame: 0, audible: 1234.5),
        SessionEvent(.phaseBegan(phase: "inhale", cycle: 1, cycles: 3, seconds: 4), frame: 0, audible: 1234.5),
        SessionEvent(.cue(sound: "gong", lateFrames: 0, offFrames: nil), frame: 192_000, audible: 1238.5),
        SessionEvent(.cue(sound: "gong", lateFrames: 12, offFrames: -3), frame: 192_000),
        SessionEvent(.cueHeardLate(sound: "gong", lateFrames: 268), frame: 192_000, audible: 1238.505583),
        SessionEvent(.cueAhead(sound: "bowl"), frame: 384_000, audible: 1242.5),
        SessionEvent(.cuesWithdrawn),
        SessionEvent(.paused, frame: 200_000, audible: 1238.7),
        SessionEvent(.resumed, frame: 200_000, audible: 1240),
        SessionEvent(.skipped(seconds: 2.5), frame: 210_000),
        SessionEvent(.stopping),
        SessionEvent(.gainChanged(decibels: -6)),
        SessionEvent(.xrun(lostFrames: 480), frame: 300_000, audible: 1250),
        SessionEvent(.xrun(lostFrames: 0, clockStoppedSeconds: 0.0625), frame: 300_500, audible: 1251),
        SessionEvent(.suspendRecovered(paused: true), frame: 310_000),
        SessionEvent(.deviceLost(message: "pulse: stalled", reason: .stalled, errno: EAGAIN), frame: 320_000),
        SessionEvent(.deviceBack(resumed: false), frame: 320_000),
        SessionEvent(.priorityRefused(priority: .realtime, message: "Operation not permitted")),
        SessionEvent(.ignored(command: .resume, state: .active)),
        SessionEvent(.internalError(input: .finished, state: .paused)),
        SessionEvent(.eventsLost(count: 5)),
        SessionEvent(.failed(message: "the audio stopped")),
        SessionEvent(.finished(report))
    ]

    @Test func everyTypeRoundTripsThroughItsJSONLine() throws {
        #expect(Set(Self.every.map(\.type)) == Set(SessionEvent.allTypes), "the samples cover every type")
        for event in Self.every {
            let line = event.jsonLine()
            #expect(!line.contains("\n"))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(
                object["schema"] as? Int == SessionEvent.schemaVersion && object["type"] as? String == event.type,
                "\(line)")
            #expect(try JSONDecoder().decode(SessionEvent.self, from: Data(line.utf8)) == event, "\(line)")
        }
    }

    @Test func everyVerdictOfTheReportRoundTrips() throws {
        let verdicts: [SessionReport.Heard] = [
            .onFrame(jitterMs: 0.02), .offFrame(count: 2, worstFrames: 256), .roughReports(jitterMs: 2.5),
            .audioLost, .unconfirmed(deviceTimed: true), .unconfirmed(deviceTimed: false)
        ]
        for heard in verdicts {
            var report = Self.report
            report.heard = heard
            report.failure = heard == .audioLost ? "gone" : nil
            let event = SessionEvent(.finished(report))
            #expect(try JSONDecoder().decode(SessionEvent.self, from: Data(event.jsonLine().utf8)) == event)
        }
    }

    @Test func aLineOfAnotherSchemaOrAnUnknownTypeIsRefused() {
        #expect(throws: SessionEvent.SchemaMismatch(found: 2)) {
            try JSONDecoder().decode(SessionEvent.self, from: Data(#"{"schema":2,"type":"paused"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionEvent.self, from: Data(#"{"schema":1,"type":"exploded"}"#.utf8))
        }
    }

    @Test func theEmbeddingGuideDocumentsEveryType() throws {
        let guide = try String(contentsOfFile: packageRoot + "/docs/embedding.md", encoding: .utf8)
        for type in SessionEvent.allTypes {
            #expect(guide.contains("| `\(type)` |"), "docs/embedding.md's event table has a row for \(type)")
        }
    }
}

/// The repository's root, where README.md and docs/ are.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

extension SessionReport {
    static var sample: SessionReport {
        let json = #"""
            {"schema":1,"type":"finished","pattern":"box","rate":48000,"plannedSeconds":16,"playedSeconds":21.5,"plannedCycles":1,
             "cycles":1,"phases":4,"pauses":1,"skips":0,"stoppedEarly":false,"xruns":0,"lostFrames":0,"suspends":0,"deviceLosses":0,
             "cues":5,"maxCueLatenessFrames":0,"heard":"onFrame","jitterMs":0.01,
             "timing":{"intervals":4,"maxDeviationMs":0.02,"meanDeviationMs":0.01,"deviceClockPPM":3.5,"maxJitterMs":0.01}}
            """#
        let event = try! JSONDecoder().decode(SessionEvent.self, from: Data(json.utf8))
        guard case .finished(let report) = event.kind else { fatalError("a finished event") }
        return report
    }
}
