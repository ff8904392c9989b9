/// Where a recording's frames were played on the system's clock, worked out from points that
/// each pair a frame with an instant (seconds of CLOCK_REALTIME), never from anything gong says:
/// the witness the bells test holds gong's seconds to. The points are a PulseAudio server's
/// timing replies (`PulseTap`: the frame the sink was playing at the reply's instant), or the
/// moments a recorder's blocks arrived (`StampedMonitorRecorder`, on PipeWire).
///
/// Each point, as (frame, instant less frame / rate), lies on or above the line that maps frames
/// to the instants they were played: a reply or a block is never early, and those that came
/// promptly lie on it. Of each `binSeconds` of frames the earliest point is taken (a busy
/// machine's late ones are dropped), and a line is fitted through those by Theil and Sen: its
/// slope the median of the slopes between every two, so the sink's drift there is measured and
/// taken out; its offset the median of theirs. Medians, because a few earliest points lie off
/// the line either way (a bin whose every point came late). Fitted only `reachSeconds` either
/// side of the frame asked about: a PulseAudio null sink plays some hundred ppm fast against the
/// system's clock while a stream plays on it, so its frames keep no one rate over a run.
///
/// Arrivals place a block by the frame the sink was playing as it handed the block over. A
/// PulseAudio null sink hands its monitor a block as it starts playing it (`.fromItsFirstFrame`,
/// true of the block's first piece only: the rest of a rendered block arrives with it, so placed
/// by their own first frames they put a sound up to a block early, which is why the bells test
/// uses the server's timing there); pipewire-pulse once the whole block has been played
/// (`.afterItsLastFrame`; placed by their first frames, its bells came out one block late,
/// bench/RESULTS.md, "the PipeWire bells' witness").
enum SinkClock {
    /// Which of a block's frames the sink had played when it handed the block over.
    enum Handing: Sendable {
        /// PulseAudio's null sink: the block as it starts playing it.
        case fromItsFirstFrame
        /// pipewire-pulse: the block once it has all been played.
        case afterItsLastFrame
    }

    /// A block the recorder read: its first frame, its length, and when the read returned
    /// (seconds of CLOCK_REALTIME); or a timing reply: the frame being played, no length, and the
    /// reply's instant.
    struct Arrival: Equatable, Sendable {
        var firstFrame: Int
        var frames: Int
        var seconds: Double
    }

    /// When a frame was played by the arrivals' line.
    struct Placement: Equatable, Sendable {
        /// The instant, seconds of CLOCK_REALTIME.
        var seconds: Double
        /// How much faster than the system's clock the sink played (frames per second over the
        /// rate, less one) where the line was fitted.
        var drift: Double
        /// The bins the line was fitted to, each its earliest arrival.
        var bins: Int
        /// How far from the line the median bin's earliest arrival lies, in seconds: near 0 when
        /// most bins had a block that came promptly, more when the machine held the recorder off.
        var medianLateness: Double

        /// How far the instant is from the nearest whole second, in milliseconds.
        var offSecondMs: Double { (seconds - seconds.rounded()) * 1000 }
    }

    /// Places `frame` by the points whose frames lie within `reachSeconds` of it; nil when
    /// fewer than three bins of them do (no line can be judged).
    static func place(
        frame: Int, in arrivals: [Arrival], handing: Handing = .fromItsFirstFrame, rate: Double = 48000,
        reachSeconds: Double = 2, binSeconds: Double = 0.1
    ) -> Placement? {
        guard let origin = arrivals.first else { return nil }
        // The frame of each block that was being played as the block arrived.
        func played(_ arrival: Arrival) -> Int {
            handing == .fromItsFirstFrame ? arrival.firstFrame : arrival.firstFrame + arrival.frames
        }
        // Relative to the first arrival and to `frame`, so the arithmetic keeps its microseconds.
        let base = origin.seconds - Double(played(origin)) / rate
        var earliest: [Int: (x: Double, y: Double)] = [:]
        for arrival in arrivals {
            let x = Double(played(arrival) - frame) / rate
            guard abs(x) <= reachSeconds else { continue }
            let y = arrival.seconds - Double(played(arrival)) / rate - base
            let bin = Int((x / binSeconds).rounded(.down))
            if earliest[bin].map({ y < $0.y }) ?? true { earliest[bin] = (x, y) }
        }
        let points = Array(earliest.values)
        guard points.count >= 3 else { return nil }
        var slopes: [Double] = []
        for (index, early) in points.enumerated() {
            for late in points[(index + 1)...] where late.x != early.x {
                slopes.append((late.y - early.y) / (late.x - early.x))
            }
        }
        let slope = median(slopes)
        let intercept = median(points.map { $0.y - slope * $0.x })
        return Placement(
            seconds: base + intercept + Double(frame) / rate,
            // Played at x (1 + slope) seconds for x seconds of frames: 1 / (1 + slope) − 1 fast.
            drift: 1 / (1 + slope) - 1, bins: points.count,
            medianLateness: median(points.map { abs($0.y - slope * $0.x - intercept) }))
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
