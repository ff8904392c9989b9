import CGongStreams
import Foundation
import GongTestSupport
import Synchronization
import Testing

/// The ring a sound server's real-time callback reads from (PipeWire's, JACK's) while gong's
/// audio thread writes and takes back: frames come out in order, a take-back reaches only what
/// the reader has not claimed, and under two threads every frame read is the last version
/// written at its place.
@Suite struct FrameRingTests {
    /// One 8-byte frame: the frame's place in the stream, and which take-back generation wrote it.
    static func frame(_ index: Int64, generation: Int64) -> Int64 { generation << 40 | index }

    @Test func framesComeOutInOrderAcrossWrapAroundsAndTheLimitHolds() throws {
        let ring = try #require(gong_frame_ring_new(6, 8))  // rounded up to 8 slots
        defer { gong_frame_ring_free(ring) }
        var next: Int64 = 0, expected: Int64 = 0
        for round in 0..<2000 {
            let values = (0..<Int64(round % 7 + 1)).map { next + $0 }
            let written = values.withUnsafeBufferPointer {
                gong_frame_ring_write(ring, $0.baseAddress, UInt32($0.count), 5)
            }
            #expect(gong_frame_ring_filled(ring) <= 5)
            next += Int64(written)
            var out = [Int64](repeating: -1, count: round % 5 + 1)
            let read = out.withUnsafeMutableBufferPointer {
                gong_frame_ring_read(ring, $0.baseAddress, UInt32($0.count))
            }
            for value in out.prefix(Int(read)) {
                #expect(value == expected)
                expected += 1
            }
        }
        #expect(expected + Int64(gong_frame_ring_filled(ring)) == next)
    }

    @Test func aTakeBackReachesOnlyWhatTheReaderHasNotClaimed() throws {
        let ring = try #require(gong_frame_ring_new(16, 8))
        defer { gong_frame_ring_free(ring) }
        let values = (0..<10).map { Int64($0) }
        _ = values.withUnsafeBufferPointer { gong_frame_ring_write(ring, $0.baseAddress, 10, 16) }
        var out = [Int64](repeating: 0, count: 4)
        #expect(out.withUnsafeMutableBufferPointer { gong_frame_ring_read(ring, $0.baseAddress, 4) } == 4)
        #expect(gong_frame_ring_unclaimed(ring) == 6)
        #expect(gong_frame_ring_take_back(ring, 7) == 0, "one of the seven was claimed: nothing is taken")
        #expect(gong_frame_ring_take_back(ring, 6) == 6)
        #expect(gong_frame_ring_unclaimed(ring) == 0 && gong_frame_ring_filled(ring) == 0)
        let again: [Int64] = [40, 50]
        _ = again.withUnsafeBufferPointer { gong_frame_ring_write(ring, $0.baseAddress, 2, 16) }
        #expect(out.withUnsafeMutableBufferPointer { gong_frame_ring_read(ring, $0.baseAddress, 4) } == 2)
        #expect(Array(out.prefix(2)) == [40, 50], "the frames written after the take-back follow the claimed ones")
    }

    /// A writer that keeps taking back and rewriting (each time as a new generation) against a
    /// reader claiming chunks of every size: the reader sees every place once, in order, and at
    /// each place the last generation the writer wrote there — never a frame it took back.
    @Test func underTwoThreadsEveryFrameReadIsTheLastWrittenAtItsPlace() throws {
        let total: Int64 = 400_000
        let ring = try #require(gong_frame_ring_new(256, 8))
        defer { gong_frame_ring_free(ring) }
        let address = UInt(bitPattern: ring)
        let finalGeneration = UnsafeMutableBufferPointer<Int64>.allocate(capacity: Int(total))
        finalGeneration.initialize(repeating: -1)
        defer { finalGeneration.deallocate() }
        let generations = UInt(bitPattern: finalGeneration.baseAddress)
        let writerDone = Atomic<Bool>(false)

        let writer = Thread {
            let ring = OpaquePointer(bitPattern: address)!
            let finalGeneration = UnsafeMutablePointer<Int64>(bitPattern: generations)!
            var next: Int64 = 0, generation: Int64 = 0
            var random = SystemRandomNumberGenerator()
            var chunk = [Int64](repeating: 0, count: 64)
            while next < total {
                let count = Int(min(Int64.random(in: 1...64, using: &random), total - next))
                for offset in 0..<count {
                    chunk[offset] = FrameRingTests.frame(next + Int64(offset), generation: generation)
                }
                let written = chunk.withUnsafeBufferPointer {
                    gong_frame_ring_write(ring, $0.baseAddress, UInt32(count), 256)
                }
                for offset in 0..<Int(written) { finalGeneration[Int(next) + offset] = generation }
                next += Int64(written)
                if Int.random(in: 0..<4, using: &random) == 0 {
                    let reach = gong_frame_ring_unclaimed(ring)
                    let back = UInt32.random(in: 0...reach, using: &random)
                    if back > 0, gong_frame_ring_take_back(ring, back) == back {
                        next -= Int64(back)
                        generation += 1
                    }
                }
            }
            writerDone.store(true, ordering: .releasing)
        }
        writer.start()

        var seen: [Int64] = []
        seen.reserveCapacity(Int(total))
        var buffer = [Int64](repeating: 0, count: 100)
        while Int64(seen.count) < total {
            let want = UInt32.random(in: 1...100)
            let read = buffer.withUnsafeMutableBufferPointer { gong_frame_ring_read(ring, $0.baseAddress, want) }
            seen.append(contentsOf: buffer.prefix(Int(read)))
            // The ring rings no one (its reader is a real-time callback, which never sleeps):
            // an empty read backs off a moment, as such a reader's next callback would come.
            if read == 0 { usleep(50) }
        }
        #expect(Waiting.until { writerDone.load(ordering: .acquiring) }, "the writer thread finished")

        let places = seen.map { $0 & ((1 << 40) - 1) }
        #expect(places == Array(0..<total), "every place once, in order")
        let stale = seen.enumerated().filter { place, frame in frame >> 40 != finalGeneration[place] }
        #expect(stale.isEmpty, "frames read that a take-back had replaced: \(stale.prefix(5))")
    }
}
