import Foundation
import GongABI
import Testing

/// `gong_session_status` of a pulled session, through the C calls themselves (Tests/c/pull-status.c
/// checks the same from C, at every block size, with a pause from another thread).
struct PulledStatusABITests {
    static let toml = "name = \"seconds\"\ncycles = 10\n[[phases]]\nname = \"second\"\nlength = \"1s\"\n"

    @Test func afterPulling5_5SecondsTheStatusSaysCycle6HalfASecondInAtOnce() throws {
        var session: OpaquePointer?
        #expect(gong_session_create_pull_toml(Self.toml, nil, 48000, 2, &session, nil) == 0)
        let handle = try #require(session)
        defer { gong_session_free(handle) }
        #expect(gong_session_start(handle) == 0)
        var frames = [Float](repeating: 0, count: 2 * 4096)
        var pulled = 0
        // Heard a minute from now: when frames are heard does not move where the session is.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let heard = Int64(now.tv_sec + 60) * 1_000_000_000 + Int64(now.tv_nsec)
        while pulled < 48000 * 11 / 2 {
            let size = min(4096, 48000 * 11 / 2 - pulled)
            #expect(gong_render_at(handle, &frames, Int32(size), heard) == 0)
            pulled += size
        }
        var line: UnsafeMutablePointer<CChar>?
        #expect(gong_session_status(handle, &line) == 0)
        let text = try #require(line.map { String(cString: $0) })
        gong_free(line)
        let status = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(status["elapsedSeconds"] as? Double == 5.5, "\(text)")
        #expect(status["cycle"] as? Int == 6, "\(text)")
        #expect(status["phaseElapsedSeconds"] as? Double == 0.5, "\(text)")
    }
}
