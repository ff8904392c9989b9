import GongCore

/// What an underrun of a PulseAudio stream cost, in the sink's own frames: how much later every
/// frame written after it is heard than the frames before it placed it. That, and not the
/// silence alone, is what the session must move on by for its cues to keep their frames.
///
/// Why not from two ordinary reports, one before the underrun and one after, as the device clock
/// would: a stall that causes an underrun is at least as long as the buffer, so those reports
/// are more than a second apart, and the sink's clock is not the system's (PulseAudio's null
/// sink runs fast): read on the system clock, that distance comes out frames short by the
/// drift across it. And after an underrun the server does more than play silence: when the
/// stream starts again it rewinds the silence it had rendered ahead and drops the first frames
/// written after the underrun, unheard, which the read index counts as played.
///
/// So the measure is anchored in the server's own count of the silence. The report asked for
/// as the underrun is told, before anything more is written (so before the server's rewind),
/// says how many frames of silence the sink has rendered in the stream's place so far
/// (`since_underrun` while it is not playing) and when the last of them is heard: together with
/// the read index where the stream ran dry, the sink's position counted in the stream's own
/// frames, as if the silence were frames of it. The first report once the stream plays again
/// says when the frame at its read index is heard: the distance between the two, short when
/// it is asked for as the server says the stream started, is all that is read on the system
/// clock. Every frame the server played or dropped is then counted by the
/// server itself; measured against the recording of the sink, it agrees to the frame
/// (bench/RESULTS.md, "A stopped process through gong's PulseAudio client, 2026-11-27").
///
/// Plain arithmetic on the reports it is given (`PulseTimingReport`): the real-time loop
/// feeds it, and tests drive it with the reports a traced stop gave.
struct UnderrunMeasure {
    /// Where the sink is, in the stream's frames counting the silence as frames of it, and when
    /// that frame is heard (system clock, nanoseconds).
    private struct Anchor {
        var frame: Int64
        var heardWallNanoseconds: Int64
        var measuredWallNanoseconds: Int64
    }

    private enum Stage {
        case idle
        /// Told of an underrun at this read index (frames); the next report anchors the measure.
        case awaitingAnchor(underflowFrame: Int64)
        /// Anchored; the next report of the stream playing measures it.
        case awaitingPlay(Anchor)
    }

    private var stage = Stage.idle
    /// The last measure, until it is taken.
    private var measured: Int64?

    /// An underrun was told, the stream having run dry at read index `underflowFrame` (negative
    /// when the server did not say). A measure under way is given up: the new underrun is
    /// measured instead.
    @_noAllocation @_noLocks
    mutating func begin(underflowFrame: Int64) {
        measured = nil
        stage = underflowFrame >= 0 ? .awaitingAnchor(underflowFrame: underflowFrame) : .idle
    }

    /// Whether a measure is under way: the next reports are wanted soon.
    var isMeasuring: Bool {
        @_noAllocation @_noLocks get {
            if case .idle = stage { return false }
            return true
        }
    }

    /// Whether the anchor is taken and a report of the stream playing is wanted.
    var awaitsPlay: Bool {
        @_noAllocation @_noLocks get {
            if case .awaitingPlay = stage { return true }
            return false
        }
    }

    /// Takes the answer to the report asked for last. The anchor must be the report asked for as
    /// the underrun was told: the stream not playing, its read index where it ran dry. Any other
    /// gives the measure up (the device clock then measures the underrun from its own reports).
    @_noAllocation @_noLocks
    mutating func take(_ report: PulseTimingReport, frameBytes: Int, rate: Int) {
        let sinkNanoseconds = Int64(min(report.sinkMicroseconds, 10_000_000)) * 1000
        switch stage {
        case .idle:
            return
        case .awaitingAnchor(let underflowFrame):
            guard !report.playing, report.readIndex / Int64(frameBytes) == underflowFrame,
                report.sinceUnderrunBytes >= 0, report.sinkMicroseconds <= 10_000_000
            else {
                stage = .idle
                return
            }
            stage = .awaitingPlay(
                Anchor(
                    frame: underflowFrame + report.sinceUnderrunBytes / Int64(frameBytes),
                    heardWallNanoseconds: report.measuredWallNanoseconds + sinkNanoseconds,
                    measuredWallNanoseconds: report.measuredWallNanoseconds))
        case .awaitingPlay(let anchor):
            guard report.playing, report.measuredWallNanoseconds >= anchor.measuredWallNanoseconds else { return }
            stage = .idle
            let since = report.measuredWallNanoseconds + sinkNanoseconds - anchor.heardWallNanoseconds
            // More than a minute between the two is no measure (a clock stepped, a report gone
            // astray), and would overflow below.
            guard report.sinkMicroseconds <= 10_000_000, since >= 0, since < 60_000_000_000
            else { return }
            let halfFrame = FrameTime.nanoseconds(ofFrames: 1, rate: Int64(rate)) / 2
            let sinkFrame = anchor.frame + FrameTime.frames(inNanoseconds: since + halfFrame, rate: Int64(rate))
            measured = max(0, sinkFrame - report.readIndex / Int64(frameBytes))
        }
    }

    /// The frames the last underrun cost, once measured; handed out once.
    @_noAllocation @_noLocks
    mutating func takeLostFrames() -> Int64? {
        defer { measured = nil }
        return measured
    }
}
