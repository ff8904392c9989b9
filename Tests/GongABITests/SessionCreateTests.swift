import Foundation
import GongABI
import GongKit
import Testing

/// The four `gong_session_create*` calls share one path: what each refuses, with which status
/// and line, and that a good call gives a session a host can pull.
struct SessionCreateTests {
    static let toml = "name = \"one\"\n[[phases]]\nname = \"sit\"\nlength = \"1s\"\ncue = \"bowl\"\n"

    /// Calls `body` with the out and error slots; the status, the session and the error line.
    func attempt(
        _ body: (UnsafeMutablePointer<OpaquePointer?>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32
    ) -> (status: Int32, session: OpaquePointer?, error: String?) {
        var session: OpaquePointer? = OpaquePointer(bitPattern: 1)  // overwritten on every path
        var error: UnsafeMutablePointer<CChar>?
        let status = body(&session, &error)
        defer { gong_free(error) }
        return (status, session, error.map { String(cString: $0) })
    }

    @Test func theVersionIsTheOneGongPrints() {
        #expect(String(cString: gong_version()) == GongVersion.description)
        #expect(gong_version() == gong_version(), "one string for the life of the process")
    }

    @Test func aNullPatternIsAnArgumentErrorOnEveryCall() {
        let calls: [(String, Int32, OpaquePointer?, String?)] = [
            ("create", attempt { gong_session_create(nil, nil, nil, $0, $1) }),
            ("create_toml", attempt { gong_session_create_toml(nil, nil, nil, $0, $1) }),
            ("create_pull", attempt { gong_session_create_pull(nil, nil, 48000, 2, $0, $1) }),
            ("create_pull_toml", attempt { gong_session_create_pull_toml(nil, nil, 48000, 2, $0, $1) })
        ].map { ($0.0, $0.1.status, $0.1.session, $0.1.error) }
        for (name, status, session, error) in calls {
            #expect(status == 1 && session == nil, "\(name): \(status)")
            let expected = name.hasSuffix("toml") ? "toml: NULL;" : "pattern: NULL;"
            #expect(error?.hasPrefix(expected) == true, "\(name): \(error ?? "no error line")")
        }
    }

    @Test func aPatternThatCannotBeReadIsAPatternError() {
        let named = attempt { gong_session_create_pull("no-such-pattern", nil, 48000, 2, $0, $1) }
        #expect(named.status == 2 && named.session == nil && named.error?.contains("no-such-pattern") == true)
        let text = attempt { gong_session_create_toml("name = ", nil, "null", $0, $1) }
        #expect(text.status == 2 && text.session == nil && text.error != nil, "\(text.error ?? "")")
    }

    @Test func optionsAPulledSessionDoesNotTakeAreRefused() {
        let refused = attempt { gong_session_create_pull_toml(Self.toml, "{\"rate\": 44100}", 48000, 2, $0, $1) }
        #expect(refused.status == 1 && refused.session == nil)
        #expect(refused.error == "options: unknown key \"rate\"; use gainDB", "\(refused.error ?? "")")
    }

    @Test func noOutSlotIsAnArgumentError() {
        var error: UnsafeMutablePointer<CChar>?
        #expect(gong_session_create_pull_toml(Self.toml, nil, 48000, 2, nil, &error) == 1)
        #expect(error.map { String(cString: $0) }?.hasPrefix("out: NULL;") == true)
        gong_free(error)
    }

    @Test func aPulledSessionFromTOMLGivesItsBowlOnFrameZero() {
        let made = attempt { gong_session_create_pull_toml(Self.toml, "{\"gainDB\": -6}", 48000, 2, $0, $1) }
        #expect(made.status == 0 && made.error == nil)
        guard let session = made.session else { return }
        defer { gong_session_free(session) }
        #expect(gong_session_start(session) == 0)
        var frames = [Float](repeating: 0, count: 2 * 4800)
        #expect(gong_render(session, &frames, 4800) == 0)
        #expect(frames.contains { abs($0) > 0.01 }, "the bowl sounds in the first 100 ms")
    }
}
