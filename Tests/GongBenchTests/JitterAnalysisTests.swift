import GongAudio
import Testing

@testable import GongBench

/// The jitter benchmark's arithmetic, driven with made-up periods and reports whose answers are
/// known: a device clock with a known drift and known report jitter, wakes on a known grid.
@Suite struct JitterAnalysisTests {
    let rate = 48000
    let period: Int64 = 2400  // 50 ms

    /// Periods on a device whose clock runs `ppm` fast, frame 0 heard at 1 s, each wake
    /// `lateness(k)` after its due time (a buffer of three periods ahead), status read every
    /// period with `reportError(k)` nanoseconds of error.
    func periods(
        count: Int, ppm: Double, lateness: (Int) -> Int64 = { _ in 0 }, reportError: (Int) -> Int64 = { _ in 0 }
    ) -> [PeriodTiming] {
        let origin: Int64 = 1_000_000_000
        let framesPerSecond = Double(rate) * (1 + ppm / 1e6)
        func heard(_ frame: Int64) -> Int64 { origin + Int64((Double(frame) / framesPerSecond * 1e9).rounded()) }
        return (0..<count).map { k in
            let before = Int64(k) * period
            let woke = heard(before - 3 * period) + lateness(k)
            let written = woke + 200_000
            // At `written`, the frames played are those heard by then.
            let statusTime = written + reportError(k)
            let played = Int64((Double(written - origin) / 1e9 * framesPerSecond).rounded(.down))
            return PeriodTiming(
                woke: woke, rendered: woke + 100_000 + Int64(k % 3) * 10_000, written: written, framesBefore: before,
                clockOrigin: origin, statusTimestamp: statusTime, statusDelayFrames: before + period - played,
                statusWrittenFrames: before + period)
        }
    }

    @Test func clockDriftAndReportJitterAreMeasured() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        // Reports alternate 0.3 ms late and on time; the drift is +250 ppm.
        for timing in periods(count: 400, ppm: 250, reportError: { $0 % 2 == 0 ? 300_000 : 0 }) {
            analysis.add(timing)
        }
        let fit = try #require(analysis.clockFit)
        #expect(abs(fit.driftPPM - 250) < 2)
        let jitter = fit.jitter
        #expect(jitter.count == 400)
        // Half the reports 0.3 ms off the other half: the line runs through one of the two.
        let spread = try #require(jitter.max) - (try #require(jitter.min))
        #expect(abs(spread - 300) < 25)
        #expect(fit.settlingReports == 0)
    }

    @Test func reportsFromBeforeTheDevicePlayedAreLeftOut() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        // The first three reports are 400 ms off, as PulseAudio's first ones are.
        for timing in periods(count: 20, ppm: 300, reportError: { $0 < 3 ? -400_000_000 : 0 }) {
            analysis.add(timing)
        }
        let fit = try #require(analysis.clockFit)
        #expect(fit.settlingReports == 3)
        #expect(abs(fit.driftPPM - 300) < 30)
        #expect(try #require(fit.jitter.max) < 50)
    }

    @Test func aShortRunsStartUpReportsCannotBendTheLine() throws {
        // Recorded in five seconds on PulseAudio's null sink: three reports from before it
        // played, counting prebuffered frames as played (two within 0.2 ms of the first true
        // one), then four true ones, a clock about 370 ppm fast. Fitted through them all, the
        // line ran at -11 %.
        let reports: [(time: Int64, played: Int64)] = [
            (0, 36000), (175_380_144, 42000), (175_450_529, 48000), (175_540_500, 25263),
            (1_228_970_640, 75848), (2_281_176_399, 126372), (3_159_059_399, 168526)
        ]
        var analysis = JitterAnalysis(rate: rate, paced: true)
        for report in reports {
            let time = 5_000_000_000 + report.time
            analysis.add(
                PeriodTiming(
                    woke: time, rendered: time, written: time, framesBefore: 0, clockOrigin: 0,
                    statusTimestamp: time, statusDelayFrames: 24000, statusWrittenFrames: report.played + 24000))
        }
        let fit = try #require(analysis.clockFit)
        #expect(fit.settlingReports == 3)
        // The slopes between the true reports' pairs run from 359 to 403 ppm.
        #expect((359...403).contains(fit.driftPPM), "\(fit.driftPPM)")
        #expect(try #require(fit.jitter.max) < 100)
        #expect(try #require(fit.jitter.min) > -100)
    }

    @Test func wakeUpLatencyIsMeasuredFromTheBestWake() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        // Every tenth wake 2 ms late, the others 100 µs.
        for timing in periods(count: 100, ppm: 0, lateness: { $0 % 10 == 0 ? 2_000_000 : 100_000 }) {
            analysis.add(timing)
        }
        let latency = analysis.wakeLatency
        #expect(latency.count == 100)
        #expect(latency.min == 0)
        let max = try #require(latency.max)
        #expect(abs(max - 1900) < 2)
        let p50 = try #require(latency.p50)
        #expect(p50 < 2)
        let renderTime = analysis.renderTime
        #expect(renderTime.min == 100 && renderTime.max == 120)
    }

    @Test func cueErrorsAreMeasuredAgainstTheDevicesRate() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        for timing in periods(count: 400, ppm: 500) { analysis.add(timing) }
        let fit = try #require(analysis.clockFit)
        // A cue at 10 s heard exactly where the device's clock puts it, one 1 ms late.
        let onTime = fit.heardNanoseconds(ofFrame: 480_000)
        analysis.addCue(sessionFrame: 480_000, outputFrame: 480_000, audible: onTime)
        analysis.addCue(
            sessionFrame: 864_000, outputFrame: 864_000, audible: fit.heardNanoseconds(ofFrame: 864_000) + 1_000_000)
        analysis.addCue(sessionFrame: 0, outputFrame: 0, audible: 0)  // placed before the clock was known
        #expect(analysis.cuesPlayed == 3)
        let errors = analysis.cueError
        #expect(errors.count == 2)
        #expect(analysis.cueVerdicts.last?.judgement == .notJudged(.noDeviceTime))
        #expect(abs(try #require(errors.min)) < 1)
        #expect(abs(try #require(errors.max) - 1000) < 1)
        // At the nominal rate the 10 s cue would look 5 ms early: drift is not the cue's fault.
        let heardAfter: Double = Double(onTime - 1_000_000_000) / 1e9
        let expected: Double = 10 / (1 + 500e-6)
        #expect(abs(heardAfter - expected) < 0.0001)
    }

    @Test func anUnderrunStartsANewStretchOfTheClock() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        let before = periods(count: 100, ppm: 100)
        for timing in before { analysis.add(timing) }
        // Told as heard again 200 ms after the last report before it: the 100 ms lost, and the
        // frames written after it heard a little later still. The silence began between the two.
        analysis.addUnderrun(lostFrames: 4800, at: before[99].written + 200_000_000)
        // After the gap the frames are heard 100 ms later than before it.
        for var timing in periods(count: 200, ppm: 100).suffix(100) {
            timing.statusTimestamp += 100_000_000
            timing.woke += 100_000_000
            timing.written += 100_000_000
            analysis.add(timing)
        }
        #expect(analysis.underruns == 1 && analysis.framesLost == 4800)
        let fit = try #require(analysis.clockFit)
        #expect(abs(fit.driftPPM - 100) < 2)
        // Each stretch has its own line: the gap is no jitter.
        #expect(try #require(fit.jitter.max) < 30)
    }

    /// The shape of a loaded PulseAudio run (bench/RESULTS.md, "Loaded clean run ci15"): an
    /// underrun of 6 444 frames told before the first stretch had reports enough to place
    /// frame 0. Placed from the next stretch less the loss gong told, every cue came out −134 ms
    /// — the loss — while the recording had each on time. Frame 0 has no clock of its own
    /// there: no cue is judged, each says why, and the distribution is empty, not wrong.
    @Test func anUnderrunBeforeFrameZeroCouldBePlacedLeavesEveryCueNotJudged() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        let all = periods(count: 200, ppm: 100)
        let lost: Int64 = 6444
        let lostNanoseconds = Int64((Double(lost) / 48000 * 1e9).rounded())
        analysis.add(all[0])
        analysis.addUnderrun(lostFrames: lost, at: all[0].written + 1)
        for var timing in all.dropFirst() {
            timing.statusTimestamp += lostNanoseconds
            analysis.add(timing)
        }
        let fit = try #require(analysis.clockFit)
        #expect(!fit.originIsTrusted)
        for cue in 1...4 {
            let frame = Int64(cue) * 96000
            analysis.addCue(sessionFrame: frame, audible: fit.heardNanoseconds(ofFrame: frame) - lostNanoseconds)
        }
        #expect(analysis.cueVerdicts.map(\.judgement) == Array(repeating: .notJudged(.noOrigin), count: 4))
        #expect(analysis.cueError.count == 0 && analysis.cueErrors.isEmpty)
    }

    /// The other loaded PulseAudio run: two underruns (17 040 frames) and reports that bent the
    /// line to +86 019 ppm, cue errors of −128 to −505 ms on a recording that had every cue on
    /// time. No device's clock is 8.6 % fast: the fit is rejected, and no cue judged on it.
    @Test func aFitNoRealClockCouldMakeJudgesNoCue() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        let all = periods(count: 200, ppm: 86019)
        for timing in all.prefix(60) { analysis.add(timing) }
        analysis.addUnderrun(lostFrames: 8520, at: all[60].written)
        for timing in all[60..<120] { analysis.add(timing) }
        analysis.addUnderrun(lostFrames: 8520, at: all[120].written)
        for timing in all.dropFirst(120) { analysis.add(timing) }
        let fit = try #require(analysis.clockFit)
        #expect(abs(fit.driftPPM - 86019) < 10)
        #expect(!fit.isPlausible)
        for cue in 1...4 {
            let frame = Int64(cue) * 96000
            analysis.addCue(sessionFrame: frame, audible: fit.heardNanoseconds(ofFrame: frame) - 128_000_000)
        }
        #expect(
            analysis.cueVerdicts.map(\.judgement) == Array(repeating: .notJudged(.implausibleClock), count: 4))
        #expect(analysis.cueError.count == 0)
    }

    /// A run that lost nothing: every cue heard within the reports is judged, each on its error.
    @Test func aCleanRunJudgesEveryCue() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        for timing in periods(count: 240, ppm: 200) { analysis.add(timing) }
        let fit = try #require(analysis.clockFit)
        #expect(fit.isPlausible && fit.originIsTrusted)
        for cue in 1...5 {
            let frame = Int64(cue) * 96000
            analysis.addCue(sessionFrame: frame, audible: fit.heardNanoseconds(ofFrame: frame) + Int64(cue) * 1000)
        }
        #expect(analysis.cueVerdicts.map(\.judgement) == (1...5).map { .judged(errorNanoseconds: Int64($0) * 1000) })
        #expect(analysis.cueError.count == 5)
    }

    /// The shape of a loaded run through pipewire-pulse (issue 38's BenchPulseTests failure,
    /// traced): the server's client side starved for a second, the stream ran dry, and gong,
    /// woken late, wrote a cue after the silence had begun. The underrun was told (47 939
    /// frames) and the session moved on by it, but that cue was already written: heard late by
    /// the whole loss (the recording: 997.3 ms), and gong's clock, moved on, said so. The cues
    /// after it, whose session frames moved on by the loss, were on time. The analysis must
    /// judge each where it has a clock: that one, heard between the stretches with no report
    /// around it, is not judged (a recording judges it), the cue after it is, on time.
    @Test func aCueHeardAcrossTheSilenceIsNotJudgedAndTheCueAfterIsOnTime() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        let lost: Int64 = 47_939
        let lostNanoseconds = Int64((Double(lost) / 48000 * 1e9).rounded())
        let all = periods(count: 200, ppm: 300)
        // Reports every period for 2.5 s, then the loss; the device's frames after it are heard
        // the loss later than the first stretch's line puts them.
        for timing in all.prefix(50) { analysis.add(timing) }
        analysis.addUnderrun(lostFrames: lost, at: all[50].written + lostNanoseconds)
        for var timing in all.dropFirst(50) {
            timing.statusTimestamp += lostNanoseconds
            timing.woke += lostNanoseconds
            timing.written += lostNanoseconds
            analysis.add(timing)
        }
        let fit = try #require(analysis.clockFit)
        #expect(abs(fit.driftPPM - 300) < 2)
        // Where the device really played each frame: frame 0 at 1 s, at its rate, and the frames
        // written after the silence began a loss later.
        func heard(deviceFrame: Int64) -> Int64 {
            1_000_000_000 + lostNanoseconds + Int64((Double(deviceFrame) / (48000 * 1.0003) * 1e9).rounded())
        }
        // The cue at 2 s (session frame 96 000) was written after the silence began: device frame
        // 96 000. The one at 4 s is at device frame 192 000 less the loss the session moved on by.
        analysis.addCue(sessionFrame: 96000, outputFrame: 96000, audible: heard(deviceFrame: 96000))
        analysis.addCue(sessionFrame: 192_000, outputFrame: 192_000 - lost, audible: heard(deviceFrame: 192_000 - lost))
        let verdicts = analysis.cueVerdicts.map(\.judgement)
        #expect(verdicts.first == .notJudged(.outsideStretch), "\(verdicts)")
        let errors = analysis.cueErrors.map(\.errorNanoseconds)
        // Within the device's drift over the loss (300 ppm of a second) and the fit's rounding.
        #expect(errors.count == 1 && abs(errors[0]) < 1_000_000, "\(errors)")
    }

    /// JACK and PipeWire's own stream: a cue told on time, and then a loss behind it, once the
    /// callback had claimed it, made it heard a cycle late (`heardLate`, gong's `cueHeardLate`).
    /// Its error is its final lateness; a cue outside the frames heard late keeps its own.
    @Test func aCueToldAndThenHeardLateIsJudgedByItsFinalLateness() throws {
        var analysis = JitterAnalysis(rate: rate, paced: true)
        for timing in periods(count: 400, ppm: 0) { analysis.add(timing) }
        let fit = try #require(analysis.clockFit)
        // Three cues placed on time; a loss of 256 frames behind the second was told after it
        // (the output from just before it on), and the third came after that stretch.
        analysis.addCue(sessionFrame: 96_000, outputFrame: 96_000, audible: fit.heardNanoseconds(ofFrame: 96_000))
        analysis.addCue(sessionFrame: 192_000, outputFrame: 192_000, audible: fit.heardNanoseconds(ofFrame: 192_000))
        analysis.addHeardLate(fromOutputFrame: 191_000, toOutputFrame: 200_000, frames: 256)
        analysis.addCue(sessionFrame: 288_000, outputFrame: 288_000, audible: fit.heardNanoseconds(ofFrame: 288_000))
        // A stretch told again later (a second loss reaching back over it) adds up; one ending
        // where a cue begins does not reach it.
        analysis.addHeardLate(fromOutputFrame: 150_000, toOutputFrame: 192_001, frames: 128)
        analysis.addHeardLate(fromOutputFrame: 280_000, toOutputFrame: 288_000, frames: 64)
        let errors = analysis.cueErrors.map { Double($0.errorNanoseconds) / 1e6 }
        #expect(errors.count == 3)
        // 384 frames at 48 kHz: 8 ms late; the others on time.
        #expect(abs(errors[0]) < 0.001 && abs(errors[1] - 8) < 0.001 && abs(errors[2]) < 0.001, "\(errors) ms")
        #expect(abs(try #require(analysis.cueError.max) - 8_000) < 1)
    }

    @Test func anUnpacedDeviceHasNoClock() {
        var analysis = JitterAnalysis(rate: rate, paced: false)
        for timing in periods(count: 10, ppm: 0) { analysis.add(timing) }
        #expect(analysis.clockFit == nil)
        #expect(analysis.cueError.count == 0)
        // Each period is due when the last was written.
        #expect(analysis.wakeLatency.count == 9)
    }

    @Test func distributionsReportExactExtremesAndWhatFellBeyond() throws {
        var recorder = DistributionRecorder(rangeNanoseconds: 1_000_000)
        for value in [Int64(1000), 2000, 3000, 4000, 5_000_000] { recorder.record(nanoseconds: value) }
        let summary = recorder.summary
        #expect(summary.count == 5 && summary.beyondRange == 1)
        #expect(summary.min == 1 && summary.max == 5000)
        let p50 = try #require(summary.p50)
        #expect(abs(p50 - 2) < 0.01 || abs(p50 - 3) < 0.01)
        #expect(!summary.buckets.isEmpty)
        var signed = DistributionRecorder(signed: true)
        for value in [Int64(-3000), -1000, 0, 2000] { signed.record(nanoseconds: value) }
        #expect(signed.summary.min == -3 && signed.summary.p50 == -1 && signed.summary.max == 2)
        #expect(DistributionRecorder().summary.p50 == nil)
    }
}
