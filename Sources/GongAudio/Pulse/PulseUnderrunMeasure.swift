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
/// frames, as if the silence were frames of it. The reports once the stream plays again say
/// when the frame at their read index is heard: the distance between the two, short when the
/// first is asked for as the server says the stream started, is all that is read on the system
/// clock. Every frame the server played or dropped is then counted by the server itself;
/// measured against the recording of the sink, it agrees to the frame (bench/RESULTS.md, "A
/// stopped process through gong's PulseAudio client, 2026-11-27").
///
/// Each report's moment is the server's main thread reading the clock after its sink's thread
/// has answered: on a busy machine that thread can be woken milliseconds late, and the report
/// then places its frames as late: an anchor stamped late measures the loss short, a report of
/// the stream playing stamped late measures it long (bench/RESULTS.md, "A stopped process
/// measured on a busy machine"). A late moment only ever places frames later, never earlier. So the measure takes a few reports on each side and
/// keeps, of the anchors and of the reports of the stream playing, the one that places the sink
/// earliest: one report stamped on time on each side is enough. The anchors are taken while the
/// client writes nothing (it holds its writes for them, at most `anchorHoldNanoseconds`: the
/// stream is silent anyway, and every frame of the wait is counted), because after a write the
/// server rewinds and a report's silence is no longer the sink's.
///
/// Plain arithmetic on the reports it is given (`PulseTimingReport`): the real-time loop
/// feeds it, and tests drive it with the reports a traced stop gave.
struct UnderrunMeasure {
    /// Reports wanted on each side of the underrun.
    static let anchorsWanted = 3
    static let playsWanted = 3
    /// How long the client holds its writes for the anchors after the underrun is told.
    static let anchorHoldNanoseconds: Int64 = 20_000_000

    /// Where the sink is, in the stream's frames counting the silence as frames of it, and when
    /// that frame is heard (system clock, nanoseconds).
    private struct Anchor {
        var frame: Int64
        var heardWallNanoseconds: Int64
        var measuredWallNanoseconds: Int64
    }

    private enum Stage {
        case idle
        /// Told of an underrun at this read index (frames) at `toldWall`; writes are held while
        /// the anchors are taken, the best so far kept.
        case anchoring(underflowFrame: Int64, best: Anchor?, anchors: Int, toldWall: Int64)
        /// The hold ended before any anchor came: the answer to the request sent during it
        /// (before any write) anchors the measure whenever it comes.
        case awaitingAnchor(underflowFrame: Int64)
        /// Anchored; reports of the stream playing measure it, the least so far kept.
        case awaitingPlay(Anchor, least: Int64?, plays: Int)
    }

    private var stage = Stage.idle
    /// The last measure, until it is taken.
    private var measured: Int64?

    /// An underrun was told at `toldWallNanoseconds` (system clock), the stream having run dry at
    /// read index `underflowFrame` (negative when the server did not say). A measure under way is
    /// given up: the new underrun is measured instead.
    @_noAllocation @_noLocks
    mutating func begin(underflowFrame: Int64, toldWallNanoseconds: Int64) {
        measured = nil
        stage =
            underflowFrame >= 0
            ? .anchoring(underflowFrame: underflowFrame, best: nil, anchors: 0, toldWall: toldWallNanoseconds)
            : .idle
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

    /// Whether a report of the stream playing has been taken and more are wanted: they are
    /// asked for as soon as the last is answered.
    var wantsMorePlays: Bool {
        @_noAllocation @_noLocks get {
            if case .awaitingPlay(_, _, let plays) = stage { return plays > 0 }
            return false
        }
    }

    /// Whether the client must still hold its writes at `wallNanoseconds` (system clock): while
    /// anchors are wanted and the hold has time left. Once it ends, the measure goes on with the
    /// best anchor taken (or waits for the first).
    @_noAllocation @_noLocks
    mutating func holdsWrites(atWallNanoseconds wallNanoseconds: Int64) -> Bool {
        guard case .anchoring(let underflowFrame, let best, _, let toldWall) = stage else { return false }
        if wallNanoseconds - toldWall < Self.anchorHoldNanoseconds { return true }
        stage = best.map { .awaitingPlay($0, least: nil, plays: 0) } ?? .awaitingAnchor(underflowFrame: underflowFrame)
        return false
    }

    /// Takes the answer to the report asked for last. An anchor is a report of the stream not
    /// playing, its read index where it ran dry, asked for before anything more was written; a
    /// report that is neither that nor one of the stream playing gives the measure up (the
    /// device clock then measures the underrun from its own reports).
    @_noAllocation @_noLocks
    mutating func take(_ report: PulseTimingReport, frameBytes: Int, rate: Int) {
        let sinkNanoseconds = Int64(min(report.sinkMicroseconds, 10_000_000)) * 1000
        switch stage {
        case .idle:
            return
        case .anchoring(let underflowFrame, let best, let anchors, let toldWall):
            guard let anchor = Self.anchor(report, underflowFrame: underflowFrame, frameBytes: frameBytes) else {
                stage = .idle
                return
            }
            let better = best.map { Self.placesEarlier(anchor, than: $0, rate: rate) ? anchor : $0 } ?? anchor
            stage =
                anchors + 1 >= Self.anchorsWanted
                ? .awaitingPlay(better, least: nil, plays: 0)
                : .anchoring(underflowFrame: underflowFrame, best: better, anchors: anchors + 1, toldWall: toldWall)
        case .awaitingAnchor(let underflowFrame):
            guard let anchor = Self.anchor(report, underflowFrame: underflowFrame, frameBytes: frameBytes) else {
                stage = .idle
                return
            }
            stage = .awaitingPlay(anchor, least: nil, plays: 0)
        case .awaitingPlay(let anchor, let least, let plays):
            guard report.playing, report.measuredWallNanoseconds >= anchor.measuredWallNanoseconds else { return }
            let since = report.measuredWallNanoseconds + sinkNanoseconds - anchor.heardWallNanoseconds
            // More than a minute between the two is no measure (a clock stepped, a report gone
            // astray), and would overflow below.
            guard report.sinkMicroseconds <= 10_000_000, since >= 0, since < 60_000_000_000 else {
                stage = .idle
                measured = least
                return
            }
            let halfFrame = FrameTime.nanoseconds(ofFrames: 1, rate: Int64(rate)) / 2
            let sinkFrame = anchor.frame + FrameTime.frames(inNanoseconds: since + halfFrame, rate: Int64(rate))
            let lost = max(0, sinkFrame - report.readIndex / Int64(frameBytes))
            let leastLost = min(lost, least ?? lost)
            if plays + 1 >= Self.playsWanted {
                stage = .idle
                measured = leastLost
            } else {
                stage = .awaitingPlay(anchor, least: leastLost, plays: plays + 1)
            }
        }
    }

    /// The report as an anchor: the stream not playing, its read index where it ran dry, the
    /// silence counted and the sink's latency known.
    @_noAllocation @_noLocks
    private static func anchor(_ report: PulseTimingReport, underflowFrame: Int64, frameBytes: Int) -> Anchor? {
        guard !report.playing, report.readIndex / Int64(frameBytes) == underflowFrame,
            report.sinceUnderrunBytes >= 0, report.sinkMicroseconds <= 10_000_000
        else { return nil }
        return Anchor(
            frame: underflowFrame + report.sinceUnderrunBytes / Int64(frameBytes),
            heardWallNanoseconds: report.measuredWallNanoseconds + Int64(report.sinkMicroseconds) * 1000,
            measuredWallNanoseconds: report.measuredWallNanoseconds)
    }

    /// Whether `anchor` places the sink earlier than `other` does: its frame heard before
    /// `other`'s frame moved on to it at the stream's rate would be.
    @_noAllocation @_noLocks
    private static func placesEarlier(_ anchor: Anchor, than other: Anchor, rate: Int) -> Bool {
        let apart = FrameTime.nanoseconds(ofFrames: anchor.frame - other.frame, rate: Int64(rate))
        return anchor.heardWallNanoseconds - other.heardWallNanoseconds < apart
    }

    /// The frames the last underrun cost, once measured; handed out once.
    @_noAllocation @_noLocks
    mutating func takeLostFrames() -> Int64? {
        defer { measured = nil }
        return measured
    }
}
