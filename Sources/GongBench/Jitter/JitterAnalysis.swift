import GongAudio
import GongCore

/// Turns what the audio thread and the engine reported during a run into the distributions
/// `gong bench jitter` states. Plain arithmetic on what it is given, so tests drive it with
/// made-up periods; the definitions are here, in one place:
///
/// - **Wake-up latency**: how late the audio thread woke against the device's own period grid.
///   On a paced device the period starting at device frame `f` falls due at `origin + f / rate`
///   less a constant (the buffer, and a sound server's own latency), where `origin` is the
///   device clock's moment for frame 0 at the time; the earliest wake of the run fixes that
///   constant, so each wake is measured from the best the thread did. Through a sound server the
///   grid is the server's, and the figure includes how the server batches its requests. On a
///   device that takes frames at once (ALSA's `null`) a period is due as soon as the last one was
///   written.
/// - **Render time**: from the wake to the period rendered and converted, against the period.
/// - **Device clock**: the frames the device has played at each status report (written less the
///   delay) against the report's CLOCK_MONOTONIC time, fitted by Sen's robust line within each
///   stretch without an underrun: the slope's distance from the nominal rate is the drift (ppm),
///   and the reports' distances from the line, at the device's own rate, its jitter.
/// - **Cue error**: when the engine placed each cue (from the device clock), against the
///   schedule laid at the device's measured rate from the moment the fit puts device frame 0.
public struct JitterAnalysis: Sendable {
    public let rate: Int
    /// False for a device that takes frames at once: its status says nothing of a clock.
    public let paced: Bool
    public private(set) var periods: [PeriodTiming] = []
    private var cues: [(sessionFrame: Int64, outputFrame: Int64?, audible: Int64)] = []
    /// Where the device clock's stretches break, with the frames the session was told lost there.
    private var breaks: [(at: Int64, lostFrames: Int64)] = []
    public private(set) var cuesPlayed = 0
    public private(set) var underruns = 0
    public private(set) var framesLost: Int64 = 0
    public private(set) var deviceLosses = 0

    public init(rate: Int, paced: Bool) {
        self.rate = rate
        self.paced = paced
    }

    public mutating func add(_ period: PeriodTiming) { periods.append(period) }

    /// A cue the engine started; `audible` 0 when the device gives no time. `outputFrame` (the
    /// renderer's, `RenderEvent.outputFrame`) places it for a later `addHeardLate`.
    public mutating func addCue(sessionFrame: Int64, outputFrame: Int64? = nil, audible: Int64) {
        cuesPlayed += 1
        if audible > 0 { cues.append((sessionFrame, outputFrame, audible)) }
    }

    /// A loss came behind frames the device already held (`EngineEvent.heardLate`): the cues
    /// already told among output frames `from..<to` were heard `frames` later than the engine
    /// said, and are judged where they were heard. (Cues told after it are placed by a clock
    /// that has taken the loss in already.)
    public mutating func addHeardLate(fromOutputFrame from: Int64, toOutputFrame to: Int64, frames: Int64) {
        let shift = FrameTime.nanoseconds(ofFrames: frames, rate: Int64(rate))
        for index in cues.indices {
            guard let frame = cues[index].outputFrame, (from..<to).contains(frame) else { continue }
            cues[index].audible += shift
        }
    }

    /// `at`: when the session was heard again (0 if unknown). Reports from when the silence
    /// began (that, less the frames lost) start a new stretch of the device clock: a report
    /// measured while the device still played what came before was measured before then, and
    /// those measured after it are of the frames after the loss, which are heard only once the
    /// buffer written after it has played — as much as the buffer later than `at` is, so a break
    /// at `at` put a buffer's worth of them in the stretch before.
    public mutating func addUnderrun(lostFrames: Int64, at: Int64) {
        underruns += 1
        framesLost += lostFrames
        let silenceBegan = at - FrameTime.nanoseconds(ofFrames: lostFrames, rate: Int64(rate))
        breaks.append((at > 0 ? silenceBegan : periods.last?.written ?? 0, lostFrames))
    }

    public mutating func addDeviceLoss(at: Int64) {
        deviceLosses += 1
        breaks.append((at > 0 ? at : periods.last?.written ?? 0, 0))
    }

    public var wakeLatency: Distribution {
        var recorder = DistributionRecorder()
        for latency in wakeLatencies { recorder.record(nanoseconds: latency.nanoseconds) }
        return recorder.summary
    }

    /// Each period's wake-up latency, with when the thread woke.
    public var wakeLatencies: [(woke: Int64, nanoseconds: Int64)] {
        if paced, periods.contains(where: { $0.clockOrigin > 0 }) {
            let due = periods.filter { $0.clockOrigin > 0 }.map {
                (
                    $0.woke,
                    $0.woke - $0.clockOrigin - FrameTime.nanoseconds(ofFrames: $0.framesBefore, rate: Int64(rate))
                )
            }
            let earliest = due.map(\.1).min() ?? 0
            return due.map { ($0.0, $0.1 - earliest) }
        }
        return zip(periods, periods.dropFirst()).map { previous, period in
            (period.woke, max(0, period.woke - previous.written))
        }
    }

    public var renderTime: Distribution {
        var recorder = DistributionRecorder()
        for period in periods { recorder.record(nanoseconds: period.rendered - period.woke) }
        return recorder.summary
    }

    /// The device clock's fit, nil without two distinct reports in one stretch.
    public var clockFit: ClockFit? {
        guard paced else { return nil }
        var stretches: [[(time: Int64, played: Int64)]] = [[]]
        // The frames told lost before each stretch: the session moved on by them, so a cue's
        // frame in a later stretch is that much further on than the device's.
        var lostBefore: [Int64] = [0]
        var lost: Int64 = 0
        var pending = breaks.sorted { $0.at < $1.at }[...]
        for period in periods where period.statusTimestamp > 0 {
            while let next = pending.first, next.at <= period.statusTimestamp {
                pending.removeFirst()
                lost += next.lostFrames
                if !(stretches.last?.isEmpty ?? true) {
                    stretches.append([])
                    lostBefore.append(lost)
                } else {
                    lostBefore[lostBefore.count - 1] = lost
                }
            }
            let played = period.statusWrittenFrames - period.statusDelayFrames
            // A report read again (a sound server answers a timing request once a second, and
            // the engine reads the last answer five times a second) is one report: the same
            // frames played, its time converted again.
            if let last = stretches[stretches.count - 1].last, last.played == played { continue }
            stretches[stretches.count - 1].append((period.statusTimestamp, played))
        }
        let kept = zip(stretches, lostBefore).filter { $0.0.count >= 2 }
        return ClockFit(stretches: kept.map(\.0), lostFramesBefore: kept.map(\.1), rate: rate)
    }

    public var cueError: Distribution {
        var recorder = DistributionRecorder(signed: true)
        if let fit = clockFit {
            for cue in cues {
                recorder.record(nanoseconds: cue.audible - fit.heardNanoseconds(ofFrame: cue.sessionFrame))
            }
        }
        return recorder.summary
    }

    /// Each cue's error in nanoseconds, with when it was heard: for a plot and the CSV.
    public var cueErrors: [(audible: Int64, errorNanoseconds: Int64)] {
        guard let fit = clockFit else { return [] }
        return cues.map { ($0.audible, $0.audible - fit.heardNanoseconds(ofFrame: $0.sessionFrame)) }
    }
}

/// A least-squares line through the device's played frames against CLOCK_MONOTONIC, one slope
/// shared by every stretch between underruns (each has its own offset).
public struct ClockFit: Sendable {
    /// Frames the device plays per second of CLOCK_MONOTONIC.
    public let framesPerSecond: Double
    public let nominalRate: Int
    public let reports: Int
    /// The first stretch's leading reports further than `settlingNanoseconds` from the line:
    /// taken before the device really played (PulseAudio's null sink starts up to 2 s late), they
    /// say nothing of its clock and are left out of the jitter.
    public let settlingReports: Int
    public static let settlingNanoseconds: Int64 = 10_000_000
    /// Each report's distance from the line, in nanoseconds at the device's own rate (positive:
    /// the device had played more than the line says), with the report's time.
    public let residuals: [(time: Int64, nanoseconds: Int64)]
    /// Where the first stretch's line puts device frame 0.
    private let firstFrameNanoseconds: Double

    /// The slope is Theil and Sen's: the median of the slopes between every two reports of a
    /// stretch, so a few odd reports cannot bend it as they bend least squares. Each stretch's
    /// offset is the median of its reports' own. A sound server's first reports, before its
    /// sink really plays, are off by hundreds of milliseconds, several within a millisecond of
    /// each other, and a short run has few others: in five seconds on PulseAudio, three such
    /// among seven bent the median to −11 %. So the first stretch's leading reports are judged
    /// against a line through its later half alone, those further than `settlingNanoseconds`
    /// off it left out, and the line fitted again through the rest.
    ///
    /// The cues are judged against frame 0 of the first stretch. When that stretch has too few
    /// reports to place it (an underrun in the first second), frame 0 is placed from the first
    /// stretch that has, less the frames the session was told lost before it
    /// (`lostFramesBefore`, one for each stretch): otherwise every cue would be judged off by
    /// exactly that loss (bench/RESULTS.md, "A stopped process through gong's PulseAudio client").
    /// Only there does the analysis take gong's word for a loss; the recording tests judge it.
    init?(stretches: [[(time: Int64, played: Int64)]], lostFramesBefore: [Int64]? = nil, rate: Int) {
        var lostBefore = lostFramesBefore ?? Array(repeating: 0, count: stretches.count)
        guard let opening = stretches.first, let start = opening.first?.time, let end = opening.last?.time else {
            return nil
        }
        let laterHalf = opening.filter { $0.time >= start + (end - start) / 2 }
        guard let probe = ClockFit.line(through: [laterHalf.count >= 2 ? laterHalf : opening]) else { return nil }
        let settling = ClockFit.residuals(of: [opening], line: probe).prefix {
            abs($0.nanoseconds) > ClockFit.settlingNanoseconds
        }.count
        var settled = stretches
        settled[0].removeFirst(min(settling, settled[0].count))
        if settled[0].count < 2 {
            settled.removeFirst()
            lostBefore.removeFirst()
        }
        guard let line = ClockFit.line(through: settled) else { return nil }
        framesPerSecond = line.slope * 1e9
        nominalRate = rate
        settlingReports = settling
        reports = stretches.reduce(0) { $0 + $1.count }
        residuals = ClockFit.residuals(of: settled, line: line)
        // Frame 0 of the first stretch, settled or not: its offset is the settled line's.
        firstFrameNanoseconds =
            Double(line.base) + line.origins[0] - Double(lostBefore.first ?? 0) / line.slope
    }

    /// Reports a stretch may have before the slope is taken from pairs a stride apart instead
    /// of every pair (4.5 million pairs at this many: under a second).
    private static let allPairsUpTo = 3000

    /// The median slope (frames per nanosecond), and where each stretch's line crosses frame 0
    /// (nanoseconds after `base`, the first report's time).
    private static func line(through stretches: [[(time: Int64, played: Int64)]])
        -> (slope: Double, base: Int64, origins: [Double])?
    {
        guard let base = stretches.first?.first?.time else { return nil }
        var slopes: [Double] = []
        for stretch in stretches {
            let stride = max(1, stretch.count / allPairsUpTo)
            let sample = Swift.stride(from: 0, to: stretch.count, by: stride).map { stretch[$0] }
            for (index, early) in sample.enumerated() {
                for late in sample[(index + 1)...] where late.time > early.time {
                    slopes.append(Double(late.played - early.played) / Double(late.time - early.time))
                }
            }
        }
        guard !slopes.isEmpty else { return nil }
        slopes.sort()
        let slope = slopes[slopes.count / 2]
        guard slope > 0 else { return nil }
        let origins = stretches.map { stretch in
            let crossings = stretch.map { Double($0.time - base) - Double($0.played) / slope }.sorted()
            return crossings[crossings.count / 2]
        }
        return (slope, base, origins)
    }

    /// Each report's distance from its stretch's line, in nanoseconds at the fitted rate.
    private static func residuals(
        of stretches: [[(time: Int64, played: Int64)]], line: (slope: Double, base: Int64, origins: [Double])
    ) -> [(time: Int64, nanoseconds: Int64)] {
        var result: [(time: Int64, nanoseconds: Int64)] = []
        for (stretch, origin) in zip(stretches, line.origins) {
            for report in stretch {
                let expected = (Double(report.time - line.base) - origin) * line.slope
                result.append((report.time, Int64(((Double(report.played) - expected) / line.slope).rounded())))
            }
        }
        return result
    }

    /// The device clock's rate against its nominal one, in parts per million.
    public var driftPPM: Double { (framesPerSecond / Double(nominalRate) - 1) * 1e6 }

    /// When the line says frame `frame` of the first stretch is heard.
    public func heardNanoseconds(ofFrame frame: Int64) -> Int64 {
        Int64((firstFrameNanoseconds + Double(frame) / framesPerSecond * 1e9).rounded())
    }

    public var jitter: Distribution {
        var recorder = DistributionRecorder(signed: true)
        for residual in residuals { recorder.record(nanoseconds: residual.nanoseconds) }
        return recorder.summary
    }
}
