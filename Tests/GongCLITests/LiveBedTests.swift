import Foundation
import Glibc
import GongAudio
import GongCore
import GongKit
import Testing

/// A bed under a ten-minute session, heard live: cues at several intervals above the bank's brown
/// noise at the bed's defaults (−18 dB, 10 s in, 20 s out), played by gong's own PulseAudio
/// client at its default latency and recorded from the null sink's monitor. About eleven minutes:
/// a long round, in `LongRoundPulseTests`, which `make test-long` runs alone (real-time, with
/// nothing else playing) and `make test` leaves out.
extension LongRoundPulseTests {
    /// A sit a person might write: woodblocks, a chime and clicks at 43, 20, 20, 20, 11 and 31 s,
    /// four times, then the end cue, over the bed as `bed = "brown-noise"` gives it.
    static let bedSit = """
        summary = "ten minutes over brown noise, bells at several intervals"
        warmup = "2s"
        end = "woodblock"
        bed = "brown-noise"
        duration = "10m"

        [[phases]]
        name = "arrive"
        length = "43s"
        cue = "woodblock"

        [[phases]]
        name = "sit"
        length = "71s"
        cue = "chime"
        bell = { every = "20s", cue = "click" }

        [[phases]]
        name = "rest"
        length = "31s"
        cue = "woodblock"
        """

    /// Where `bedSit` rings, in session frames at 48 kHz, written out from its lengths (not from
    /// gong's own arithmetic): after the 2 s warm-up, each 145 s cycle rings at 0, 43, 63, 83,
    /// 103 and 114 s; four cycles fit in 10 minutes, and the end cue comes at 2 + 4 × 145 s.
    static let bedSitCueFrames: [Int] =
        (0..<4).flatMap { cycle in [0, 43, 63, 83, 103, 114].map { (2 + cycle * 145 + $0) * 48000 } } + [582 * 48000]

    /// Frames either side of a loop point whose steps are judged as the loop point's: a seam a
    /// frame or two from where it is expected is still found, and still judged.
    static let loopPointReach = 16

    /// Every cue on its frame, the loop seamless, the fades heard, all from the recording:
    ///
    /// * Onsets above a bed. A sample's level no longer tells a cue from the bed (the bed alone
    ///   reaches 0.05), and where a rising cue first crosses a level depends on the bed under it.
    ///   The steps between samples do tell them apart: brown noise moves little from one sample to
    ///   the next (its largest step in any second is about 0.002 at −18 dB), while every sound in
    ///   the bank starts on its strike (a step of 0.07 for the chime, 0.22 for the woodblock). So
    ///   the onsets are found by the suite's own `onsets(in:)` in the steps, above a threshold
    ///   set from the recording itself: 8 times the median over its seconds of each second's
    ///   largest step, which is the bed's (most seconds hold only the bed). Every interval between
    ///   them must be the schedule's, to the frame, less exactly what gong told it lost within it
    ///   (a stretch the null sink skipped, which its monitor did not record either), if anything.
    /// * The loop points. The bed's loop (its frame count from the very plan gong plays) starts
    ///   on the session's first frame, which the first onset places in the recording; every loop
    ///   point is then known to the frame. At each, the largest step within `loopPointReach`
    ///   frames must be no larger than the bed's own largest step elsewhere: everywhere the bed
    ///   plays at full gain alone, away from loop points. A loop point where a cue sounds (from its
    ///   onset to the end of its file) cannot be judged and is left out, counted, and most must
    ///   be judged.
    /// * The fades. The loop repeats, so the bed's gain at any second is measured against the
    ///   same stretch of the loop a whole loop later (after the fade-in) or earlier (before the
    ///   end), where it plays at full gain: it rises through the fade-in from silence to full
    ///   exactly when the fade-in ends, and falls from the end cue to silence, which follows.
    @Test func aBedUnderTenMinutesKeepsEveryCueOnItsFrameAndLoopsWithoutAClick() throws {
        let server = SoundServer.pulseAudio
        try server.require()
        let scratch = try ScratchDirectory()
        let patternPath = scratch.file("bed-sit.toml")
        try Self.bedSit.write(toFile: patternPath, atomically: true, encoding: .utf8)
        // The bank as the source tree ships it, for gong (searched first) and for the plan here.
        let bank = URL(fileURLWithPath: SoundServer.scriptsDirectory).deletingLastPathComponent()
            .appendingPathComponent("Sounds").path
        let plan = try SessionPlan(
            pattern: try PatternFile.load(path: patternPath), sampleRate: 48000, channels: 1,
            bank: SoundBank(directories: [bank]))
        let expected = Self.bedSitCueFrames
        #expect(plan.timeline.cueOnsets.map { Int($0.frame) } == expected, "the plan rings as written out")

        let recorder = try MonitorRecorder(path: scratch.file("monitor.raw"), server: server)
        defer { recorder.end() }
        let result = try runGong(
            ["run", patternPath, "--sounds", bank, "--device", "pulse", "--channels", "1", "--rate", "48000", "--json"],
            home: ProcessInfo.processInfo.environment["HOME"], environment: server.environment)
        recorder.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        let finished = try #require(events.finished, "\(result.stdout)")
        // The null sink may skip a stretch of its clock when the machine starves its thread (seen
        // with two busy loops beside it): its monitor records none of it, gong's stream
        // loses that much of the sink's time, and gong tells it to the frame and moves its session
        // on by as much, so every later cue keeps its time on the sink's clock. Each loss must be
        // told, and the recording must agree with it to the frame (`judgeBed`).
        #expect(
            finished["xruns"] as? Int == events.losses.count && finished["stoppedEarly"] as? Bool == false,
            "\(finished)")
        #expect(finished["cues"] as? Int == 25 && finished["maxCueLatenessFrames"] as? Int == 0, "\(finished)")
        #expect(events.all("cue").compactMap { $0["frame"] as? Int } == expected, "\(events.all("cue"))")

        // Of an exact recording gong's own client says every cue was on its frame, or that its
        // reports were too rough to confirm it, within the bound it takes them as honest; and
        // that audio was lost, when it was. That bound is its reports' jitter and the drift any
        // device's clock may have over the interval (`CueTiming.record`): the bed's intervals
        // are up to 43 s, over which the null sink's changing drift alone can put a cue
        // milliseconds off the line through the others while every interval is recorded exact
        // (bench/RESULTS.md, "`make test-long`" of stop 48).
        let verdict = finished["heard"] as? String
        let jitterMs = finished["jitterMs"] as? Double ?? .infinity
        let longestSeconds = Double(zip(expected, expected.dropFirst()).map { $1 - $0 }.max() ?? 0) / 48000
        let roughBoundMs =
            1000
            * CueTiming.allowanceSeconds(
                reportJitterSeconds: Double(PulsePCM.reportJitterNanoseconds) / 1e9, overSeconds: longestSeconds)
        #expect(
            events.losses.isEmpty
                ? verdict == "onFrame" || (verdict == "roughReports" && jitterMs < roughBoundMs)
                : verdict == "audioLost",
            "\(finished)")
        let recording = try MappedRecording(path: recorder.path)
        let figures = try Self.judgeBed(in: recording.samples, plan: plan, expected: expected, losses: events.losses)
        print("PulseAudio bed: \(figures); gong's account \(finished)")
    }

    /// Judges a recording of `plan` (a session with a bed, cues at `expected` session frames, at
    /// 48 kHz) as `aBedUnderTenMinutesKeepsEveryCueOnItsFrameAndLoopsWithoutAClick` describes,
    /// gong having told `losses`: the figures measured, in words.
    static func judgeBed(
        in samples: UnsafeBufferPointer<Float>, plan: SessionPlan, expected: [Int], losses: [GongEvents.Loss] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let bed = try #require(plan.bed, sourceLocation: sourceLocation)
        // The frame gong played session frame `frame` on: the session clock moved on by each loss
        // told before it, and the recording, which skipped what the sink skipped, runs on gong's
        // played frames, as the bed does (it loops and fades by the frames it has played).
        func played(_ frame: Int) -> Int { frame - losses.filter { $0.from < frame }.map(\.frames).reduce(0, +) }
        let onsets = expected.map(played)
        // Where each cue sounds, from its onset to the end of its file, in played frames.
        let sounding = plan.timeline.cueOnsets.map {
            played(Int($0.frame))..<(played(Int($0.frame)) + plan.sounds[Int($0.trigger.sound)].frames)
        }
        let end = played(Int(plan.timeline.plannedEndFrame))
        let bedEnd = end + bed.fadeOutFrames
        let second = 48000
        let seconds = samples.count / second
        try #require(seconds > 2, "a recording: \(samples.count) samples", sourceLocation: sourceLocation)

        // The bed's step in each second; the threshold far above it, far below a strike.
        var largestStepBySecond: [Float] = []
        for index in 0..<seconds {
            let range = max(1, index * second)..<((index + 1) * second)
            largestStepBySecond.append(range.reduce(0) { max($0, abs(samples[$1] - samples[$1 - 1])) })
        }
        let bedStepLevel = largestStepBySecond.sorted()[seconds / 2]
        let threshold = 8 * bedStepLevel
        let heard = stepOnsets(in: samples, threshold: threshold)
        let intervals = zip(heard, heard.dropFirst()).map { $1 - $0 }
        // The schedule, less what gong told it lost within an interval (none, mostly).
        let scheduled = zip(onsets, onsets.dropFirst()).map { $1 - $0 }
        #expect(
            heard.count == expected.count, "\(expected.count) cues heard, not \(heard.count), at \(heard)",
            sourceLocation: sourceLocation)
        #expect(
            intervals == scheduled, "intervals heard \(intervals), scheduled \(scheduled)",
            sourceLocation: sourceLocation)

        // Session frame 0, where the bed starts, in the recording; from it every loop point.
        let origin = (heard.first ?? 0) - onsets[0]
        try #require(
            origin >= 0 && origin + bedEnd <= samples.count,
            "the session in the recording: from \(origin) for \(bedEnd) of \(samples.count) samples",
            sourceLocation: sourceLocation)
        func step(_ frame: Int) -> Float { abs(samples[origin + frame] - samples[origin + frame - 1]) }
        /// Whether a cue sounds in any of `frames`, or in the frame before the first (the step
        /// into it): a sound counts from its first frame to the frame after its last.
        func cueSounds(_ frames: ClosedRange<Int>) -> Bool {
            sounding.contains { $0.lowerBound <= frames.upperBound && frames.lowerBound <= $0.upperBound }
        }
        let loopPoints = stride(from: bed.sound.frames, to: bedEnd, by: bed.sound.frames).map { $0 }
        let reach = loopPointReach
        var judged: [(frame: Int, step: Float)] = []
        var leftOut: [Int] = []
        for point in loopPoints {
            let near = (point - reach)...(point + reach)
            if cueSounds(near) {
                leftOut.append(point)
            } else {
                judged.append((point, near.map(step).max() ?? 0))
            }
        }
        // The bed's own largest step: at full gain, no cue sounding, away from every loop point.
        var ownLargest: Float = 0
        var from = bed.fadeInFrames
        for cue in sounding.sorted(by: { $0.lowerBound < $1.lowerBound }) + [end..<end] {
            // The steps into frames from..<cue.lowerBound involve no sample of a cue.
            for frame in from..<max(from, min(cue.lowerBound, end)) {
                let loopPosition = frame % bed.sound.frames
                if loopPosition > reach && loopPosition < bed.sound.frames - reach {
                    ownLargest = max(ownLargest, step(frame))
                }
            }
            from = max(from, cue.upperBound + 1)
        }
        let loopPointLargest = judged.map(\.step).max() ?? 0
        #expect(
            judged.count >= loopPoints.count * 3 / 4 && judged.count + leftOut.count == loopPoints.count,
            "\(judged.count) of \(loopPoints.count) loop points judged; left out where a cue sounds: \(leftOut)",
            sourceLocation: sourceLocation)
        let clicks = judged.filter { $0.step > ownLargest }
        #expect(
            clicks.isEmpty && ownLargest > 0,
            "steps at loop points above the bed's own largest \(ownLargest): \(clicks.map { "\($0.frame): \($0.step)" })",
            sourceLocation: sourceLocation)
        // What was measured as the bed's own is the loop at its gain, as the plan made it.
        let loop = bed.sound.samples.buffer
        let loopLargest = (1..<loop.count).reduce(Float(0)) { max($0, abs(loop[$1] - loop[$1 - 1])) } * bed.gain
        #expect(
            abs(ownLargest - loopLargest) <= loopLargest * 0.01, "recorded \(ownLargest), the loop's \(loopLargest)",
            sourceLocation: sourceLocation)

        // The bed's gain over one second from session frame `from`, against the same stretch of
        // the loop `loops` loops away at full gain; nil where a cue sounds in either.
        func gain(from: Int, against loops: Int) -> Double? {
            let other = from + loops * bed.sound.frames
            guard !cueSounds(from...(from + second - 1)), !cueSounds(other...(other + second - 1)) else { return nil }
            var product = 0.0
            var power = 0.0
            for offset in 0..<second {
                let full = Double(samples[origin + other + offset])
                product += Double(samples[origin + from + offset]) * full
                power += full * full
            }
            return product / power
        }
        let fadeIn = (0...(bed.fadeInFrames / second)).map { gain(from: $0 * second, against: 1) }
        let fadeOut = (-1..<(bed.fadeOutFrames / second)).map { index -> Double? in
            // The nearest whole loop back that is past the fade-in and clear of cues.
            let from = end + index * second
            return (1...(from / bed.sound.frames)).lazy.compactMap { loops -> Double? in
                let earlier = from - loops * bed.sound.frames
                let full = earlier >= bed.fadeInFrames && earlier + second <= end
                return full ? gain(from: from, against: -loops) : nil
            }.first
        }
        let rising = fadeIn.dropLast().compactMap { $0 }
        let falling = fadeOut.dropFirst().compactMap { $0 }
        #expect(
            rising.count >= 8 && (rising.first ?? 1) < 0.1 && zip(rising, rising.dropFirst()).allSatisfy { $0 < $1 }
                && (rising.last ?? 1) < 1 && abs((fadeIn.last ?? nil).map { $0 - 1 } ?? 1) < 0.001,
            "the bed's gain over each second of its fade-in, then the second after: \(fadeIn)",
            sourceLocation: sourceLocation)
        #expect(
            falling.count >= 18 && (falling.last ?? 1) < 0.05
                && zip(falling, falling.dropFirst()).allSatisfy { $0 > $1 }
                && abs((fadeOut.first ?? nil).map { $0 - 1 } ?? 1) < 0.001,
            "the bed's gain over the second before the end, then each second of its fade-out: \(fadeOut)",
            sourceLocation: sourceLocation)
        // Nothing before the session's first frame, nothing after the bed has faded.
        let silentBefore = (0..<origin).allSatisfy { samples[$0] == 0 }
        let silentAfter = ((origin + bedEnd)..<samples.count).allSatisfy { samples[$0] == 0 }
        #expect(
            silentBefore && silentAfter,
            "silence before the session (\(silentBefore)) and after its bed (\(silentAfter))",
            sourceLocation: sourceLocation)

        func format(_ gains: [Double?]) -> String {
            gains.map { $0.map { String(format: "%.3f", $0) } ?? "-" }.joined(separator: " ")
        }
        return
            "\(heard.count) onsets, gong telling \(losses.isEmpty ? "no loss" : "losses of \(losses)"), intervals heard \(Set(intervals).sorted()) (scheduled"
            + " \(Set(scheduled).sorted())); step threshold \(threshold) (bed's per-second largest step, median"
            + " \(bedStepLevel)); loop points judged \(judged.count) of \(loopPoints.count) (left out \(leftOut)),"
            + " largest step there \(loopPointLargest) against the bed's own largest \(ownLargest) (the loop's at"
            + " its gain \(loopLargest)); fade-in gains \(format(fadeIn)); fade-out gains \(format(fadeOut))"
    }

    /// Onsets (`onsets(in:)`) in the steps between samples rather than in their level: where a
    /// step above `threshold` follows a second without one. The frame of each is the frame the
    /// step leads to: a sound starting on its strike is found on its first frame.
    static func stepOnsets(in samples: UnsafeBufferPointer<Float>, threshold: Float) -> [Int] {
        let steps = (1..<max(1, samples.count)).lazy.map { abs(samples[$0] - samples[$0 - 1]) }
        return onsets(in: steps, threshold: threshold).map { $0 + 1 }
    }
}

/// A raw recording of 32-bit float samples read where it lies, mapped rather than copied into
/// memory: ten minutes at 48 kHz are 115 MB, which the kernel pages in as the analysis reads them
/// and may drop again.
final class MappedRecording {
    let samples: UnsafeBufferPointer<Float>
    private let mapping: UnsafeMutableRawPointer?
    private let length: Int

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        length = Int(status.st_size)
        guard length >= MemoryLayout<Float>.size else {
            mapping = nil
            samples = UnsafeBufferPointer(start: nil, count: 0)
            return
        }
        let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0)
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        mapping = mapped
        samples = UnsafeBufferPointer(
            start: mapped.assumingMemoryBound(to: Float.self), count: length / MemoryLayout<Float>.size)
    }

    deinit {
        if let mapping { munmap(mapping, length) }
    }
}
