import GongAudio
import GongKit
import GongPractice
import GongTerminal

/// What `gong bells` decides between and around its bells, apart from what it acts on: which
/// bell to carry out next or how long to sleep, what a signal or a control request does. The
/// clocks are handed in and the ringing, the timer and the socket are the caller's (`BellsRun`),
/// so a test steps it through stops, pauses and rings asked for, with no process or clock.
struct BellsLoop {
    enum Step: Equatable {
        /// Carry out this decision (ring the bell, or say it was skipped), then `carriedOut`.
        case carryOut(BellDecision)
        /// Sleep on the timer until this wall-clock moment (nanoseconds since 1970), watching for
        /// signals and control requests, then ask for the next step.
        case wait(untilWall: Int64)
        /// A stop was asked for: the bells end.
        case stop
        /// No bell is left to wait for.
        case noBellLeft
    }

    /// What a control request changed, for its reply.
    struct Answer: Equatable {
        /// The reply's fields (the caller adds what the process has cost).
        var fields: [String: AnyJSON]
        /// A line to say, for a change a person should see in the log.
        var said: String?
        /// `plan`: the day (days since 1970) whose bells the reply lists, with what the history
        /// kept of each (`plan(day:records:now:)`); `fields` are then not the reply.
        var planDay: Int?
        /// `subscribe`: the connection is kept, and told every bell and every change.
        var subscribes = false
        /// The request cannot be carried out: the reply says why, and nothing changed.
        var failure: ControlProtocol.Failure?
        /// The request changed the bells (a pause, a resume, a bell asked for or passed over):
        /// the subscribers are told, with the reply's fields.
        var changed = false
    }

    private(set) var keeper: BellKeeper
    private(set) var tally = BellTally()
    /// Ctrl-C or SIGTERM came: a bell ringing is stopped too, and no other bell follows.
    private(set) var stopping = false
    /// `gong ctl ring` asked for a bell: rung once the bells that came due are done with.
    private(set) var ringAsked = false
    /// The keeper is asked which bells came due once each time the loop wakes.
    private var justWoke = true
    private var due: [BellDecision] = []

    init(keeper: BellKeeper) {
        self.keeper = keeper
    }

    /// What to do next, the clocks being `clocks`.
    mutating func next(at clocks: BellClocks) -> Step {
        if stopping { return .stop }
        if justWoke {
            justWoke = false
            due = keeper.wake(at: clocks)
        }
        if !due.isEmpty { return .carryOut(due.removeFirst()) }
        if ringAsked {
            ringAsked = false
            // On a whole second, after time to open the device and warm up.
            let bell = keeper.plan.unplannedBell(at: clocks.wall / 1_000_000_000 + 2)
            return .carryOut(BellDecision(bell: bell, outcome: .ring))
        }
        guard let wakeAt = keeper.wakeAt else { return .noBellLeft }
        justWoke = true
        return .wait(untilWall: wakeAt)
    }

    /// The decision was carried out; `failed`: its bell was to ring and did not.
    mutating func carriedOut(_ decision: BellDecision, failed: Bool) {
        tally.count(decision, failed: failed)
    }

    /// Takes in the signals that arrived; true when they ask the bells to stop (a bell ringing is
    /// then stopped too).
    mutating func handle(_ signals: [SignalEvent]) -> Bool {
        let stop = signals.contains {
            switch $0 {
            case .interrupt, .terminate: true
            default: false
            }
        }
        if stop { stopping = true }
        return stop
    }

    /// Carries out a control request at `now` (seconds since 1970).
    mutating func answer(_ request: BellRequest, now: Int64) -> Answer {
        var said: String?
        switch request {
        case .status, .subscribe: break
        case .plan(let day):
            return Answer(fields: [:], planDay: day ?? keeper.plan.localDay(of: now))
        case .pause(let pause):
            keeper.pause(until: pause.end(now: now, plan: keeper.plan))
            said =
                "bells: paused"
                + (keeper.pausedUntil.map { $0 == .max ? "" : " until \(keeper.plan.wallText($0))" } ?? "")
        case .resume:
            keeper.resume()
            said = "bells: resumed"
        case .ring: ringAsked = true
        case .next: keeper.passOverNext()
        case .schedule(let schedule):
            let rules = keeper.plan.rules.overridden(by: schedule, keys: Set(BellRules.scheduleKeys))
            guard let plan = BellPlan(rules: rules, zone: keeper.plan.zone, seed: keeper.plan.seed),
                keeper.replace(plan: plan)
            else {
                let failure = ControlProtocol.Failure(
                    code: .badArgument,
                    message: "bells: this schedule leaves no bell in the next eight days; widen active, days or quiet")
                return Answer(fields: [:], failure: failure)
            }
            said = "bells: schedule now " + Self.scheduleLine(rules)
        }
        let today = tally.day == keeper.plan.localDay(of: now)
        var fields: [String: AnyJSON] = [
            "rungToday": AnyJSON(today ? tally.rung : 0), "skippedToday": AnyJSON(today ? tally.skipped : 0)
        ]
        if let next = keeper.nextBell {
            fields["next"] = .string(next.description)
            fields["nextDue"] = AnyJSON(next.instant)
            if keeper.passingOverNext { fields["passingOver"] = true }
            if keeper.pauseHolds(next) { fields["nextPaused"] = true }
        }
        fields["schedule"] = .object(keeper.plan.rules.scheduleTexts.mapValues(AnyJSON.string))
        if let until = keeper.pausedUntil {
            fields["pausedUntil"] = .string(until == .max ? "resume" : keeper.plan.wallText(until))
        }
        return Answer(
            fields: fields, said: said, subscribes: request == .subscribe,
            changed: request != .status && request != .subscribe)
    }

    /// `every = 45m, active = 09:00-18:00`: the schedule as its keys say it, in their order.
    static func scheduleLine(_ rules: BellRules) -> String {
        let texts = rules.scheduleTexts
        return BellRules.scheduleKeys.compactMap { key in texts[key.rawValue].map { "\(key.rawValue) = \($0)" } }
            .joined(separator: ", ")
    }

    /// A `plan` reply's fields: the day's planned bells, each with what became of it as the
    /// history keeps it (`records`: rung, skipped and why, failed), or for one still to come
    /// whether it will ring; bells asked for (`ring`) that day are listed too.
    func plan(day: Int, records: [BellRecord], now: Int64) -> [String: AnyJSON] {
        let date = String(CivilDate.text(day: day, wallSecond: 0).prefix(10))
        var bells: [(due: Int64, entry: [String: AnyJSON])] = []
        for bell in keeper.plan.bells(onDay: day) {
            var entry: [String: AnyJSON] = [
                "number": AnyJSON(bell.number), "due": AnyJSON(bell.instant),
                "time": .string(String(bell.description.suffix(5)))
            ]
            if let record = records.first(where: { $0.number == bell.number && $0.due == bell.instant }) {
                entry["outcome"] = .string(record.outcome)
                entry["reason"] = record.reason.map(AnyJSON.string)
                entry["offMs"] = record.offMs.map(AnyJSON.number)
            } else if bell.instant > now {
                entry["outcome"] = "planned"
                if keeper.pauseHolds(bell) {
                    entry["reason"] = "paused"
                } else if keeper.passingOverNext, keeper.nextBell == bell {
                    entry["reason"] = "passed"
                }
            } else {
                entry["outcome"] = "unrecorded"
            }
            bells.append((bell.instant, entry))
        }
        for record in records where record.number == 0 {
            var entry: [String: AnyJSON] = [
                "number": 0, "due": AnyJSON(record.due), "time": .string(record.time),
                "outcome": .string(record.outcome)
            ]
            entry["reason"] = record.reason.map(AnyJSON.string)
            entry["offMs"] = record.offMs.map(AnyJSON.number)
            bells.append((record.due, entry))
        }
        bells.sort { $0.due < $1.due }
        return ["day": .string(date), "plan": .array(bells.map { .object($0.entry) })]
    }
}

/// Today's bells so far, for `gong ctl status`.
struct BellTally: Equatable {
    var day = Int.min
    var rung = 0
    var skipped = 0

    mutating func count(_ decision: BellDecision, failed: Bool) {
        if decision.bell.day != day { self = BellTally(day: decision.bell.day) }
        if decision.outcome == .ring && !failed { rung += 1 } else { skipped += 1 }
    }
}
