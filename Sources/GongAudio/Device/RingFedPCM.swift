import CGongStreams
import Glibc
import GongCore

/// A device whose buffer is gong's own ring, kept ahead of a sound server's real-time callback
/// that takes each cycle from it (`gong_handoff.h`): PipeWire's stream and JACK's client. What
/// the engine asks of such a device is the same whichever server calls back, and is answered
/// here once:
/// - writes go to the ring, and a wait sleeps until the callback has freed a period of room, or
///   counted a loss (which is told at once, so that what is still in gong's hands is taken back);
/// - a take-back rewrites exactly the frames the callback has not claimed — never one it has;
/// - the status is the last cycle's: when the ring's next frame is heard, and every frame written
///   since follows it;
/// - a cycle the ring could not fill, or one the server ran without the callback, is an underrun
///   (`-EPIPE`, once each), whose cost the callback counted to the frame; a stream that is gone
///   is `-ENODEV`.
/// A subclass opens its server's stream, hands over the stream's hand-off, and closes the stream.
public class RingFedPCM: PCM {
    public let configuration: PCMConfiguration
    /// Nil once closed.
    private var handoff: OpaquePointer?
    private var wakeDescriptor: Int32 = -1
    /// Frames handed to the ring since it opened, less those taken back.
    private var writtenFrames: Int64 = 0
    /// Underruns already told as `-EPIPE`.
    private var underrunsTold: UInt64 = 0

    init(configuration: PCMConfiguration, handoff: OpaquePointer) {
        self.configuration = configuration
        self.handoff = handoff
    }

    /// Closes the server's stream, whose hand-off goes with it.
    func closeStream() {}

    /// `-ENODEV` once the stream is gone, `-EPIPE` once for each new underrun, else 0.
    private var failure: Int32 {
        guard let handoff, gong_handoff_state(handoff) == 0 else { return -ENODEV }
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        let underruns = counters.ring_underruns + counters.missed_cycles
        guard underruns > underrunsTold else { return 0 }
        underrunsTold = underruns
        return -EPIPE
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        let failed = failure
        guard failed == 0, let handoff else { return Int(failed) }
        let written = gong_handoff_write(
            handoff, bytes.assumingMemoryBound(to: Float.self), UInt32(clamping: max(0, frames)))
        guard written > 0 else { return Int(-EAGAIN) }
        writtenFrames += Int64(written)
        return Int(written)
    }

    public func wait(timeoutMs: Int32) -> Int32 {
        let failed = failure
        guard failed == 0, let handoff else { return failed }
        let result = gong_handoff_wait(handoff, UInt32(configuration.periodFrames), wakeDescriptor, timeoutMs)
        // A loss counted while waiting is told at once (`-EPIPE`), not when room comes.
        return result == 2 ? PCMWait.woken : result == 3 ? failure : result
    }

    /// Underruns need nothing re-prepared: the callback plays silence and carries on.
    public func recover(_ error: Int32) -> Int32 {
        guard error == -EPIPE || error == -ESTRPIPE else { return error }
        guard let handoff, gong_handoff_state(handoff) == 0 else { return -ENODEV }
        return 0
    }

    /// Waits until the callback has claimed everything written, then until the last frame is
    /// heard (at most the buffer's length and a second). A loss the callback counts meanwhile
    /// returns `-EPIPE` at once: the last cue (an end click) may still be in the ring, now heard
    /// late by the loss unless it is taken back and rendered again — as while playing.
    public func drain() -> Int32 {
        guard let handoff else { return -ENODEV }
        let deadline = MonotonicTime.now().nanoseconds + Int64(configuration.latencySeconds * 1e9) + 1_000_000_000
        gong_handoff_drain_begins(handoff)
        while gong_handoff_filled(handoff) > 0 {
            let failed = failure
            guard failed == 0 else {
                gong_handoff_drain_ends(handoff)
                return failed
            }
            let left = deadline - MonotonicTime.now().nanoseconds
            guard left > 0 else { return -ETIMEDOUT }
            // Woken when the ring is empty (the whole buffer is room), or at a loss.
            _ = gong_handoff_wait(
                handoff, UInt32(configuration.bufferFrames), -1, Int32(min(100, max(1, left / 1_000_000))))
        }
        if let status = status() {
            let last =
                status.timestamp.nanoseconds
                + FrameTime.nanoseconds(ofFrames: Int64(status.delayFrames), rate: Int64(configuration.rate))
            let left = min(last, deadline) - MonotonicTime.now().nanoseconds
            if left > 0 { usleep(UInt32(left / 1000)) }
        }
        return 0
    }

    public func status() -> PCMStatus? {
        guard let handoff, gong_handoff_state(handoff) == 0 else { return nil }
        var timing = gong_handoff_timing()
        gong_handoff_timing_read(handoff, &timing)
        guard timing.cycles > 0 else {
            let now = MonotonicTime.now()
            return PCMStatus(state: .prepared, delayFrames: 0, timestamp: now)
        }
        let ahead = writtenFrames - Int64(timing.next_frame)
        let delay =
            ahead + FrameTime.frames(inNanoseconds: timing.heard_ns - timing.now_ns, rate: Int64(configuration.rate))
        let measured = MonotonicTime(nanoseconds: timing.now_ns)
        return PCMStatus(state: .running, delayFrames: Int(delay), timestamp: measured)
    }

    /// What the callback has not yet claimed (the server holds nothing of gong's but the cycle
    /// it is playing), less `takeBackGuardFrames()`.
    public func rewindableFrames() -> Int {
        guard let handoff else { return 0 }
        return max(0, Int(gong_handoff_unclaimed(handoff)) - takeBackGuardFrames())
    }

    /// The unclaimed frames a take-back leaves in place: a cycle's worth (the last cycle's
    /// frames) and 10 ms. Taken back to the very frame the callback claims next, the ring is
    /// empty until the audio thread has rendered and written again, and a cycle that comes
    /// first plays silence, told as a loss at the pause itself, even on an idle machine. What is
    /// left is heard before the pause or skip, so a key costs that much more: about 15 ms beside
    /// a 256-frame cycle, 53 ms at a quantum of 2 048.
    public func takeBackGuardFrames() -> Int {
        guard let handoff else { return 0 }
        var timing = gong_handoff_timing()
        gong_handoff_timing_read(handoff, &timing)
        return Int(timing.frames) + configuration.rate / 100
    }

    public func rewind(frames: Int) -> Int {
        guard let handoff, frames > 0, frames <= Int(UInt32.max) else { return 0 }
        let taken = Int(gong_handoff_take_back(handoff, UInt32(frames)))
        writtenFrames -= Int64(taken)
        return taken
    }

    public func wakeWhenReadable(_ descriptor: Int32) { wakeDescriptor = descriptor }

    /// What the callback played as silence for want of frames, and the frames of the cycles
    /// the server ran without it: both counted there, each to the frame.
    public func silenceHeardFrames() -> Int64? {
        guard let handoff else { return nil }
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        return Int64(clamping: counters.ring_silent_frames &+ counters.missed_frames)
    }

    /// The time the server's clock stood still, as the callback saw it (JACK's only: PipeWire's
    /// graph skips its position on when it runs late, which is `silenceHeardFrames`).
    public func clockStoppedNanoseconds() -> Int64? {
        guard let handoff else { return nil }
        var counters = gong_handoff_counters()
        gong_handoff_counters_read(handoff, &counters)
        return Int64(clamping: counters.clock_stopped_ns)
    }

    /// Where the callback saw the earliest loss since the last call land in the ring: its
    /// frames claimed and this stream's frames written count alike from the stream's start.
    public func takeLossFrame() -> Int64? {
        guard let handoff else { return nil }
        let frame = gong_handoff_take_loss_frame(handoff)
        return frame == UInt64.max ? nil : Int64(clamping: frame)
    }

    public func close() {
        guard handoff != nil else { return }
        handoff = nil
        closeStream()
    }
}
