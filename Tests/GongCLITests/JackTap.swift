import CJackTap
import Foundation
import Glibc

/// What reached a JACK input port of the tests' own, on the server's frame clock (the C tap in
/// Tests/CJackTap): gong is told to play into it (`--device jack:PORT,…`), and JACK hands it
/// exactly what gong's port carried, cycle by cycle, each cycle at its own frame time. A cycle the
/// server ran without the tap (it woke late on a busy machine, or gong before it was late) is a
/// hole where it belongs, so the distance between two sounds is what the server's clock says,
/// whoever missed a cycle.
final class JackTap {
    /// The tap's input port, to name in gong's device.
    let port: String
    private let tap: OpaquePointer

    init(seconds: Int) throws {
        let server = JackServer.environment["JACK_DEFAULT_SERVER"] ?? "default"
        guard let tap = jack_tap_open(server, "gong_test_tap", UInt32(seconds * 48000)) else {
            throw POSIXError(.EIO)
        }
        self.tap = tap
        port = String(cString: jack_tap_port_name(tap))
    }

    /// Stops recording and reads it: the samples, NaN where no cycle reached the tap, and the
    /// cycles that did not.
    func finish() -> JackTapRecording {
        jack_tap_stop(tap)
        let samples = Array(UnsafeBufferPointer(start: jack_tap_samples(tap), count: Int(jack_tap_frames(tap))))
        return JackTapRecording(
            samples: samples, missedFrames: Int(jack_tap_missed_frames(tap)),
            movedCycles: Int(jack_tap_moved_cycles(tap)))
    }

    deinit { jack_tap_close(tap) }
}

/// A recording on JACK's frame clock, and the onsets in it that can be placed to the frame.
struct JackTapRecording {
    let samples: [Float]
    /// The frames of the cycles the tap did not hear (holes in `samples`).
    let missedFrames: Int
    /// Cycles the tap placed a cycle late at first and moved back (jack_tap.h).
    let movedCycles: Int

    /// Onsets (a second of quiet, then a sample over 0.01), each with whether the frame before it
    /// was recorded: one right after a hole may have begun inside it, so it cannot be placed.
    func placedOnsets(quietFrames: Int = 48000) -> [(frame: Int, placed: Bool)] {
        onsets(in: samples, quietFrames: quietFrames).map { ($0, $0 > 0 && !samples[$0 - 1].isNaN) }
    }

    /// The intervals between consecutive onsets, nil for one whose ends are not both placed.
    func intervals(quietFrames: Int = 48000) -> [Int?] {
        let heard = placedOnsets(quietFrames: quietFrames)
        return zip(heard, heard.dropFirst()).map { $0.placed && $1.placed ? $1.frame - $0.frame : nil }
    }

    /// Intervals as printed: "?" for one that cannot be placed.
    static func describe(_ intervals: [Int?]) -> String {
        intervals.map { $0.map(String.init) ?? "?" }.joined(separator: ", ")
    }

    /// Runs of at least `seconds` of silence (a hole is silent).
    func longSilences(atLeast seconds: Double) -> Int {
        LivePulseTests.longSilences(in: samples, atLeast: seconds)
    }
}
