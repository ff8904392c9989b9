import Foundation
import Glibc
import GongPractice
import Testing

/// `gong bells`' socket for a remote: `subscribe` keeps the connection and pushes each change,
/// `plan` lists a day's bells with what became of each.
@Suite struct BellsSubscribeTests {
    /// One request on a connection of its own; the reply line.
    private func ask(_ line: String, socket: String) throws -> [String: Any] {
        let descriptor = try ControlSockets.connect(socket)
        defer { close(descriptor) }
        _ = (line + "\n").withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var lines = ControlSockets.LineReader(descriptor: descriptor)
        let replyLine = lines.next()
        let reply = try #require(replyLine)
        return try #require(try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any])
    }

    @Test func aSubscriberIsToldOfEachPauseAndResumeAsItHappens() async throws {
        let bells = try await RunningBells.started(RunningBells.farOff + ["--device", "null"], in: ScratchDirectory())
        let subscriber = try ControlSockets.connect(bells.socket)
        defer { close(subscriber) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(subscriber, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = "{\"command\":\"subscribe\",\"id\":1}\n".withCString {
            send(subscriber, $0, strlen($0), Int32(MSG_NOSIGNAL))
        }
        var events = ControlSockets.LineReader(descriptor: subscriber)
        let replyLine = events.next()
        let reply = try #require(replyLine)
        #expect(reply.contains(#""ok":true"#) && reply.contains(#""next":"#), "\(reply)")

        let paused = try bells.ctl(["pause", "1h"])
        #expect(paused.status == 0, "\(paused)")
        let pauseLine = events.next()
        let pause = try #require(pauseLine)
        #expect(pause.contains(#""type":"bellsChanged""#) && pause.contains(#""request":"pause""#), "\(pause)")
        #expect(pause.contains(#""pausedUntil":"#), "\(pause)")
        _ = try bells.ctl(["resume"])
        let resumeLine = events.next()
        let resume = try #require(resumeLine)
        #expect(resume.contains(#""request":"resume""#) && !resume.contains("pausedUntil"), "\(resume)")
        // The subscription does not stop others being answered.
        #expect(try bells.ctl(["status"]).status == 0)
    }

    @Test func planListsTheDaysBellsWithWhatBecameOfEach() async throws {
        let bells = try await RunningBells.started(["--every", "1h", "--device", "null"], in: ScratchDirectory())
        let today = try ask(#"{"command":"plan","id":2}"#, socket: bells.socket)
        let fields = try #require(today["bells"] as? [String: Any])
        let plan = try #require(fields["plan"] as? [[String: Any]])
        #expect(plan.count == 24, "hourly bells all day")
        let now = Int64(Date().timeIntervalSince1970)
        for bell in plan {
            let due = try #require(bell["due"] as? Int64)
            let outcome = try #require(bell["outcome"] as? String)
            // Bells before gong bells started were never handled; those to come are planned.
            #expect(outcome == (due > now + 5 ? "planned" : due < now - 5 ? "unrecorded" : outcome), "\(bell)")
        }
        _ = try bells.ctl(["pause", "today"])
        let pausedPlan = try #require(
            (try ask(#"{"command":"plan"}"#, socket: bells.socket)["bells"] as? [String: Any])?["plan"]
                as? [[String: Any]])
        let coming = pausedPlan.filter { ($0["due"] as? Int64 ?? 0) > now + 5 }
        #expect(!coming.isEmpty || pausedPlan.count == 24)
        #expect(coming.allSatisfy { $0["reason"] as? String == "paused" }, "\(coming)")
        let bad = try ask(#"{"command":"plan","day":"2026-13-01"}"#, socket: bells.socket)
        #expect(bad["ok"] as? Bool == false)
        #expect((bad["error"] as? [String: Any])?["code"] as? String == "badArgument")
        let other = try ask(#"{"command":"plan","day":"2026-01-15"}"#, socket: bells.socket)
        #expect((other["bells"] as? [String: Any])?["day"] as? String == "2026-01-15", "the day asked for: \(other)")
    }
}
