import GongCore
import Testing

@testable import GongBench

/// Ctrl-C's way into a benchmark: what is waited on is ended once, and only while it is waited on.
@Suite struct BenchInterruptionTests {
    final class Endings: Sendable {
        let count = Locked(0)
        var ending: @Sendable () -> Void { { self.count.withLock { $0 += 1 } } }
        var total: Int { count.withLock { $0 } }
    }

    @Test func aRequestEndsWhatIsWaitedOnThenAndAfter() {
        let interruption = BenchInterruption()
        let before = Endings(), during = Endings(), after = Endings()
        interruption.whileWaiting(endedBy: before.ending) {}
        #expect(!interruption.isRequested)
        interruption.whileWaiting(endedBy: during.ending) {
            interruption.request()
            interruption.request()
        }
        #expect(interruption.isRequested)
        // Asked before the wait: ended at once, so it never starts waiting for nothing.
        let ranBody = interruption.whileWaiting(endedBy: after.ending) { after.total == 1 }
        #expect(before.total == 0)
        #expect(during.total == 1)
        #expect(ranBody && after.total == 1)
    }
}
