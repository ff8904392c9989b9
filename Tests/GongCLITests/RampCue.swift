import Foundation
import GongAudio
import Testing

/// A cue that names each of its frames: sample `i` of a 0.7 s ramp is (`i` + 1)·10⁻⁵, so a frame
/// of it heard on a server's clock says which frame of the cue it is. Where a woodblock shows
/// only its onset, this shows every frame of a cue heard, where, and which never were
/// (bench/RESULTS.md, stop 60: the graph drops buffers of a stream while it catches up after its
/// daemon stood still).
enum RampCue {
    static let frames = 33_600
    static let step: Float = 1e-5

    /// The ramp as a mono 48 kHz float WAV at `path`.
    static func write(to path: String) throws {
        let ramp = (0..<frames).map { Float($0 + 1) * step }
        let writer = try AudioFileWriter(path: path, format: .wav, encoding: .float32, sampleRate: 48_000, channels: 1)
        try ramp.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
    }

    /// A cue as a recording heard it: the recording's frame its first frame falls on (the
    /// earliest frame heard of it, less its place in the ramp), and that place (0: heard from its
    /// first frame).
    struct Heard: Equatable {
        let start: Int
        let firstHeard: Int
    }

    /// The cues of a recording made `apart` frames apart, by their place in the schedule (cue 0:
    /// the first heard). Only frames recorded with certainty count (not in a hole, not by a call
    /// in doubt). Only a cue heard from its first frame (`firstHeard` 0) is placed by it: after a
    /// loss within a cue the rest of it rings on later (a voice never skips), and frames missing
    /// at its start may have been dropped (the rest on time) or stood behind silence (the rest
    /// later), which its frames alone cannot tell apart.
    static func cues(in recording: TapRecording, apart: Int) -> [Int: Heard] {
        let samples = recording.samples
        let certain = { (frame: Int) in
            !samples[frame].isNaN && samples[frame] > step / 2
                && (frame >= recording.doubtful.count || recording.doubtful[frame] == 0)
        }
        // The ramp's step as heard (gong's gain may scale it): across the first long stretch.
        var stepHeard = step
        var from = 0
        while from < samples.count {
            guard certain(from) else {
                from += 1
                continue
            }
            var end = from
            while end + 1 < samples.count, certain(end + 1), samples[end + 1] > samples[end] { end += 1 }
            if end - from >= 4096 {
                stepHeard = (samples[end] - samples[from]) / Float(end - from)
                break
            }
            from = end + 1
        }
        var heard: [Int: Heard] = [:]
        var origin: Int?
        for frame in samples.indices where certain(frame) {
            let index = Int((samples[frame] / stepHeard).rounded()) - 1
            guard index >= 0 && index < frames else { continue }
            let start = frame - index
            let base = origin ?? start
            if origin == nil {
                guard index < 2048 else { continue }
                origin = start
            }
            let cue = Int((Double(start - base) / Double(apart)).rounded())
            if heard[cue] == nil { heard[cue] = Heard(start: start, firstHeard: index) }
        }
        return heard
    }

    /// gong plays the ramp every 0.75 s for 30 s on its own PipeWire stream, recorded on the
    /// graph's clock, while the rig's daemon is stopped (SIGSTOP) for 30 ms every 0.6 s: the
    /// graph runs the cycles it owes back to back after each stop, plays some without gong's
    /// stream and drops some buffers gong handed over. gong counts the net of the two, and every
    /// cue heard from its first frame must begin on the graph's clock exactly where gong says: on
    /// its frame, or as late as it finally told. At least 30 of the 40 must be so heard (a start
    /// may fall in a hole of the tap's own, a call of its in doubt, or a buffer the graph
    /// dropped).
    static func playThroughPipeWireWithTheDaemonStandingStill() throws {
        try SoundServer.pipeWire.require()
        let environment = SoundServer.pipeWire.environment
        let runtime = environment["PIPEWIRE_RUNTIME_DIR"] ?? ""
        let daemon = try LiveJackTests.pipeWireDaemon(runtime: runtime)
        let scratch = try ScratchDirectory()
        let ramp = scratch.file("ramp.wav")
        try write(to: ramp)
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "30s", length: "0.75s", cue: ramp)
        let cycleTrace = scratch.file("gong-cycles.txt")
        let tap = try PipeWireTap(sink: "gong_test", environment: environment, seconds: 70)
        let (process, out) = try startGong(
            ["run", pattern, "--device", "pipewire", "--channels", "1", "--json"],
            environment: environment.merging(["XDG_RUNTIME_DIR": runtime, "GONG_PIPEWIRE_TRACE": cycleTrace]) { $1 })
        // The stops begin once the first cue has played whole, so that it is surely heard from its
        // first frame: the others are placed from it.
        var output = readEvents(from: out, until: "cue")
        usleep(900_000)
        let stalls = LiveJackTests.Stalls(of: daemon, forMicroseconds: 30_000, every: 0.6)
        output += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let stalled = stalls.end()
        let recording = tap.finish()
        #expect(process.terminationStatus == 0, "\(output)")
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        let xruns = finished["xruns"] as? Int ?? -1
        #expect(
            finished["cycles"] as? Int == 40 && xruns == events.losses.count
                && finished["heard"] as? String == (xruns > 0 ? "audioLost" : "onFrame"), "\(finished)")
        #expect(stalled >= 35 && xruns > 0, "the daemon stopped \(stalled) times, gong told \(xruns) losses")
        let apart = 36_000
        let said = events.saidLate
        let heard = cues(in: recording, apart: apart)
        let first = heard[0]?.start ?? 0
        // Where each placed cue began, less where cue 0 did and the schedule: gong's lateness.
        let placed = heard.keys.sorted().filter { $0 < said.count && heard[$0]?.firstHeard == 0 }
        let offWord = placed.filter { cue in
            heard[cue].map { $0.start - first - apart * cue } != said[cue] - said[0]
        }
        let cut: [(cue: Int, frames: Int)] = heard.keys.sorted().compactMap { cue in
            guard let frames = heard[cue]?.firstHeard, frames > 0 else { return nil }
            return (cue, frames)
        }
        #expect(
            said.count == 40 && heard[0]?.firstHeard == 0 && placed.count >= 30 && offWord.isEmpty,
            "cues begun off gong's word \(offWord.map { ($0, heard[$0]?.start ?? 0, said[$0]) }), placed \(placed.count) of \(said.count), said late \(said.filter { $0 != 0 }); gong lost \(events.losses.prefix(60)); the tap missed \(recording.missedFrames) frames, its holes \(recording.holes.prefix(40)); \(finished); \(CycleTrace(path: cycleTrace).described())"
        )
        print(
            "ramps on PipeWire with the daemon stopped \(stalled) times: \(placed.count) of \(said.count) cues placed, all where gong said (said late \(said.filter { $0 != 0 })); not placed, first heard for certain that many frames in (cue, frames) \(cut); gong lost \(events.losses.map(\.frames).reduce(0, +)) frames in \(xruns) losses"
        )
    }
}
