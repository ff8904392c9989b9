import FoundationEssentials
import GongAudio
import GongCore
import GongKit

/// What `gong bench jitter` found, with the conditions it was found in. Its JSON (`--json`)
/// carries every field, a statistic nobody could measure as `null`; the raw per-period values
/// go to `--csv`.
public struct JitterReport: Encodable, Sendable {
    /// Names this document's shape for tools that read it.
    public var schema = "gong-bench-jitter/1"
    public var conditions: MachineConditions
    public var device: DeviceGranted
    /// How the kernel schedules the audio thread, read back while it played.
    public var priority: GrantedPriority?
    /// What the audio thread asked for and was refused, in words.
    public var priorityRefused: String?
    /// From the start of playback to the last frame heard.
    public var seconds: Double
    /// Interrupted before the planned duration (Ctrl-C): the figures cover `seconds` only.
    public var stoppedEarly: Bool
    public var periods: Int
    /// Periods whose timing record found the ring full (the control side fell behind).
    public var periodRecordsLost: Int
    public var eventsDropped: Int
    /// The audio thread's wake-ups against the device's period grid (see `JitterAnalysis`).
    public var wakeLatency: Distribution
    /// cyclictest's measure, from a thread at the audio thread's priority (see `TimerLatency`).
    public var timerLatency: Distribution
    public var renderTime: Distribution
    /// The render time's p99 as a share of the period's duration (0.01: one hundredth).
    public var renderP99ShareOfPeriod: Double?
    public var deviceClock: DeviceClock
    public var cuesPlayed: Int
    /// The judged cues' errors; a cue the device clock cannot place is in `cuesNotJudged`.
    public var cueError: Distribution
    /// Cues the bench could not place on a clock it can vouch for (`CueVerdict`).
    public var cuesNotJudged: Int
    /// Every cue in order: its error, or why it was not judged.
    public var cues: [CueEntry]
    public var underruns: Int
    public var underrunsPerHour: Double
    public var framesLost: Int64
    public var deviceLosses: Int
    /// The raw values behind the distributions, for `--csv` and `--svg`; not in the JSON.
    public var series: Series

    private enum CodingKeys: String, CodingKey {
        case schema, conditions, device, priority, priorityRefused, seconds, stoppedEarly, periods, periodRecordsLost,
            eventsDropped, wakeLatency, timerLatency, renderTime, renderP99ShareOfPeriod, deviceClock, cuesPlayed,
            cueError, cuesNotJudged, cues,
            underruns, underrunsPerHour, framesLost, deviceLosses
    }

    public struct DeviceGranted: Encodable, Sendable {
        public var name: String
        public var rate: Int
        public var channels: Int
        public var format: String
        public var periodFrames: Int
        public var bufferFrames: Int
        public var periodMilliseconds: Double
        public var bufferMilliseconds: Double
        /// Through a sound server (PulseAudio, PipeWire) rather than a card's own buffer.
        public var soundServer: Bool
        /// False for a device that takes frames at once (ALSA's `null`): it has no clock.
        public var paced: Bool

        init(_ configuration: PCMConfiguration) {
            name = configuration.device
            rate = configuration.rate
            channels = configuration.channels
            format = configuration.format.rawValue
            periodFrames = configuration.periodFrames
            bufferFrames = configuration.bufferFrames
            periodMilliseconds = Double(configuration.periodFrames) / Double(configuration.rate) * 1000
            bufferMilliseconds = Double(configuration.bufferFrames) / Double(configuration.rate) * 1000
            soundServer = configuration.soundServer
            paced = configuration.paced
        }
    }

    /// One cue: its error in µs when judged, else why not (`CueVerdict.NotJudged`, and in words).
    public struct CueEntry: Encodable, Sendable {
        /// Where the schedule has it, from the session's first frame.
        public var sessionSeconds: Double
        public var errorMicroseconds: Double?
        public var notJudged: CueVerdict.NotJudged?
        public var reason: String?

        init(_ verdict: CueVerdict, rate: Int) {
            sessionSeconds = Double(verdict.sessionFrame) / Double(rate)
            switch verdict.judgement {
            case .judged(let error): errorMicroseconds = Double(error) / 1000
            case .notJudged(let why):
                notJudged = why
                reason = why.reason
            }
        }

        private enum CodingKeys: String, CodingKey { case sessionSeconds, errorMicroseconds, notJudged, reason }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeEvery([
                .sessionSeconds: sessionSeconds, .errorMicroseconds: errorMicroseconds, .notJudged: notJudged,
                .reason: reason
            ])
        }
    }

    public struct DeviceClock: Encodable, Sendable {
        /// Distinct status reports the fit was made from.
        public var reports: Int
        /// Reports left out as taken before the device really played (`ClockFit.settlingReports`).
        public var settlingReports: Int
        /// Against CLOCK_MONOTONIC; positive: the device plays more frames a second than nominal.
        /// Null when the fit is no real device's clock (`ClockFit.plausibleDriftPPM`).
        public var driftPPM: Double?
        /// The fit's drift when it was beyond any real device's, and so not stated as `driftPPM`.
        public var rejectedDriftPPM: Double?
        /// The reports' distances from the fitted line, at the device's own rate (none on a
        /// rejected fit).
        public var jitter: Distribution

        init(_ fit: ClockFit?) {
            reports = fit?.reports ?? 0
            settlingReports = fit?.settlingReports ?? 0
            let plausible = fit?.isPlausible ?? false
            driftPPM = plausible ? fit?.driftPPM : nil
            rejectedDriftPPM = plausible ? nil : fit?.driftPPM
            jitter = plausible ? fit?.jitter ?? Distribution(count: 0) : Distribution(count: 0)
        }

        private enum CodingKeys: String, CodingKey { case reports, settlingReports, driftPPM, rejectedDriftPPM, jitter }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeEvery([
                .reports: reports, .settlingReports: settlingReports, .driftPPM: driftPPM,
                .rejectedDriftPPM: rejectedDriftPPM, .jitter: jitter
            ])
        }
    }

    /// Seconds from the first period, and a value in microseconds.
    public struct Series: Sendable {
        public var wakeLatency: [(seconds: Double, microseconds: Double)] = []
        public var renderTime: [(seconds: Double, microseconds: Double)] = []
        public var clockJitter: [(seconds: Double, microseconds: Double)] = []
        public var cueError: [(seconds: Double, microseconds: Double)] = []

        init(_ analysis: JitterAnalysis, fit: ClockFit?) {
            guard let first = analysis.periods.first?.woke else { return }
            func seconds(_ time: Int64) -> Double { Double(time - first) / 1e9 }
            let latencies = analysis.wakeLatencies
            wakeLatency = latencies.map { (seconds($0.woke), Double($0.nanoseconds) / 1000) }
            renderTime = analysis.periods.map { (seconds($0.woke), Double($0.rendered - $0.woke) / 1000) }
            clockJitter = (fit.flatMap { $0.isPlausible ? $0.residuals : nil } ?? []).map {
                (seconds($0.time), Double($0.nanoseconds) / 1000)
            }
            cueError = analysis.cueErrors.map { (seconds($0.audible), Double($0.errorNanoseconds) / 1000) }
        }
    }

    /// Every field, `null` where nothing was measured.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeEvery([
            .schema: schema, .conditions: conditions, .device: device, .priority: priority,
            .priorityRefused: priorityRefused, .seconds: seconds, .stoppedEarly: stoppedEarly, .periods: periods,
            .periodRecordsLost: periodRecordsLost, .eventsDropped: eventsDropped, .wakeLatency: wakeLatency,
            .timerLatency: timerLatency, .renderTime: renderTime, .renderP99ShareOfPeriod: renderP99ShareOfPeriod,
            .deviceClock: deviceClock, .cuesPlayed: cuesPlayed, .cueError: cueError, .cuesNotJudged: cuesNotJudged,
            .cues: cues, .underruns: underruns,
            .underrunsPerHour: underrunsPerHour, .framesLost: framesLost, .deviceLosses: deviceLosses
        ])
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        // Every value is a finite number or a string: encoding cannot fail.
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The raw values, one per row: `kind,seconds,microseconds` with kind `wake`, `render`,
    /// `clock` or `cue`.
    public func csv() -> String {
        var lines = ["kind,seconds,microseconds"]
        for (kind, values) in [
            ("wake", series.wakeLatency), ("render", series.renderTime), ("clock", series.clockJitter),
            ("cue", series.cueError)
        ] {
            for value in values { lines.append("\(kind),\(fixed(value.seconds, 6)),\(fixed(value.microseconds, 3))") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The report as a person reads it, cyclictest's way: one row per measure.
    public var text: String {
        let machine = conditions
        var lines: [String] = []
        lines.append(
            "device \(device.name): \(device.rate) Hz, \(device.channels) ch, \(device.format), period \(device.periodFrames) frames (\(fixed(device.periodMilliseconds, 1)) ms), buffer \(device.bufferFrames) (\(fixed(device.bufferMilliseconds, 1)) ms)"
                + (device.soundServer ? ", through a sound server" : "") + (device.paced ? "" : ", unpaced (no clock)"))
        lines.append(
            "machine: Linux \(machine.kernelRelease)\(machine.preemptRT ? " PREEMPT_RT" : " (not PREEMPT_RT)"), \(machine.cpuCount) CPUs"
                + (machine.cpuModel.map { " (\($0))" } ?? "")
                + ", governor \(machine.frequencyGovernor ?? "not readable")"
                + ", load \(loads(machine.loadAverageBefore)) before, \(loads(machine.loadAverageAfter ?? [])) after"
                + ", \(machine.busyThreads) busy threads beside")
        lines.append(
            "audio thread: "
                + (priority?.description ?? "priority not read") + (priorityRefused.map { " (\($0))" } ?? ""))
        lines.append(
            "\(fixed(seconds, 1)) s\(stoppedEarly ? " (stopped early)" : ""), \(periods) periods, \(cuesPlayed) cues"
                + (periodRecordsLost > 0 ? ", \(periodRecordsLost) period records lost" : ""))
        lines.append("")
        let header = ["", "count", "min", "mean", "p50", "p99", "p99.9", "max", "beyond"]
        var rows = [header]
        for (name, distribution) in [
            ("wake-up, device grid (µs)", wakeLatency), ("wake-up, 1 ms timer (µs)", timerLatency),
            ("render time (µs)", renderTime),
            ("device clock jitter (µs)", deviceClock.jitter), ("cue error (µs)", cueError)
        ] {
            let stats = [
                distribution.min, distribution.mean, distribution.p50, distribution.p99, distribution.p999,
                distribution.max
            ]
            rows.append(
                [name, "\(distribution.count)"] + stats.map { $0.map { fixed($0, 1) } ?? "-" }
                    + ["\(distribution.beyondRange)"])
        }
        lines += alignedColumns(rows)
        lines.append("")
        if device.soundServer {
            lines.append(
                "through a sound server the audio thread wakes when the server asks for audio, in blocks of its own: its latency against the device grid includes them; the 1 ms timer row is cyclictest's measure at the same priority"
            )
        }
        if let share = renderP99ShareOfPeriod {
            lines.append(
                "render time p99: \(fixed(share * 100, 3)) % of the \(fixed(device.periodMilliseconds, 1)) ms period")
        }
        lines.append(
            "device clock: "
                + (deviceClock.driftPPM.map {
                    "\($0 >= 0 ? "+" : "")\(fixed($0, 1)) ppm against CLOCK_MONOTONIC (\(deviceClock.reports) reports"
                        + (deviceClock.settlingReports > 0
                            ? ", \(deviceClock.settlingReports) from before the device played left out of the jitter)"
                            : ")")
                } ?? "no drift measured (\(clockUnmeasured))"))
        if cuesNotJudged > 0 {
            lines.append(
                "cues not judged: \(cuesNotJudged) of \(cuesPlayed), left out of the cue error: "
                    + cues.compactMap { cue in
                        cue.reason.map { "at \(fixed(cue.sessionSeconds, 3)) s, \($0)" }
                    }.joined(separator: "; "))
        }
        lines.append(
            "underruns: \(underruns) (\(fixed(underrunsPerHour, 1)) an hour), \(framesLost) frames lost, \(deviceLosses) device losses"
                + (eventsDropped > 0 ? ", \(eventsDropped) events dropped" : ""))
        return lines.joined(separator: "\n") + "\n"
    }

    private var clockUnmeasured: String {
        if !device.paced { return "the device has no clock" }
        if let rejected = deviceClock.rejectedDriftPPM {
            return
                "the fit through \(deviceClock.reports) reports, \(fixed(rejected, 0)) ppm off, is no real device's clock: reports spoilt"
        }
        return "too few status reports"
    }

    private func loads(_ values: [Double]) -> String {
        values.isEmpty ? "not readable" : values.map { fixed($0, 2) }.joined(separator: " ")
    }
}

/// `value` with `digits` decimals, as `%.Nf` writes it.
func fixed(_ value: Double, _ digits: Int) -> String { Figure.fixed(value, digits) }

extension JitterReport {
    /// Plots: wake-up latency and render time on log scales, the device clock's jitter and each
    /// cue's error over the run.
    public func svg() -> String {
        func buckets(_ name: String, _ distribution: Distribution) -> ChartSeries {
            ChartSeries(
                name: name,
                points: distribution.buckets.map { ChartSeries.Point(x: $0.upToMicroseconds, y: Double($0.count)) })
        }
        func line(_ name: String, _ values: [(seconds: Double, microseconds: Double)]) -> ChartSeries {
            ChartSeries(name: name, points: values.map { ChartSeries.Point(x: $0.seconds, y: $0.microseconds) })
        }
        let title =
            "\(device.name), \(fixed(device.bufferMilliseconds, 0)) ms buffer, \(conditions.busyThreads) busy threads"
        return SVGChart.stack([
            SVGChart.logHistogram(
                title: "Wake-up latency and render time per period: \(title)", valueUnit: "µs",
                series: [
                    buckets("wake-up, device grid", wakeLatency), buckets("wake-up, 1 ms timer", timerLatency),
                    buckets("render time", renderTime)
                ]),
            SVGChart.timeSeries(
                title: "Device clock reports off its line, and cue errors", xLabel: "seconds into the run",
                yLabel: "µs", series: [line("device clock report", series.clockJitter), line("cue", series.cueError)])
        ])
    }
}
