import CJackTap
import CPipeWireTap
import CPulseTap
import Foundation
import Glibc
import GongTestSupport
import Testing

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

    /// `lateAtOnsets`: the tap's own calls whose port holds an onset begin that many
    /// microseconds late, one after another (`jack_tap_be_late_at_onsets`: the witness proved
    /// against a late call of its own).
    init(seconds: Int, lateAtOnsets: [UInt32] = []) throws {
        let server = JackServer.environment["JACK_DEFAULT_SERVER"] ?? "default"
        guard let tap = jack_tap_open(server, "gong_test_tap", UInt32(seconds * 48000)) else {
            throw POSIXError(.EIO)
        }
        self.tap = tap
        port = String(cString: jack_tap_port_name(tap))
        if !lateAtOnsets.isEmpty { jack_tap_be_late_at_onsets(tap, lateAtOnsets, UInt32(lateAtOnsets.count)) }
    }

    /// How many of the calls `lateAtOnsets` asked for have begun late so far.
    var lateCalls: Int { Int(jack_tap_late_calls(tap)) }

    /// A tap connected to nothing, for `frames` frames: cycles reach it only through
    /// `record(cycleAt:channel:)`, so how it places them is tested without a server.
    init(unconnectedFrames frames: Int) {
        tap = jack_tap_new(UInt32(frames))!
        port = ""
    }

    /// Hands the tap a cycle as its process callback would: `channel` read at frame time
    /// `frameTime`.
    func record(cycleAt frameTime: UInt32, channel: [Float]) {
        jack_tap_record_cycle(tap, frameTime, channel, UInt32(channel.count))
    }

    /// The cycle at `frameTime` was copied while the server moved on (jack_tap.h).
    func leaveOut(cycleAt frameTime: UInt32, frames: Int) {
        jack_tap_leave_out_cycle(tap, frameTime, UInt32(frames))
    }

    /// Stops recording and reads it: the samples, NaN where no cycle reached the tap, and the
    /// cycles that did not.
    func finish() -> TapRecording {
        jack_tap_stop(tap)
        let samples = Array(UnsafeBufferPointer(start: jack_tap_samples(tap), count: Int(jack_tap_frames(tap))))
        var xruns = [Int64](repeating: 0, count: Int(JACK_TAP_MAX_XRUNS))
        var driver = [Int32](repeating: 0, count: xruns.count)
        let reported = Int(jack_tap_xruns(tap, &xruns, &driver, UInt32(xruns.count)))
        return TapRecording(
            samples: samples, missedFrames: Int(jack_tap_missed_frames(tap)),
            rereadCycles: Int(jack_tap_reread_cycles(tap)) + Int(jack_tap_doubtful_cycles(tap)),
            serverXruns: xruns.prefix(reported).map { Int($0) },
            driverXruns: (0..<reported).filter { driver[$0] != 0 }.map { Int(xruns[$0]) },
            cycleTimes: cycleTimes)
    }

    /// When each of the tap's calls began (jack_tap.h).
    private var cycleTimes: [TapRecording.CycleTime] {
        var count: UInt32 = 0
        let times = jack_tap_cycle_times(tap, &count)
        return UnsafeBufferPointer(start: times, count: Int(count)).map { ($0.frame, $0.usecs) }
    }

    /// Notes a cycle's time as the process callback does, for a tap connected to nothing.
    func note(cycleAt frameTime: UInt32, usecs: Int64) {
        jack_tap_note_cycle_time(tap, frameTime, usecs)
    }

    deinit { jack_tap_close(tap) }
}

/// What reached a PipeWire sink, recorded from its monitor on the graph's clock (the C tap in
/// Tests/CPipeWireTap): each cycle at the driver's position, so a cycle the whole graph missed
/// (its driver stalled on a busy machine) is a hole, where parec, a follower that splices what it
/// gets, loses it and shortens every interval across it. gong keeps its cues on the device's
/// clock through such a stall; this is the recording in which that can be checked.
final class PipeWireTap {
    private let tap: OpaquePointer

    /// Records the monitor of `sink` on the server the environment names (its
    /// PIPEWIRE_RUNTIME_DIR), for at most `seconds`.
    /// `lateAtOnsets`: as JackTap's, the tap's own calls whose cycle holds an onset begin that
    /// many microseconds late.
    init(sink: String, environment: [String: String], seconds: Int, lateAtOnsets: [UInt32] = []) throws {
        let runtime =
            environment["PIPEWIRE_RUNTIME_DIR"] ?? ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        guard let tap = pipewire_tap_open(runtime + "/pipewire-0", sink, UInt32(seconds * 48000), 10_000) else {
            throw POSIXError(.EIO)
        }
        self.tap = tap
        if !lateAtOnsets.isEmpty { pipewire_tap_be_late_at_onsets(tap, lateAtOnsets, UInt32(lateAtOnsets.count)) }
    }

    /// How many of the calls `lateAtOnsets` asked for have begun late so far.
    var lateCalls: Int { Int(pipewire_tap_late_calls(tap)) }

    /// The quantum the graph of the rig's `sink` runs at, in frames: the cycles a tap records in
    /// a fifth of a second, the length most of them have.
    static func quantumFrames(sink: String) throws -> Int {
        let tap = try PipeWireTap(sink: sink, environment: SoundServer.pipeWire.environment, seconds: 1)
        usleep(200_000)
        return tap.finish().quantumFrames
    }

    /// A tap connected to nothing, for `frames` frames: cycles reach it only through
    /// `record(cycleAt:channel:)`, so how it places them is tested without a server.
    init(unconnectedFrames frames: Int) {
        tap = pipewire_tap_new(UInt32(frames))!
    }

    /// Hands the tap a cycle as its data thread would: `channel` (the recorded channel's
    /// samples) at graph position `position`.
    /// `inDoubt`: the call did not wake a period after the last.
    func record(cycleAt position: UInt64, channel: [Float], inDoubt: Bool = false) {
        let interleaved: [Float] = channel.flatMap { [$0, 0] }
        pipewire_tap_record_cycle(tap, position, interleaved, UInt32(channel.count), inDoubt ? 1 : 0)
    }

    /// Stops recording and reads it: the samples, NaN where no cycle reached the tap.
    func finish() -> TapRecording {
        pipewire_tap_stop(tap)
        let frames = Int(pipewire_tap_frames(tap))
        let samples = Array(UnsafeBufferPointer(start: pipewire_tap_samples(tap), count: frames))
        let doubtful = UnsafeBufferPointer(start: pipewire_tap_doubtful(tap), count: frames)
        var count: UInt32 = 0
        let times = UnsafeBufferPointer(start: pipewire_tap_cycle_times(tap, &count), count: Int(count))
        return TapRecording(
            samples: samples, missedFrames: Int(pipewire_tap_missed_frames(tap)),
            rereadCycles: Int(pipewire_tap_moved_cycles(tap)), cycleTimes: times.map { ($0.frame, $0.usecs) },
            doubtful: Array(doubtful), stackedCalls: Int(pipewire_tap_stacked_calls(tap)))
    }

    deinit { pipewire_tap_close(tap) }
}

/// What reached a PulseAudio sink, recorded from its monitor (the C tap in Tests/CPulseTap), with
/// the server's own account of when its frames were played: after each block it reads, the tap
/// asks the server for the stream's timing, and each answer says which frame of the recording
/// the sink was playing at that instant of the server's clock. A sink renders ahead of what it
/// plays and hands its monitor the frames as it renders them (a null sink up to its latency
/// ahead), so when a block arrives says when it was rendered; the timing says when it is heard.
final class PulseTap {
    private let tap: OpaquePointer

    /// Records the monitor of `sink` on `server` for at most `seconds`, in blocks of
    /// `fragmentMs`.
    init(server: SoundServer = .pulseAudio, sink: String = "gong_test", seconds: Int, fragmentMs: Int = 10) throws {
        let capacity = UInt32(seconds * 48000)
        // A timing reply and an arrival a block, and room for blocks half as long.
        let replies = UInt32(seconds * 2000 / fragmentMs)
        guard
            let tap = pulse_tap_open(
                server.environment["PULSE_SERVER"], sink, capacity, replies, UInt32(fragmentMs),
                Int32(Waiting.generousSeconds * 1000))
        else { throw POSIXError(.EIO) }
        self.tap = tap
    }

    /// What the tap recorded.
    struct Recording {
        var samples: [Float]
        /// The server's timing replies, each as the frame the sink was playing at its instant
        /// (an `Arrival` of no frames, placed by `SinkClock` as `.fromItsFirstFrame`).
        var played: [SinkClock.Arrival]
        /// The blocks as they reached the tap, on its own clock: when each was rendered.
        var arrivals: [SinkClock.Arrival]
        /// Frames the server handed over as holes, or past the tap's capacity.
        var holeFrames: Int
        var droppedFrames: Int
    }

    /// Stops recording and reads it.
    func finish() -> Recording {
        pulse_tap_stop(tap)
        let samples = Array(UnsafeBufferPointer(start: pulse_tap_samples(tap), count: Int(pulse_tap_frames(tap))))
        let played = UnsafeBufferPointer(start: pulse_tap_timings(tap), count: Int(pulse_tap_timing_count(tap)))
            .map(Self.played)
        let blocks = UnsafeBufferPointer(start: pulse_tap_arrivals(tap), count: Int(pulse_tap_arrival_count(tap)))
        let arrivals = blocks.map {
            SinkClock.Arrival(firstFrame: Int($0.first_frame), frames: Int($0.frames), seconds: Double($0.usec) / 1e6)
        }
        return Recording(
            samples: samples, played: played, arrivals: arrivals, holeFrames: Int(pulse_tap_hole_frames(tap)),
            droppedFrames: Int(pulse_tap_dropped_frames(tap)))
    }

    /// A timing reply as the frame the sink was playing at the reply's instant: what the
    /// stream's queue had been given, and what the source still held, less what the sink had
    /// rendered and not yet played (libpulse's own pa_stream_get_time reckons a monitor's
    /// position so).
    static func played(by timing: pulse_tap_timing) -> SinkClock.Arrival {
        let ahead = (Double(timing.source_usec) - Double(timing.sink_usec)) * 48000 / 1e6
        return SinkClock.Arrival(
            firstFrame: Int(timing.write_index / 4) + Int(ahead.rounded()), frames: 0,
            seconds: Double(timing.usec) / 1e6)
    }

    deinit { pulse_tap_close(tap) }
}

/// A recording on a server's own clock (JACK's frame time, PipeWire's graph position), and the
/// onsets in it that can be placed to the frame.
struct TapRecording {
    let samples: [Float]
    /// The frames of the cycles the tap did not hear (holes in `samples`).
    let missedFrames: Int
    /// Cycles a late call of the tap's read early, which the server then ran again (JACK's tap
    /// also counts those it left out, the server having moved on while it copied them); what
    /// each tap does with them, jack_tap.h and pipewire_tap.h say.
    let rereadCycles: Int
    /// Where on the recording the server reported an xrun (JACK's, as jack2 tells every client
    /// that one was late for a cycle), a little after the cycle it was about; one xrun reported
    /// twice counts once (`distinctReports`).
    let serverXruns: [Int]
    /// Those of them the server's driver had (jack_tap.h): each time its clock may have stood.
    let driverXruns: [Int]
    /// A cycle's first frame on the recording and its time, microseconds of CLOCK_MONOTONIC.
    typealias CycleTime = (frame: Int64, usecs: Int64)
    /// Cycle by cycle, in order: when JACK's tap was woken for each (jack_tap.h), or the graph's
    /// own time of each on PipeWire (pipewire_tap.h).
    let cycleTimes: [CycleTime]
    /// Beside each frame, 1 where a call in doubt recorded it (PipeWire's tap:
    /// pipewire_tap_doubtful): no onset there is placed. Empty for JACK's tap.
    let doubtful: [UInt8]
    /// The PipeWire tap's calls that found more than one buffer waiting
    /// (pipewire_tap_stacked_calls); 0 for JACK's tap.
    let stackedCalls: Int

    init(
        samples: [Float], missedFrames: Int, rereadCycles: Int, serverXruns: [Int] = [], driverXruns: [Int] = [],
        cycleTimes: [CycleTime] = [], doubtful: [UInt8] = [], stackedCalls: Int = 0
    ) {
        self.samples = samples
        self.missedFrames = missedFrames
        self.rereadCycles = rereadCycles
        self.serverXruns = Self.distinctReports(serverXruns)
        self.driverXruns = Self.distinctReports(driverXruns)
        self.cycleTimes = cycleTimes
        self.doubtful = doubtful
        self.stackedCalls = stackedCalls
    }

    /// Where the distance from one cycle's first frame to the next's changed, and to what: the
    /// graph's quantum changing on PipeWire (or a cycle the tap missed between). Each change of
    /// the quantum leaves the tap a hole it tells, and the onsets after it on their frames
    /// (bench/RESULTS.md, stop 59). For whoever reads a failure.
    var cycleLengthChanges: [(frame: Int64, frames: Int64)] {
        let frames = cycleTimes.map(\.frame)
        var changes: [(frame: Int64, frames: Int64)] = []
        for (from, to) in zip(frames, frames.dropFirst()) where changes.last?.frames != to - from {
            changes.append((from, to - from))
        }
        return changes
    }

    /// The length most of the recording's cycles have, in frames: the graph's quantum on
    /// PipeWire. 0 for fewer than two cycles.
    var quantumFrames: Int {
        let frames = cycleTimes.map(\.frame)
        let lengths = zip(frames, frames.dropFirst()).map { Int($1 - $0) }.sorted()
        return lengths.isEmpty ? 0 : lengths[lengths.count / 2]
    }

    /// When the server played frame `frame` of the recording, in seconds of CLOCK_MONOTONIC: the
    /// frame's time by the earliest cycle time (the least of each less its cycle's frames at
    /// 48 kHz) among the cycles from the one that holds it to half a second on, as JACK's
    /// wake-ups are never early and one in a run is on time (PipeWire's graph times are exact).
    /// Nil with no cycle time there.
    func serverSeconds(atFrame frame: Int) -> Double? {
        guard let holder = cycleTimes.map(\.frame).filter({ $0 <= frame }).max() else { return nil }
        let earliest = cycleTimes.filter { (holder..<Int64(frame + 24000)).contains($0.frame) }.map(Self.offset).min()
        return earliest.map { $0 + Double(frame) / 48000 }
    }

    /// How far apart the server's clock puts two onsets (`placedOnsets`), in seconds, and to
    /// within how much: a 256-frame cycle for each that could not be placed. Nil if either has
    /// no wake-up to place it by.
    func serverSecondsApart(
        _ first: (frame: Int, placed: Bool), _ second: (frame: Int, placed: Bool)
    ) -> (seconds: Double, within: Double)? {
        guard let from = serverSeconds(atFrame: first.frame), let to = serverSeconds(atFrame: second.frame) else {
            return nil
        }
        return (to - from, Double([first, second].filter { !$0.placed }.count) * 256 / 48000)
    }

    /// Where the server's clock stood still for more than `seconds`: the earliest wake-up of
    /// each quarter of a second, less its frames, against the quarter's before (wake-ups are
    /// never early, so a later earliest one is the clock's doing): at which frame the quarter
    /// that moved on begins, and by how much.
    func clockStops(over seconds: Double = 0.0005) -> [(frame: Int, seconds: Double)] {
        let quarters = Dictionary(grouping: cycleTimes) { $0.frame / 12000 }
            .mapValues { $0.map { Self.offset(of: $0) }.min() ?? 0 }.sorted { $0.key < $1.key }
        return zip(quarters, quarters.dropFirst()).compactMap { before, after in
            let stood = after.value - before.value
            return after.key == before.key + 1 && stood > seconds ? (Int(after.key) * 12000, stood) : nil
        }
    }

    /// A wake-up's time less its cycle's frames at 48 kHz, in seconds: when frame 0 was played by it.
    private static func offset(of cycle: CycleTime) -> Double {
        Double(cycle.usecs) / 1e6 - Double(cycle.frame) / 48000
    }

    /// jack2 reports an xrun twice, a few frames apart (up to 4 seen): reports within a quarter
    /// of a 256-frame cycle of the one before are that one's.
    static func distinctReports(_ frames: [Int]) -> [Int] {
        frames.reduce(into: []) { kept, frame in
            if let last = kept.last, frame - last < 64 { return }
            kept.append(frame)
        }
    }

    /// The cycles the tap did not hear, as runs of NaN: where each begins, and its frames.
    var holes: [(frame: Int, frames: Int)] { Self.runs(in: samples.count) { samples[$0].isNaN } }

    /// The runs of frames `member` holds among the first `count`: where each begins, and its frames.
    private static func runs(in count: Int, where member: (Int) -> Bool) -> [(frame: Int, frames: Int)] {
        var runs: [(frame: Int, frames: Int)] = []
        var start: Int?
        for index in 0...count {
            if index < count && member(index) {
                if start == nil { start = index }
            } else if let begun = start {
                runs.append((begun, index - begun))
                start = nil
            }
        }
        return runs
    }

    /// Onsets (a second of quiet, then a sample over 0.01), each with whether it can be placed:
    /// one right after a hole may have begun inside it, one a call in doubt recorded may sit a
    /// cycle or two late, and one right after cycles in doubt may have begun inside them too (the
    /// frames before it may be another cycle's, placed there: runs on a machine stood still now
    /// and then, bench/RESULTS.md, stop 58).
    func placedOnsets(quietFrames: Int = 48000) -> [(frame: Int, placed: Bool)] {
        onsets(in: samples, quietFrames: quietFrames).map {
            ($0, $0 > 0 && !samples[$0 - 1].isNaN && !inDoubt($0) && !inDoubt($0 - 1))
        }
    }

    /// Whether a call in doubt recorded frame `frame` (PipeWire's tap).
    private func inDoubt(_ frame: Int) -> Bool { frame < doubtful.count && doubtful[frame] != 0 }

    /// The runs of frames calls in doubt recorded: where each begins, and its frames.
    var doubtfulRuns: [(frame: Int, frames: Int)] { Self.runs(in: doubtful.count) { doubtful[$0] != 0 } }

    /// The intervals between consecutive onsets, nil for one whose ends are not both placed.
    func intervals(quietFrames: Int = 48000) -> [Int?] {
        let heard = placedOnsets(quietFrames: quietFrames)
        return zip(heard, heard.dropFirst()).map { $0.placed && $1.placed ? $1.frame - $0.frame : nil }
    }

    /// The distance between each two onsets placed one after the other, beside the sum of the
    /// `expected` intervals between them (`expected[i]` from onset `i` to onset `i + 1`): an
    /// onset that cannot be placed is stepped over, and the span across it is still on the
    /// graph's clock, so nothing placed goes unjudged.
    /// Each span also says which onsets it runs between (`from`, `to`: their indices).
    static func spans(of onsets: [(frame: Int, placed: Bool)], against expected: [Int]) -> [(
        from: Int, to: Int, expected: Int, heard: Int
    )] {
        let placed = onsets.indices.filter { onsets[$0].placed && $0 <= expected.count }
        return zip(placed, placed.dropFirst()).map { from, to in
            (from, to, expected[from..<to].reduce(0, +), onsets[to].frame - onsets[from].frame)
        }
    }

    /// A tap made late at the onsets of gong's six woodblocks 3 s apart (`lateAtOnsets`), judged:
    /// every late call made, six onsets heard, and every span between two onsets the tap placed
    /// exactly gong's account; at least two placed. Returns what was found, for the caller's own
    /// checks and print.
    func judgedLateAtOnsets(lateCalls: Int, gongOutput: String) -> String {
        let events = GongEvents(gongOutput)
        let onsets = placedOnsets()
        let accounted = events.accountedIntervals(apart: 144_000)
        let spans = Self.spans(of: onsets, against: accounted)
        let detail =
            "onsets \(onsets), by gong's account \(accounted), gong lost \(events.losses); the tap missed \(missedFrames) frames, read \(rereadCycles) cycles again, its holes \(holes)"
        #expect(lateCalls == 6 && onsets.count == 6 && accounted.count == 5, "\(lateCalls) late calls: \(detail)")
        #expect(onsets.filter(\.placed).count >= 2 && spans.allSatisfy { $0.heard == $0.expected }, "\(detail)")
        return detail
    }

    /// A cycle of `frames` frames, silent but for a click at `click` (its offset in the cycle),
    /// as the unit tests hand the taps.
    static func cycle(_ frames: Int = 256, click: Int? = nil) -> [Float] {
        (0..<frames).map { $0 == click ? 0.5 : 0 }
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

/// gong's own trace of its callback (`GONG_JACK_TRACE`, `GONG_PIPEWIRE_TRACE`: one line a call,
/// gong_traced_cycle), read back beside a tap's recording: where gong's calls put each onset on
/// the server's clock, and the calls that were in doubt or told a loss, for whoever reads a
/// failure.
struct CycleTrace {
    /// The lines, each as its nine fields: position, frames, woke ns, ring frame, onset, told, in
    /// doubt, repeated, played again.
    let calls: [[Int]]

    init(path: String) {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        calls = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: " ").compactMap { Int($0) }
            return fields.count == 9 ? fields : nil
        }
    }

    /// Where each onset began on the server's clock by the call that played it: its position and
    /// the onset's place in its buffer. Less the tap's onsets, the same in every cue when both
    /// sides place them alike.
    var onsetsByPosition: [Int] { calls.filter { $0[4] >= 0 }.map { $0[0] + $0[4] } }

    /// What a failure prints of it: gong's onsets, and its calls in doubt or telling a loss (all,
    /// or those from onset `from` to onset `to`, indices into `onsetsByPosition`), the first 60.
    func described(fromOnset from: Int? = nil, toOnset to: Int? = nil) -> String {
        let onsets = onsetsByPosition
        let first = from.flatMap { onsets.indices.contains($0) ? onsets[$0] : nil } ?? Int.min
        let last = to.flatMap { onsets.indices.contains($0) ? onsets[$0] : nil } ?? Int.max
        let unsettled = calls.filter { ($0[5] != 0 || $0[6] != 0) && (first...last).contains($0[0]) }
        return "gong's onsets by its positions \(onsets); its calls in doubt or telling a loss"
            + (from == nil ? "" : " from onset \(from ?? 0) to \(to ?? 0)")
            + " (position, frames, woke ns, ring frame, onset, told, in doubt, repeated, played again): "
            + unsettled.prefix(60).map { $0.map(String.init).joined(separator: " ") }.joined(separator: "; ")
    }
}
