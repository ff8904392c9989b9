import GongCore
import Testing

@testable import GongKit

@Suite struct StartDelayRenderTests {
    /// A delayed render is the plain one after exactly the delay's frames of silence, sample for sample.
    @Test func aDelayedRenderIsThePlainOneShiftedByExactlyTheDelay() throws {
        var pattern = GongSessionPullTests.short
        pattern.startCue = Cue("chime")
        let plain = try GongSessionPullTests.offline(pattern, gainDB: 0, rate: 48000, channels: 1)
        pattern.startDelay = Rational(3, 2)!
        let delayed = try GongSessionPullTests.offline(pattern, gainDB: 0, rate: 48000, channels: 1)
        #expect(delayed.count == plain.count + 72000)
        #expect(delayed[0..<72000].allSatisfy { $0 == 0 })
        #expect(Array(delayed[72000...]) == plain)
    }
}
