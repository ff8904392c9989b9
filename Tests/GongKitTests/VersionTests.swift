import Foundation
import Testing

@testable import GongKit

@Suite struct VersionTests {
    @Test func theVersionIsTheReleaseNumberAndTheCommitBuiltFrom() throws {
        #expect(GongVersion.number.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil, "\(GongVersion.number)")
        if let commit = GongVersion.commit {
            // What scripts/build-commit.sh or git archive writes: an abbreviated hash, maybe dirty.
            #expect(commit.wholeMatch(of: /[0-9a-f]{7,40}(-dirty)?/) != nil, "\(commit)")
            #expect(GongVersion.description == "\(GongVersion.number) (\(commit))")
        } else {
            #expect(GongVersion.description == GongVersion.number)
        }
    }

    @Test func theStartedLineSaysWhichGongWroteItAndReadsBackTheSame() throws {
        let started = SessionEvent(
            .started(pattern: "box", device: "null", rate: 48000, channels: 2, format: "float32", latencyMs: 150))
        let line = started.jsonLine()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["version"] as? String == GongVersion.description)
        #expect(try JSONDecoder().decode(SessionEvent.self, from: Data(line.utf8)) == started)
        let phase = SessionEvent(.phaseBegan(phase: "inhale", cycle: 1, cycles: 1, seconds: 4), frame: 0)
        #expect(!phase.jsonLine().contains("\"version\""), "only started says it")
    }
}
