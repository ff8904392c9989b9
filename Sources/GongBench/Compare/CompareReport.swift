import Foundation

/// What `gong bench compare` heard: for each way of playing the schedule, where every cue
/// landed against it. The schedule is laid from each method's first cue heard (how soon a
/// player starts is not its timing), so an error is how far a cue landed from where the first
/// one says it belongs.
public struct CompareReport: Encodable, Sendable {
    public var schema = "gong-bench-compare/1"
    public var conditions: MachineConditions
    /// `pactl info`'s server name and version.
    public var server: String
    public var sink: String
    /// The null sink was the benchmark's own, made for the run and removed after.
    public var ownSink: Bool
    public var rate: Int
    public var everySeconds: Double
    public var cues: Int
    public var sound: String
    public var methods: [MethodResult]

    public struct MethodResult: Encodable, Sendable {
        public var method: CompareBench.Method
        public var label: String
        public var scheduled: Int
        public var found: Int
        public var missed: Int
        /// Onsets beyond the schedule's last cue: sounds the method played that no cue asked for.
        public var extra: Int
        /// |error| in frames at the recording's rate, and in milliseconds.
        public var p50Frames: Int64?
        public var p99Frames: Int64?
        public var maxFrames: Int64?
        public var p50Milliseconds: Double?
        public var p99Milliseconds: Double?
        public var maxMilliseconds: Double?
        /// How fast the error grows: the least-squares slope of error against time.
        public var driftMillisecondsPerMinute: Double?
        /// The last cue's error: where the run ended up.
        public var lastErrorMilliseconds: Double?
        /// How long the method took to play the schedule, from its start to its end.
        public var secondsToPlay: Double
        /// Every cue heard: its place in the schedule and its error in frames (signed: late is
        /// positive), as hyperfine keeps its raw times.
        public var errors: [CueError]

        public struct CueError: Encodable, Sendable, Equatable {
            public var cue: Int
            public var frames: Int64
        }

        /// Matches each onset to its cue: the next one after the last, or further on when the
        /// gap says cues were missed. The gap is judged by the method's own usual spacing (the
        /// median interval heard), so a loop that is late by the same amount every cue — sleep
        /// and play is — is still followed cue by cue.
        public init(
            method: CompareBench.Method, onsets: [Int], scheduled: Int, everyFrames: Int64, rate: Int,
            secondsToPlay: Double
        ) {
            self.method = method
            label = method.label
            self.scheduled = scheduled
            self.secondsToPlay = secondsToPlay
            let gaps = zip(onsets, onsets.dropFirst()).map { Double($1 - $0) }.sorted()
            let usual = gaps.isEmpty ? Double(everyFrames) : max(Double(everyFrames) / 2, gaps[gaps.count / 2])
            var errors: [CueError] = []
            if let first = onsets.first {
                var cue = 0
                var previous = first
                errors.append(CueError(cue: 0, frames: 0))
                for onset in onsets.dropFirst() {
                    cue += max(1, Int((Double(onset - previous) / usual).rounded()))
                    previous = onset
                    errors.append(CueError(cue: cue, frames: Int64(onset - first) - Int64(cue) * everyFrames))
                }
            }
            let inSchedule = errors.filter { $0.cue < scheduled }
            found = inSchedule.count
            extra = errors.count - inSchedule.count
            missed = scheduled - found
            self.errors = inSchedule
            let magnitudes = inSchedule.map { abs($0.frames) }.sorted()
            func rank(_ p: Double) -> Int64? {
                magnitudes.isEmpty
                    ? nil
                    : magnitudes[
                        max(0, min(magnitudes.count - 1, Int((p * Double(magnitudes.count)).rounded(.up)) - 1))]
            }
            func milliseconds(_ frames: Int64?) -> Double? { frames.map { Double($0) / Double(rate) * 1000 } }
            p50Frames = rank(0.5)
            p99Frames = rank(0.99)
            maxFrames = magnitudes.last
            p50Milliseconds = milliseconds(p50Frames)
            p99Milliseconds = milliseconds(p99Frames)
            maxMilliseconds = milliseconds(maxFrames)
            lastErrorMilliseconds = milliseconds(inSchedule.last?.frames)
            // Least squares of error (ms) against the cue's time (minutes).
            if inSchedule.count >= 2 {
                let points = inSchedule.map {
                    (Double($0.cue) * Double(everyFrames) / Double(rate) / 60, Double($0.frames) / Double(rate) * 1000)
                }
                let meanX = points.reduce(0) { $0 + $1.0 } / Double(points.count)
                let meanY = points.reduce(0) { $0 + $1.1 } / Double(points.count)
                let covariance = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
                let variance = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
                driftMillisecondsPerMinute = variance > 0 ? covariance / variance : nil
            }
        }

        /// Every key, `null` where nothing was heard.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeEvery([
                .method: method, .label: label, .scheduled: scheduled, .found: found, .missed: missed, .extra: extra,
                .p50Frames: p50Frames, .p99Frames: p99Frames, .maxFrames: maxFrames, .p50Milliseconds: p50Milliseconds,
                .p99Milliseconds: p99Milliseconds, .maxMilliseconds: maxMilliseconds,
                .driftMillisecondsPerMinute: driftMillisecondsPerMinute, .lastErrorMilliseconds: lastErrorMilliseconds,
                .secondsToPlay: secondsToPlay, .errors: errors
            ])
        }

        private enum CodingKeys: String, CodingKey {
            case method, label, scheduled, found, missed, extra, p50Frames, p99Frames, maxFrames, p50Milliseconds,
                p99Milliseconds, maxMilliseconds, driftMillisecondsPerMinute, lastErrorMilliseconds, secondsToPlay,
                errors
        }
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    public var text: String {
        var lines = [
            "server: \(server), sink \(sink)\(ownSink ? " (a null sink of gong's own)" : ""), recorded at \(rate) Hz from its monitor",
            "schedule: \(cues) \(sound) cues, one every \(fixed(everySeconds, 3).replacingOccurrences(of: #"\.?0+$"#, with: "", options: .regularExpression)) s, laid from each method's first cue heard; \(conditions.busyThreads) busy threads beside",
            ""
        ]
        let header = ["method", "found", "missed", "p50 error", "p99 error", "max error", "drift", "last cue"]
        var rows = [header]
        for result in methods {
            func both(_ frames: Int64?, _ milliseconds: Double?) -> String {
                guard let frames, let milliseconds else { return "-" }
                return "\(frames) fr (\(fixed(milliseconds, 2)) ms)"
            }
            rows.append([
                result.label, "\(result.found)/\(result.scheduled)", "\(result.missed)",
                both(result.p50Frames, result.p50Milliseconds), both(result.p99Frames, result.p99Milliseconds),
                both(result.maxFrames, result.maxMilliseconds),
                result.driftMillisecondsPerMinute.map { "\(fixed($0, 1)) ms/min" } ?? "-",
                result.lastErrorMilliseconds.map { "\(fixed($0, 1)) ms" } ?? "-"
            ])
        }
        lines += alignedColumns(rows)
        if let extra = methods.first(where: { $0.extra > 0 }) {
            lines.append("\(extra.label): \(extra.extra) sounds heard beyond the schedule")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Each method's error over the run; below it, when one method is far off (a sleep loop is
    /// seconds late), the ones within 100 ms on a scale that shows them.
    public func svg() -> String {
        func series(_ results: [MethodResult]) -> [ChartSeries] {
            results.map { result in
                ChartSeries(
                    name: result.label,
                    points: result.errors.map {
                        ChartSeries.Point(x: Double($0.cue) * everySeconds, y: Double($0.frames) / Double(rate) * 1000)
                    })
            }
        }
        let title = "Onset error against the schedule: \(server), \(conditions.busyThreads) busy threads"
        let all = SVGChart.timeSeries(
            title: title, xLabel: "cue's time in the schedule (s)", yLabel: "error (ms, late is positive)",
            series: series(methods))
        let far = methods.filter { ($0.maxMilliseconds ?? 0) > 100 }
        guard !far.isEmpty, far.count < methods.count else { return all }
        // The far ones stay in the legend, without their points, so each way keeps its color.
        var close = series(methods)
        for index in close.indices where (methods[index].maxMilliseconds ?? 0) > 100 { close[index].points = [] }
        return SVGChart.stack([
            all,
            SVGChart.timeSeries(
                title: "The same without the ways more than 100 ms off (\(far.map(\.label).joined(separator: ", ")))",
                xLabel: "cue's time in the schedule (s)", yLabel: "error (ms, late is positive)", series: close)
        ])
    }
}
