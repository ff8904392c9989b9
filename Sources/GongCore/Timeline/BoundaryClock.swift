/// A time from the session origin: exact where the pattern allows it, otherwise the closest double.
enum SessionTime {
    case exact(Rational)
    case approximate(Double)

    var seconds: Double {
        switch self {
        case .exact(let value): value.doubleValue
        case .approximate(let value): value
        }
    }

    /// The one rounding a time ever sees.
    func frame(atRate rate: Int) -> Int64 {
        switch self {
        case .exact(let value): value.frame(atRate: rate)
        case .approximate(let value): Int64((value * Double(rate)).rounded(.toNearestOrAwayFromZero))
        }
    }
}

/// When each phase of each cycle begins, computed directly from the origin for any (cycle, phase).
///
/// Three shapes of pattern:
/// - fixed phases: `warm-up + cycle × cycleLength + offset(phase)`, exact;
/// - a constant breathing rate: `warm-up + (cycle + share(phase)) × 60/bpm`, exact;
/// - a ramping rate: the breath count grows as the integral of the rate, `φ(t) = ∫ bpm/60 dt`,
///   and the phase begins where `φ(t) = cycle + share(phase)`; for a linear ramp that is the root
///   of a quadratic, evaluated in closed form (so still never accumulated).
struct BoundaryClock {
    private enum Shape {
        case fixed(offsets: [Rational], cycleLength: Rational)
        case constantRate(shares: [Rational], breath: Rational)
        case ramp(shares: [Double], pace: Pace)
    }

    private let shape: Shape
    private let warmUp: Rational
    private let phaseCount: Int

    init(_ pattern: Pattern) throws(PatternError) {
        warmUp = pattern.warmUp
        phaseCount = pattern.phases.count
        let tooComplex = PatternError(
            key: "phases", problem: "the phase lengths cannot be combined exactly (their fractions are too fine)",
            allowed: "lengths with at most a few decimal places")
        var offsets: [Rational] = [.zero]
        for phase in pattern.phases {
            guard let next = offsets[offsets.count - 1].adding(phase.length) else { throw tooComplex }
            offsets.append(next)
        }
        let total = offsets[offsets.count - 1]
        guard let pace = pattern.pace else {
            shape = .fixed(offsets: offsets, cycleLength: total)
            return
        }
        var shares: [Rational] = []
        for offset in offsets {
            guard let share = offset.divided(by: total) else { throw tooComplex }
            shares.append(share)
        }
        // The shortest phase happens at the fastest rate; it must still be a distinct cue.
        let fastest = max(pace.from, pace.to)
        for (index, phase) in pattern.phases.enumerated() {
            let seconds = phase.length.doubleValue / total.doubleValue * 60 / fastest.doubleValue
            guard seconds >= PatternLimits.minPhaseSeconds.doubleValue else {
                throw PatternError(
                    key: "phases[\(index)].length", value: formatDecimal(phase.length),
                    problem:
                        "\(phase.name) would last only \(DurationText.format(seconds: seconds)) at \(formatDecimal(fastest)) breaths/min",
                    allowed: "a larger share, or a slower rate (phases last at least 0.25s)")
            }
        }
        if pace.isRamp {
            shape = .ramp(shares: shares.map(\.doubleValue), pace: pace)
        } else {
            guard let breath = Rational(60).divided(by: pace.from) else { throw tooComplex }
            shape = .constantRate(shares: shares, breath: breath)
        }
    }

    /// When phase `phase` of cycle `cycle` begins; `phase == phaseCount` is the next cycle's start.
    func time(cycle: Int, phase: Int) throws(PatternError) -> SessionTime {
        let overflow = PatternError(
            key: "length", problem: "the session is too long to schedule exactly", allowed: PatternLimits.sessionAllowed
        )
        switch shape {
        case .fixed(let offsets, let cycleLength):
            guard let cycleStart = cycleLength.multiplied(by: Rational(Int64(cycle))),
                let t = cycleStart.adding(offsets[phase]).flatMap({ $0.adding(warmUp) })
            else { throw overflow }
            return .exact(t)
        case .constantRate(let shares, let breath):
            guard let breaths = Rational(Int64(cycle)).adding(shares[phase]),
                let t = breaths.multiplied(by: breath).flatMap({ $0.adding(warmUp) })
            else { throw overflow }
            return .exact(t)
        case .ramp(let shares, let pace):
            return .approximate(
                warmUp.doubleValue + BoundaryClock.rampTime(breaths: Double(cycle) + shares[phase], pace: pace))
        }
    }

    /// The time at which `breaths` whole breaths have been taken under a linear ramp that then holds.
    static func rampTime(breaths: Double, pace: Pace) -> Double {
        let r0 = pace.from.doubleValue, r1 = pace.to.doubleValue, ramp = pace.rampSeconds.doubleValue
        let breathsDuringRamp = (r0 + r1) * ramp / 120
        if breaths > breathsDuringRamp {
            return ramp + (breaths - breathsDuringRamp) * 60 / r1
        }
        // Solve a·t² + r0·t − 60·φ = 0 with a = (r1 − r0)/(2·ramp), in the form that stays
        // accurate as a → 0 (no cancellation): t = 2c / (r0 + √(r0² + 4ac)).
        let a = (r1 - r0) / (2 * ramp)
        let c = 60 * breaths
        return 2 * c / (r0 + (r0 * r0 + 4 * a * c).squareRoot())
    }

    /// How many cycles the session runs: as asked, or as many whole cycles as fit in the duration.
    func cycleCount(_ length: SessionLength) throws(PatternError) -> Int {
        switch length {
        case .cycles(let count):
            return count
        case .open:
            // As many whole cycles as the longest session holds (`Pattern.laidOut` made one fit).
            return try cycleCount(.duration(PatternLimits.maxSessionSeconds.subtracting(warmUp) ?? .zero))
        case .duration(let seconds):
            let origin = try time(cycle: 0, phase: 0).seconds
            var count = 0
            // Whole cycles only: a breath is never cut short to meet the clock.
            while count < PatternLimits.maxCycles {
                let ends = try time(cycle: count + 1, phase: 0)
                let fits: Bool
                if case .exact(let t) = ends, let limit = warmUp.adding(seconds) {
                    fits = t <= limit
                } else {
                    fits = ends.seconds - origin <= seconds.doubleValue + 1e-9
                }
                guard fits else { break }
                count += 1
            }
            guard count > 0 else {
                let cycle = try time(cycle: 1, phase: 0).seconds - origin
                throw PatternError(
                    key: "duration", value: DurationText.format(seconds),
                    problem: "is shorter than one cycle (\(DurationText.format(seconds: cycle)))",
                    allowed: "a duration of at least one cycle")
            }
            if count == PatternLimits.maxCycles {
                let next = try time(cycle: count + 1, phase: 0).seconds - origin
                if next <= seconds.doubleValue {
                    throw PatternError(
                        key: "duration", value: DurationText.format(seconds),
                        problem: "would need more than \(PatternLimits.maxCycles) cycles",
                        allowed: "a shorter duration or longer phases")
                }
            }
            return count
        }
    }
}
