import Histogram

/// A distribution as cyclictest and hyperfine report one: count, min, mean, percentiles, max,
/// and how many values fell beyond the histogram's range — kept in an HDR histogram, so a
/// million samples cost the same few kilobytes as a hundred and every percentile is within
/// 0.1 % of the value it names.
///
/// Values are recorded in nanoseconds and reported in microseconds. A signed quantity (a cue
/// heard early or late, a clock report off its line) comes once a second or less and is kept
/// whole instead, its percentiles exact: an HDR histogram holds only non-negative values, and
/// shifting them by the range would cost its precision near zero, where they are. Min, max and
/// mean are exact, beyond the range too.
public struct DistributionRecorder: Sendable {
    private var histogram: Histogram<UInt64>
    private let signed: Bool
    private let rangeNanoseconds: Int64
    private var count = 0
    private var sum = 0.0
    private var minimum = Int64.max
    private var maximum = Int64.min
    private var beyondRange = 0
    private var signedValues: [Int64] = []

    /// - Parameters:
    ///   - rangeNanoseconds: the largest magnitude kept in the histogram; beyond it a value is
    ///     counted (and in min, max and mean) but not in the percentiles.
    ///   - signed: values may be negative, down to `-rangeNanoseconds`.
    public init(rangeNanoseconds: Int64 = 10_000_000_000, signed: Bool = false) {
        self.signed = signed
        self.rangeNanoseconds = rangeNanoseconds
        histogram = Histogram(
            lowestDiscernibleValue: 1, highestTrackableValue: UInt64(rangeNanoseconds),
            numberOfSignificantValueDigits: .three)
    }

    public mutating func record(nanoseconds value: Int64) {
        count += 1
        sum += Double(value)
        minimum = min(minimum, value)
        maximum = max(maximum, value)
        guard value.magnitude <= UInt64(rangeNanoseconds) else {
            beyondRange += 1
            return
        }
        if signed {
            signedValues.append(value)
        } else if value < 0 || !histogram.record(UInt64(max(1, value))) {
            beyondRange += 1
        }
    }

    /// The distribution in microseconds.
    public var summary: Distribution {
        guard count > 0 else { return Distribution(count: 0) }
        let sorted = signedValues.sorted()
        func percentile(_ p: Double) -> Double? {
            let value: Int64
            if signed {
                guard !sorted.isEmpty else { return nil }
                // Nearest rank.
                value = sorted[max(0, min(sorted.count - 1, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))]
            } else {
                guard histogram.totalCount > 0 else { return nil }
                value = Int64(histogram.valueAtPercentile(p))
            }
            // Within the histogram's precision, never outside what was seen.
            return microseconds(min(max(value, minimum), maximum))
        }
        return Distribution(
            count: count, min: microseconds(minimum), mean: sum / Double(count) / 1000, p50: percentile(50),
            p99: percentile(99), p999: percentile(99.9), max: microseconds(maximum), beyondRange: beyondRange,
            buckets: signed ? [] : buckets())
    }

    /// Counts in buckets a factor of √2 wide from 1 µs, for a log-scale plot.
    private func buckets() -> [Distribution.Bucket] {
        guard histogram.totalCount > 0 else { return [] }
        var result: [Distribution.Bucket] = []
        for step in histogram.logarithmicBucketValues(valueUnitsInFirstBucket: 1000, logBase: 2.0.squareRoot())
        where step.countAddedInThisIterationStep > 0 {
            result.append(
                Distribution.Bucket(
                    upToMicroseconds: Double(step.value) / 1000, count: Int(step.countAddedInThisIterationStep)))
        }
        return result
    }

    private func microseconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1000 }
}

/// What `DistributionRecorder` reports, in microseconds; every statistic nil when nothing was
/// measured.
public struct Distribution: Codable, Sendable, Equatable {
    public struct Bucket: Codable, Sendable, Equatable {
        public var upToMicroseconds: Double
        public var count: Int
    }

    public var count: Int
    public var min: Double?
    public var mean: Double?
    public var p50: Double?
    public var p99: Double?
    public var p999: Double?
    public var max: Double?
    /// Values beyond the histogram's range: in min, max and mean, not in the percentiles.
    public var beyondRange: Int
    /// For a plot: counts in log-spaced buckets (unsigned quantities only).
    public var buckets: [Bucket]

    public init(
        count: Int, min: Double? = nil, mean: Double? = nil, p50: Double? = nil, p99: Double? = nil,
        p999: Double? = nil, max: Double? = nil, beyondRange: Int = 0, buckets: [Bucket] = []
    ) {
        self.count = count
        self.min = min
        self.mean = mean
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.beyondRange = beyondRange
        self.buckets = buckets
    }

    /// Encodes every key, nil ones as `null`, so a reader finds the same fields in every report.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeEvery([
            .count: count, .min: min, .mean: mean, .p50: p50, .p99: p99, .p999: p999, .max: max,
            .beyondRange: beyondRange, .buckets: buckets
        ])
    }
}
