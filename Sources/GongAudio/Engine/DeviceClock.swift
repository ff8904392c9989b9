import GongCore

/// The device's clock against CLOCK_MONOTONIC: the moment device frame 0 was (or would have
/// been) heard, learnt from status reports, and the gaps in which the device played nothing of
/// ours.
///
/// Each report says that the next frame written is heard `delay` frames after a moment, so
/// frame 0 is heard at `moment + delay − written`. One report jitters by milliseconds (the status
/// call runs late, never early), so the origin is the lowest estimate of the last one to two
/// seconds, which also follows slow drift between the two clocks. Frames heard later than that
/// origin allows, by more than the jitter and in two reports in a row, mean audio was lost — an
/// underrun a sound server hid, or a stopped process — and how much.
///
/// A device that counts what it lost to the frame (`PCM.silenceHeardFrames`) says so itself:
/// the clock then only places frames in time, measures no gap, and is moved on by what the
/// device counted, and by the time its clock stood still when it tells that
/// (`PCM.clockStoppedNanoseconds`). JACK's reports come from each cycle's wake-up, late and
/// never early, so the earliest estimate stands there too. PipeWire's come from the server's own
/// clock, which wobbles both ways (jack2's DLL did the same when it was JACK's source: settling
/// after a late wake-up, it placed frames 16 ms early for a while on an idle machine, and the
/// earliest estimate then called an exact cue off its frame); the origin of such a device is the
/// median of the last 15 estimates: a wobble of fewer reports than half of them does not move it.
///
/// Plain arithmetic on integers: the real-time loop calls it and tests drive it with made-up
/// reports.
struct DeviceClock {
    let rate: Int64
    /// The smallest lateness taken for lost audio: above the status reports' jitter.
    let gapThresholdNanoseconds: Int64
    /// False when the device counts its lost frames itself.
    let measuresGaps: Bool
    /// The origin is the earliest recent placement (reports late, never early); else the
    /// median of the last 15 (a server clock that wobbles both ways).
    let keepsEarliest: Bool
    /// When device frame 0 is heard, in CLOCK_MONOTONIC nanoseconds; nil until the first report.
    private(set) var originNanoseconds: Int64?
    private var pendingGap: Int64 = 0
    private var lastMeasuredAt = Int64.min
    private var reportedUnderruns = 0
    private var currentWindowMinimum = Int64.max
    private var previousWindowMinimum = Int64.max
    private var windowEndFrame: Int64 = 0
    /// A device that counts its losses: the origins its last reports placed (a ring), whose
    /// median is the origin. Fifteen reports: three seconds at the push loop's five a second.
    private var recent = InlineArray<15, Int64>(repeating: 0)
    private var recentCount = 0
    private var recentNext = 0

    /// - Parameter reportJitterNanoseconds: how far apart honest reports may place a frame
    ///   (`PCMConfiguration.reportJitterNanoseconds`). A gap must stand clear of that and of the
    ///   drift the origin's one-to-two-second window lags behind: 2 ms, a thousand ppm, more than
    ///   any device has shown here.
    ///   - measuresGaps: false for a device that counts the frames it lost (`lost(frames:)`).
    ///   - keepsEarliest: false for a device whose reports may be early as well as late.
    @_noAllocation @_noLocks
    init(rate: Int, reportJitterNanoseconds: Int64, measuresGaps: Bool = true, keepsEarliest: Bool = true) {
        self.rate = Int64(rate)
        gapThresholdNanoseconds = reportJitterNanoseconds + 2_000_000
        self.measuresGaps = measuresGaps
        self.keepsEarliest = keepsEarliest
    }

    /// The device counted `frames` heard as silence in place of ours: every frame written since
    /// is heard that much later.
    @_noAllocation @_noLocks
    mutating func lost(frames: Int64) {
        stood(nanoseconds: FrameTime.nanoseconds(ofFrames: frames, rate: rate))
    }

    /// The device's clock stood still for `nanoseconds` (told by the device): every frame from
    /// now on is heard that much later.
    @_noAllocation @_noLocks
    mutating func stood(nanoseconds: Int64) {
        pendingGap = 0
        originNanoseconds = originNanoseconds.map { $0 + nanoseconds }
        if currentWindowMinimum != .max { currentWindowMinimum += nanoseconds }
        if previousWindowMinimum != .max { previousWindowMinimum += nanoseconds }
        for index in 0..<recentCount { recent[index] += nanoseconds }
    }

    /// The device reported an underrun (`-EPIPE`) and was recovered: the next report measures
    /// the audio it lost, however small.
    @_noAllocation @_noLocks
    mutating func noteReportedUnderrun() {
        reportedUnderruns += 1
    }

    /// Whether an underrun the device reported waits to be measured: reports are wanted soon.
    var awaitsUnderrunMeasure: Bool {
        @_noAllocation @_noLocks get { reportedUnderruns > 0 && originNanoseconds != nil }
    }

    /// Takes one status report: `writtenFrames` handed to the device so far, the next of which
    /// is heard `delayFrames` after `measuredAt`. Returns the frames lost, when the report shows
    /// (or confirms) a gap or measures a reported underrun that lost any.
    ///
    /// - Parameter measuredLoss: what the reported underrun cost, as the device measured it on
    ///   its own clock (`PCMStatus.underrunLostFrames`): taken as it is, at once. The reports'
    ///   times alone would measure it on the system clock, across the whole stall, and need a
    ///   second report to confirm a large one.
    @_noAllocation @_noLocks
    mutating func observe(writtenFrames: Int64, delayFrames: Int, measuredAt: Int64, measuredLoss: Int64? = nil)
        -> Int64?
    {
        // A report read again (a sound server answers a timing request once a second, and the
        // loop reads the last answer five times a second) says nothing new, and must not count
        // as the second report that confirms a gap: one late answer read twice moved the
        // session clock on PipeWire under load, and put later cues up to 41 ms early.
        guard measuredAt != lastMeasuredAt else { return nil }
        lastMeasuredAt = measuredAt
        let origin = measuredAt + FrameTime.nanoseconds(ofFrames: Int64(delayFrames) - writtenFrames, rate: rate)
        if writtenFrames >= windowEndFrame {
            previousWindowMinimum = currentWindowMinimum
            currentWindowMinimum = .max
            windowEndFrame = writtenFrames + rate
        }
        var lost: Int64?
        if reportedUnderruns > 0, originNanoseconds != nil, let measuredLoss {
            lost = measuredLoss > 0 ? measuredLoss : nil
            restart(at: origin)
        } else if measuresGaps, let expected = originNanoseconds, origin - expected > gapThresholdNanoseconds {
            // It must show in two reports in a row, so one odd report cannot skip part of the
            // session; the smaller of the two is what was lost.
            if pendingGap > 0 {
                lost = frames(min(origin - expected, pendingGap))
                restart(at: origin)
            } else {
                pendingGap = origin - expected
            }
        } else {
            pendingGap = 0
            if reportedUnderruns > 0, let expected = originNanoseconds {
                // An underrun that cost not a frame of time (a sound server that ran dry only
                // for an instant, before its sink needed the frames) left nothing to report.
                let measured = frames(max(0, origin - expected))
                lost = measured > 0 ? measured : nil
                restart(at: origin)
            }
            currentWindowMinimum = min(currentWindowMinimum, origin)
        }
        if keepsEarliest {
            originNanoseconds = min(previousWindowMinimum, currentWindowMinimum)
        } else {
            remember(origin)
            originNanoseconds = recentMedian()
        }
        return lost
    }

    @_noAllocation @_noLocks
    private mutating func remember(_ origin: Int64) {
        recent[recentNext] = origin
        recentNext = (recentNext + 1) % recent.count
        recentCount = min(recentCount + 1, recent.count)
    }

    /// The median of the recent origins (the lower of the middle two of an even count), sorted
    /// in a copy on the stack.
    @_noAllocation @_noLocks
    private func recentMedian() -> Int64 {
        var sorted = recent
        var index = 1
        while index < recentCount {
            let value = sorted[index]
            var slot = index
            while slot > 0 && sorted[slot - 1] > value {
                sorted[slot] = sorted[slot - 1]
                slot -= 1
            }
            sorted[slot] = value
            index += 1
        }
        return sorted[(recentCount - 1) / 2]
    }

    /// When device frame `frame` is heard, or nil before the first report.
    @_noAllocation @_noLocks
    func audibleNanoseconds(ofDeviceFrame frame: Int64) -> Int64? {
        originNanoseconds.map { $0 + FrameTime.nanoseconds(ofFrames: frame, rate: rate) }
    }

    @_noAllocation @_noLocks
    private mutating func restart(at origin: Int64) {
        pendingGap = 0
        reportedUnderruns = 0
        previousWindowMinimum = origin
        currentWindowMinimum = origin
        recentCount = 0
        recentNext = 0
    }

    @_noAllocation @_noLocks
    private func frames(_ nanoseconds: Int64) -> Int64 {
        FrameTime.frames(inNanoseconds: nanoseconds, rate: rate)
    }
}
