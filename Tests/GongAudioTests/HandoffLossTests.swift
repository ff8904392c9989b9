import CGongStreams
import Foundation
import Testing

/// A cycle the server ran without gong's callback reaches gong's audio thread at once, however
/// long its wait would have lasted: every frame in the ring is heard late by the loss from then on,
/// and only what gong has not yet handed over can be taken back and rendered again on its time.
/// Told at its next wait for room instead (a period of its own later: up to 125 ms on JACK), a
/// cue claimed in between was heard a JACK cycle late while gong said it was on its frame
/// (issue 38); told only after the drain, an end click still in the ring was.
@Suite struct HandoffLossTests {
    /// The hand-off a thread of its own waits on, and what its `gong_handoff_wait` returned
    /// (written before it signals).
    final class Answer: @unchecked Sendable {
        let handoff: OpaquePointer
        var value: Int32?
        init(_ handoff: OpaquePointer) { self.handoff = handoff }
    }

    /// Waits for `frames` of room (10 s at most) on a thread of its own while cycles the server
    /// ran without the callback come, one every 20 ms until the wait ends: what it returned,
    /// and how long it waited.
    static func waitThroughMissedCycles(_ handoff: OpaquePointer, forRoom frames: UInt32) -> (Int32?, Double) {
        let answer = Answer(handoff)
        let done = DispatchSemaphore(value: 0)
        let started = Date()
        Thread {
            answer.value = gong_handoff_wait(answer.handoff, frames, -1, 10_000)
            done.signal()
        }.start()
        // A loss counted before the wait began is not the wait's to tell (RingFedPCM reads the
        // counters first): cycles come until one ends it.
        var cycle = [Float](repeating: 0, count: 256)
        var cycles = 0
        while done.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            if cycles == 200 {
                done.wait()
                break
            }
            _ = gong_handoff_run_cycle(handoff, 256, &cycle, 0)
            cycles += 1
        }
        return (answer.value, Date().timeIntervalSince(started))
    }

    /// A full ring of 4 096 one-float frames that has begun playing (one cycle claimed).
    static func playingRing() throws -> OpaquePointer {
        let handoff = try #require(gong_handoff_new(4096, 4))
        let silence = [Float](repeating: 0, count: 4096)
        #expect(gong_handoff_write(handoff, silence, 4096) == 4096)
        var cycle = [Float](repeating: 0, count: 256)
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 256) == 256)
        return handoff
    }

    /// gong waits for 2 048 frames of room; the cycles the server runs without the callback claim
    /// none, so no room comes: the first loss counted ends the wait with 3.
    @Test func aCycleMissedWhileGongWaitsForRoomEndsTheWaitAtOnce() throws {
        let handoff = try Self.playingRing()
        defer { gong_handoff_free(handoff) }
        let (answer, waited) = Self.waitThroughMissedCycles(handoff, forRoom: 2048)
        #expect(answer == 3 && waited < 5, "the wait ended with \(String(describing: answer)) after \(waited) s")
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        #expect(counters.missed_cycles >= 1 && counters.missed_frames == 256 * counters.missed_cycles)
    }

    /// The same while the last frames play out (the drain waits for the whole ring to be room).
    @Test func aCycleMissedWhileDrainingEndsTheWaitForTheEmptyRing() throws {
        let handoff = try Self.playingRing()
        defer { gong_handoff_free(handoff) }
        gong_handoff_drain_begins(handoff)
        let (answer, waited) = Self.waitThroughMissedCycles(handoff, forRoom: 4096)
        #expect(answer == 3 && waited < 5, "the wait ended with \(String(describing: answer)) after \(waited) s")
    }

    /// And nothing else ends it early: cycles that claim frames end it with room (1).
    @Test func cyclesThatClaimEndTheWaitWithRoom() throws {
        let handoff = try Self.playingRing()
        defer { gong_handoff_free(handoff) }
        let done = DispatchSemaphore(value: 0)
        let answer = Answer(handoff)
        Thread {
            answer.value = gong_handoff_wait(answer.handoff, 2048, -1, 10_000)
            done.signal()
        }.start()
        var cycle = [Float](repeating: 0, count: 256)
        while done.wait(timeout: .now() + .milliseconds(20)) == .timedOut {
            _ = gong_handoff_run_cycle(handoff, 0, &cycle, 256)
        }
        #expect(answer.value == 1)
    }
}

/// Where a loss lands in the ring: the callback keeps the earliest frame (frames claimed since
/// the stream began) a loss came before, until gong takes it; every frame from there on is heard
/// late by the loss, so gong can tell what it no longer could take back as heard late.
@Suite struct HandoffLossFrameTests {
    @Test func noLossLandedIsNone() throws {
        let handoff = try HandoffLossTests.playingRing()
        defer { gong_handoff_free(handoff) }
        #expect(gong_handoff_take_loss_frame(handoff) == UInt64.max)
    }

    /// A cycle missed before the cycle that claims from 256 on lands at 256; taken, it is gone.
    @Test func aMissedCycleLandsWhereTheNextCycleClaimsFromAndIsTakenOnce() throws {
        let handoff = try HandoffLossTests.playingRing()
        defer { gong_handoff_free(handoff) }
        var cycle = [Float](repeating: 0, count: 256)
        #expect(gong_handoff_run_cycle(handoff, 256, &cycle, 256) == 256)
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        #expect(counters.missed_cycles == 1 && counters.missed_frames == 256)
        #expect(gong_handoff_take_loss_frame(handoff) == 256)
        #expect(gong_handoff_take_loss_frame(handoff) == UInt64.max)
    }

    /// JACK tells a jump a cycle after the cycle that saw it: told with that cycle's first frame,
    /// the loss lands there, before frames already claimed.
    @Test func aJumpToldACycleLateLandsBeforeTheCycleThatSawIt() throws {
        let handoff = try HandoffLossTests.playingRing()
        defer { gong_handoff_free(handoff) }
        var cycle = [Float](repeating: 0, count: 256)
        let began = gong_handoff_claimed(handoff)
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 256) == 256)
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 256) == 256)
        gong_handoff_miss(handoff, 256, began)
        #expect(began == 256 && gong_handoff_take_loss_frame(handoff) == 256)
    }

    /// A jump seen before the stream's first frame was claimed and told a cycle later, once
    /// frames flow (a process stopped as its session started): nothing of gong's was lost, and
    /// nothing is counted; the first frame's own timing says it is heard late. A jump seen a frame
    /// later is a loss.
    @Test func aJumpBeforeTheFirstFrameIsNoLoss() throws {
        let handoff = try #require(gong_handoff_new(4096, 4))
        defer { gong_handoff_free(handoff) }
        let silence = [Float](repeating: 0, count: 4096)
        #expect(gong_handoff_write(handoff, silence, 4096) == 4096)
        var cycle = [Float](repeating: 0, count: 256)
        let began = gong_handoff_claimed(handoff)
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 256) == 256)
        gong_handoff_miss(handoff, 38144, began)
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        #expect(began == 0 && counters.missed_cycles == 0 && counters.missed_frames == 0)
        #expect(gong_handoff_take_loss_frame(handoff) == UInt64.max)
        gong_handoff_miss(handoff, 256, 1)
        gong_handoff_counters_read(handoff, &counters)
        #expect(counters.missed_cycles == 1 && counters.missed_frames == 256)
        #expect(gong_handoff_take_loss_frame(handoff) == 1)
    }

    /// Two losses before gong looks: the earlier is kept (a cue between them is said late by
    /// both, never by less than it was). A ring run dry lands where the next claim begins.
    @Test func theEarliestOfTwoLossesIsKeptAndARingRunDryLandsAfterItsLastFrame() throws {
        let handoff = try HandoffLossTests.playingRing()
        defer { gong_handoff_free(handoff) }
        var cycle = [Float](repeating: 0, count: 4096)
        #expect(gong_handoff_run_cycle(handoff, 256, &cycle, 256) == 256)
        // The ring holds 3 584 more: a cycle of 4 096 claims them and plays 512 of silence.
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 4096) == 3584)
        #expect(gong_handoff_take_loss_frame(handoff) == 256)
        #expect(gong_handoff_run_cycle(handoff, 0, &cycle, 256) == 0)
        #expect(gong_handoff_take_loss_frame(handoff) == 4096)
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        #expect(counters.ring_underruns == 2 && counters.ring_silent_frames == 512 + 256)
    }
}
