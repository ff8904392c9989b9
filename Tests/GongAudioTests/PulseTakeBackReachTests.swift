import Testing

@testable import GongAudio

/// How much of a PulseAudio stream's queue a take-back may still rewrite, from the server's
/// timing reports (`PulseReadLine`). The server takes a report's counts on the sink's thread and
/// stamps the reply on its main thread, which a busy machine may run late: a report stamped late
/// puts the read index behind the server's, and a reach counted from it alone is long by the
/// wait, so what a pause writes lands where the server has read already and is dropped.
@Suite struct PulseTakeBackReachTests {
    static let second: Int64 = 1_000_000_000
    static let rate: Int64 = 48000

    /// A playing stream 200 000 frames long whose read index is at `read` when the sink's thread
    /// counts at `countedAt` (ns after 1000 s), the reply stamped `stampedAfter` later.
    static func report(read: Int64, countedAt: Int64, stampedAfter: Int64 = 100_000) -> PulseTimingReport {
        PulseTimingReport(
            writeIndex: 200_000 * 4, readIndex: read * 4, sinkMicroseconds: 4_000, playing: true,
            sinceUnderrunBytes: 0, measuredWallNanoseconds: 1000 * second + countedAt + stampedAfter)
    }

    static func reach(_ line: PulseReadLine, _ report: PulseTimingReport, at now: Int64, takenBack: Int64 = 0) -> Int64
    {
        PulsePCM.unclaimedFrames(
            by: report, line: line, atWallNanoseconds: 1000 * second + now, frameBytes: 4,
            rate: rate, marginNanoseconds: 50_000_000, takenBackFrames: takenBack)
    }

    /// Reports a second apart of a read index moving at 48 kHz from 76 000, the last stamped
    /// 110 ms late. 200 ms after it was counted the read index is at 181 600: 18 400 frames
    /// queued, 2 400 of them the margin. The line keeps the prompt reports' place and the reach
    /// is the truth within a few frames; from the late report alone it was 5 280 frames (110 ms)
    /// long.
    @Test func aReportStampedLateDoesNotMoveTheReadIndexBack() {
        var line = PulseReadLine()
        let reports = [
            Self.report(read: 76_000, countedAt: 0), Self.report(read: 124_000, countedAt: Self.second),
            Self.report(read: 172_000, countedAt: 2 * Self.second, stampedAfter: 110_000_000)
        ]
        for report in reports { line.take(report, frameBytes: 4, rate: Self.rate) }
        let truth: Int64 = 200_000 - 181_600 - 2_400
        let reach = Self.reach(line, reports[2], at: 2 * Self.second + 200_000_000)
        #expect(abs(reach - truth) <= 5, "\(reach) frames within reach, \(truth) true")
        var alone = PulseReadLine()
        alone.take(reports[2], frameBytes: 4, rate: Self.rate)
        let long = Self.reach(alone, reports[2], at: 2 * Self.second + 200_000_000) - truth
        #expect(abs(long - 5_280) <= 5, "from the late report alone \(long) frames long")
    }

    /// A line older than five seconds gives way to the next report; one of a stream that does
    /// not play (its read index stands) clears it and the queue is the report's own; what was
    /// taken back already is not taken back again; nothing is ever below zero.
    @Test func aStaleLineGivesWayAStandingStreamKeepsItsQueueAndNothingGoesBelowZero() {
        var line = PulseReadLine()
        line.take(Self.report(read: 100_000, countedAt: 0), frameBytes: 4, rate: Self.rate)
        let later = Self.report(read: 100_000 + 6 * 48_000, countedAt: 6 * Self.second, stampedAfter: 20_000_000)
        line.take(later, frameBytes: 4, rate: Self.rate)
        #expect(
            line.originWallNanoseconds == 1000 * Self.second + 20_000_000 - 100_000 * Self.second / 48_000)
        var standing = Self.report(read: 100_000, countedAt: 0)
        standing.playing = false
        line.take(standing, frameBytes: 4, rate: Self.rate)
        #expect(line.originWallNanoseconds == nil)
        #expect(Self.reach(line, standing, at: 5 * Self.second) == 100_000 - 2_400)
        #expect(Self.reach(line, standing, at: 5 * Self.second, takenBack: 1_000) == 100_000 - 2_400 - 1_000)
        var playing = PulseReadLine()
        playing.take(Self.report(read: 100_000, countedAt: 0), frameBytes: 4, rate: Self.rate)
        #expect(Self.reach(playing, Self.report(read: 100_000, countedAt: 0), at: 10 * Self.second) == 0)
    }
}
