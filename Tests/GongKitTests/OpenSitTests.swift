import Foundation
import GongCore
import Testing

@testable import GongKit
@testable import GongPractice

/// Open-ended sits: interval bells until a stop, then the end cue; the history keeps what was sat.
@Suite struct OpenSitTests {
    static let toml = """
        start = "bowl"
        end = "bowl"
        [[phases]]
        name = "sit"
        length = "open"
        bell = { every = "1m", cue = "chime" }
        """

    /// Pulled as fast as it renders: 7 min 30 s to the frame, then `stop` as a control-channel
    /// line (the protocol the socket and `--control stdin` carry), then on to the end.
    @Test func anOpenSitStoppedAfter7m30sThroughTheControlChannelIsRecordedAs7m30WithEveryBellOnItsFrame()
        async throws
    {
        let pattern = try PatternFile.parse(Self.toml, path: "open.toml", defaultName: "open")
        #expect(pattern.length == .open)
        let scratch = HistoryTests.Scratch()
        let history = try SessionHistory(path: scratch.history)
        let session = try GongSessionPullTests.pulled(pattern)
        let recorder = SessionRecorder(of: session, keeping: .init(history: { history }, snapshots: nil)) {
            Issue.record("\($0)")
        }
        let events = session.events()
        session.start()
        let rate = 48000
        let block = 4800
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * 2)
        defer { buffer.deallocate() }
        for _ in 0..<(450 * rate / block) { _ = session.render(into: buffer, frames: block) }
        let reply = ControlProtocol.reply(to: #"{"id":1,"command":"stop"}"#, session: session)
        #expect(reply.contains(#""ok":true"#), "\(reply)")
        let ringOut = GongSessionPullTests.pullToTheEnd(session, channels: 2, sizes: [block])
        #expect(ringOut[0..<96].contains { $0 != 0 }, "the end cue sounds on the first frame after the stop")
        let report = await session.report()
        #expect(await recorder.waitForEnd(timeoutSeconds: 60))

        var cues: [(sound: String, frame: Int64?, late: Int64)] = []
        for await event in events {
            if case .cue(let sound, let late, _) = event.kind { cues.append((sound, event.frame, late)) }
        }
        let chimes = cues.filter { $0.sound == "chime" }
        #expect(chimes.map(\.frame) == (1...7).map { Int64($0 * 60 * rate) }, "a bell each minute up to the stop")
        #expect(cues.allSatisfy { $0.late == 0 })
        // Event frames are on the session's clock, where a stop jumps to the planned end.
        #expect(cues.filter { $0.sound == "bowl" }.map(\.frame) == [0, Int64(86400 * rate)])

        #expect(report.open && !report.stoppedEarly && report.plannedSeconds == 450)
        let record = try #require(try history.record(id: recorder.record.id))
        #expect(record.ending == .completed)
        #expect(DurationText.clock(seconds: record.plannedSeconds) == "7:30")
        #expect(
            record.playedSeconds == report.playedSeconds && record.playedSeconds > 450, "and the end cue's ring-out")
    }

    @Test func anOpenPatternLaysItsBellsOutToTheLongestSessionAndSaysWhatIsWrong() throws {
        let pattern = try PatternFile.parse(Self.toml, path: "open.toml", defaultName: "open")
        let timeline = try Timeline(pattern: pattern, sampleRate: 48000)
        #expect(timeline.plannedEndFrame == 86400 * 48000)
        #expect(timeline.cueOnsets.count == 1 + 1439 + 1, "start, a bell every minute of 24 h, the end")

        var interval = BuiltInPatterns.interval
        var overrides = PatternOverrides()
        overrides.open = true
        interval = try interval.applying(overrides)
        #expect(interval.length == .open)
        #expect(try Timeline(pattern: interval, sampleRate: 48000).cycleCount == 288, "5-minute bowls for 24 h")
        overrides.cycles = 3
        #expect(throws: PatternError.self) { try BuiltInPatterns.interval.applying(overrides) }

        func error(_ text: String) -> String {
            do {
                _ = try PatternFile.parse(text, path: "open.toml", defaultName: "open")
                return "no error"
            } catch { return error.description }
        }
        #expect(
            error("[[phases]]\nname = \"a\"\nlength = \"open\"\n[[phases]]\nname = \"b\"\nlength = \"1m\"\n")
                .hasPrefix("open.toml:3: phases[0].length = \"open\": only the last phase can be open"))
        #expect(
            error("cycles = 2\n[[phases]]\nname = \"a\"\nlength = \"open\"\n")
                .hasPrefix("open.toml:1: cycles: an open sit has no number of cycles or duration"))
    }
}
