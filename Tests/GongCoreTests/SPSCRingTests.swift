import Foundation
import GongCore
import Testing

@Suite struct SPSCRingTests {
    @Test func capacityRoundsUpToAPowerOfTwo() {
        #expect(SPSCRing<Int>(minimumCapacity: 1).capacity == 1)
        #expect(SPSCRing<Int>(minimumCapacity: 5).capacity == 8)
        #expect(SPSCRing<Int>(minimumCapacity: 1024).capacity == 1024)
    }

    @Test func aFullRingRefusesWithoutOverwritingAndAnEmptyOneReturnsNil() {
        let ring = SPSCRing<Int>(minimumCapacity: 4)
        #expect(ring.tryPop() == nil)
        for value in 0..<4 { #expect(ring.tryPush(value)) }
        #expect(!ring.tryPush(99))
        #expect(ring.approximateCount == 4)
        #expect((0..<4).map { _ in ring.tryPop() } == [0, 1, 2, 3])
        #expect(ring.tryPop() == nil)
    }

    @Test func orderHoldsAcrossManyWrapArounds() {
        let ring = SPSCRing<Int>(minimumCapacity: 8)
        var next = 0, expected = 0
        for round in 0..<10_000 {
            let burst = round % 8 + 1
            for _ in 0..<burst where ring.tryPush(next) { next += 1 }
            while let value = ring.tryPop() {
                #expect(value == expected)
                expected += 1
            }
        }
        #expect(expected == next)
    }

    @Test func renderEventsArriveIntact() {
        let ring = SPSCRing<RenderEvent>(minimumCapacity: 16)
        let event = RenderEvent(
            kind: .cueStarted(sound: 7, scheduledFrame: 1 << 40), sessionFrame: -3, outputFrame: Int64.max)
        #expect(ring.tryPush(event))
        #expect(ring.tryPop() == event)
    }

    /// A multi-word element on two threads: a torn or lost element, a duplicate or a reordering
    /// would break the sequence. Run under `--sanitize=thread` in CI.
    @Test func twoThreadsPassAMillionElementsWithoutLossDuplicationOrTearing() async {
        struct Wide: BitwiseCopyable, Equatable {
            var tag: UInt8
            var sequence: Int64
            var check: Double
        }
        let count = 1_000_000
        let ring = SPSCRing<Wide>(minimumCapacity: 256)
        let producer = Thread {
            var value = 0
            while value < count {
                if ring.tryPush(
                    Wide(tag: UInt8(truncatingIfNeeded: value), sequence: Int64(value), check: Double(value) * 0.5))
                {
                    value += 1
                }
            }
        }
        producer.start()
        var expected = 0
        var broken = 0
        while expected < count {
            guard let element = ring.tryPop() else { continue }
            if element
                != Wide(
                    tag: UInt8(truncatingIfNeeded: expected), sequence: Int64(expected), check: Double(expected) * 0.5)
            {
                broken += 1
            }
            expected += 1
        }
        #expect(broken == 0)
        #expect(ring.tryPop() == nil)
    }
}
