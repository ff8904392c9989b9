/// The three clocks `gong bells` reads when it wakes, in nanoseconds: the wall clock
/// (CLOCK_REALTIME), the clock that counts a suspend (CLOCK_BOOTTIME) and the one that does not
/// (CLOCK_MONOTONIC). Between two readings, the wall clock running ahead of the boot clock is a
/// clock step; the boot clock running ahead of the monotonic one is a suspend.
public struct BellClocks: Sendable, Equatable {
    public var wall: Int64
    public var boot: Int64
    public var monotonic: Int64

    public init(wall: Int64, boot: Int64, monotonic: Int64) {
        self.wall = wall
        self.boot = boot
        self.monotonic = monotonic
    }
}

/// What became of a bell.
public enum BellOutcome: Sendable, Equatable, CustomStringConvertible {
    /// Ring it: it is due within the lead, on its second.
    case ring
    /// Not rung, and why: a bell is never rung late.
    case skipped(BellSkip)

    public var description: String {
        switch self {
        case .ring: "rung"
        case .skipped(let why): "skipped: \(why.rawValue)"
        }
    }
}

/// Why a bell was not rung.
public enum BellSkip: String, Sendable, Equatable {
    /// The machine slept through it.
    case asleep
    /// The wall clock was set forward over it.
    case clockStepped = "clock stepped"
    /// gong did not run in time (a stalled process, an overloaded machine).
    case late
    /// `gong ctl pause`.
    case paused
    /// `gong ctl next`: the person passed over it.
    case passed
}

/// A bell and what became of it.
public struct BellDecision: Sendable, Equatable {
    public var bell: PlannedBell
    public var outcome: BellOutcome

    public init(bell: PlannedBell, outcome: BellOutcome) {
        self.bell = bell
        self.outcome = outcome
    }
}

/// Decides, each time `gong bells` wakes, which bells to ring and which were missed, and when to
/// wake next. Pure: the clocks are handed in, so a test drives a week of suspends and clock steps
/// through it in moments, and the process around it only waits and rings.
///
/// Bells are handled in order and once each: `handledThrough` only moves forward. A clock set
/// back therefore rings nothing twice (the next bell waits for the wall clock to reach it again);
/// a clock set forward, or a suspend, skips the bells it passed over and says why.
public struct BellKeeper: Sendable {
    public private(set) var plan: BellPlan
    /// How long before a bell's second gong wakes to open the device: enough for the bell to be
    /// heard on its second.
    public let leadNanoseconds: Int64
    /// How late a bell may be when gong wakes for it and still ring; later than this it is
    /// skipped, never rung late. Negative: how far ahead it must still be (the time the ringer
    /// needs to have it heard on its second).
    public let lateToleranceNanoseconds: Int64
    /// Bells due at or before this moment (seconds since 1970) are done with.
    public private(set) var handledThrough: Int64
    /// No bell rings before this moment (seconds since 1970); nil when not paused.
    public private(set) var pausedUntil: Int64?
    /// The next bell is to be passed over (`gong ctl next`).
    public private(set) var passingOverNext = false
    private var last: BellClocks?

    public init(plan: BellPlan, start: BellClocks, leadNanoseconds: Int64, lateToleranceNanoseconds: Int64) {
        self.plan = plan
        self.leadNanoseconds = leadNanoseconds
        self.lateToleranceNanoseconds = lateToleranceNanoseconds
        handledThrough = Self.seconds(start.wall) - 1
        last = start
    }

    /// The next bell still to handle.
    public var nextBell: PlannedBell? { plan.next(after: handledThrough) }

    /// The wall-clock moment (nanoseconds) to wake at next; nil when no bell is left to wait for.
    public var wakeAt: Int64? {
        nextBell.map { $0.instant * 1_000_000_000 - leadNanoseconds }
    }

    /// The bells that came due by `clocks` (within the lead), each to ring or skipped.
    public mutating func wake(at clocks: BellClocks) -> [BellDecision] {
        var stepped: Int64 = 0
        var slept: Int64 = 0
        if let last {
            let boot = clocks.boot - last.boot
            stepped = (clocks.wall - last.wall) - boot
            slept = boot - (clocks.monotonic - last.monotonic)
        }
        last = clocks
        var decisions: [BellDecision] = []
        while let bell = nextBell, bell.instant * 1_000_000_000 <= clocks.wall + leadNanoseconds {
            let lateness = clocks.wall - bell.instant * 1_000_000_000
            let outcome: BellOutcome
            if lateness > lateToleranceNanoseconds {
                outcome = .skipped(slept > 0 ? .asleep : stepped > 0 ? .clockStepped : .late)
            } else if passingOverNext {
                passingOverNext = false
                outcome = .skipped(.passed)
            } else if pauseHolds(bell) {
                outcome = .skipped(.paused)
            } else {
                outcome = .ring
            }
            decisions.append(BellDecision(bell: bell, outcome: outcome))
            handledThrough = bell.instant
        }
        if let pausedUntil, Self.seconds(clocks.wall) >= pausedUntil { self.pausedUntil = nil }
        return decisions
    }

    /// No bell rings before `until` (seconds since 1970); the bells meanwhile are skipped and said.
    public mutating func pause(until: Int64) { pausedUntil = until }

    /// Whether the pause keeps `bell` from ringing: it is due before the pause ends, to the
    /// second. The one statement of the rule, for the status and plan that show it as well as
    /// for the wake that applies it (a pause of an hour asked at 10:00:10 holds the 11:00 bell,
    /// which a comparison of minutes would count down).
    public func pauseHolds(_ bell: PlannedBell) -> Bool {
        guard let pausedUntil else { return false }
        return bell.instant < pausedUntil
    }

    public mutating func resume() {
        pausedUntil = nil
        passingOverNext = false
    }

    /// The next bell is passed over (`gong ctl next`).
    public mutating func passOverNext() { passingOverNext = true }

    /// Bells from now on by `plan` (a schedule changed while the bells run). What is handled stays
    /// handled, so no bell of the old plan or the new one rings twice or late; a pause holds; a
    /// bell being passed over was the old plan's, so the new plan's next one rings. False, and
    /// nothing changed, when the new plan leaves no bell to wait for.
    public mutating func replace(plan new: BellPlan) -> Bool {
        guard new.next(after: handledThrough) != nil else { return false }
        plan = new
        passingOverNext = false
        return true
    }

    private static func seconds(_ nanoseconds: Int64) -> Int64 {
        nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds - 999_999_999) / 1_000_000_000
    }
}
