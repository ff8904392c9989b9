import GongAudio
import GongKit
import GongPractice
import GongTerminal
import Testing

@testable import gong

/// `gong bells`' loop stepped through on clocks the test sets: when it sleeps, what it rings,
/// and what stops, pauses and rings asked for do, with no timer, process or socket.
@Suite struct BellsLoopTests {
    static let berlin = LocalZone(identifier: "Europe/Berlin")!
    static let second: Int64 = 1_000_000_000
    static let lead = BellsCommand.leadNanoseconds

    /// Hourly bells, the loop started at 00:30 local time on 2026-03-23.
    static func hourly() throws -> (loop: BellsLoop, plan: BellPlan, start: BellClocks) {
        var rules = BellRules()
        try rules.set(.every, "1h")
        let plan = try #require(BellPlan(rules: try rules.checked(), zone: berlin, seed: 0))
        let day = try #require(CivilDate.day(year: 2026, month: 3, day: 23))
        let start = BellClocks(wall: plan.instant(day: day, wallSecond: 1800) * second, boot: 0, monotonic: 0)
        let keeper = BellKeeper(
            plan: plan, start: start, leadNanoseconds: lead, lateToleranceNanoseconds: -BellsCommand.readyNanoseconds)
        return (BellsLoop(keeper: keeper), plan, start)
    }

    /// The clocks `nanoseconds` later, the machine awake throughout.
    static func later(_ clocks: BellClocks, by nanoseconds: Int64) -> BellClocks {
        BellClocks(
            wall: clocks.wall + nanoseconds, boot: clocks.boot + nanoseconds,
            monotonic: clocks.monotonic + nanoseconds)
    }

    @Test func sleepsUntilEachBellsLeadThenRingsIt() throws {
        var (loop, plan, start) = try Self.hourly()
        let first = try #require(plan.next(after: start.wall / Self.second))
        let step = loop.next(at: start)
        #expect(step == .wait(untilWall: first.instant * Self.second - Self.lead))
        let woke = BellClocks(wall: first.instant * Self.second - Self.lead, boot: 0, monotonic: 0)
        let ringing = Self.later(start, by: woke.wall - start.wall)
        let step2 = loop.next(at: ringing)
        #expect(step2 == .carryOut(BellDecision(bell: first, outcome: .ring)))
        loop.carriedOut(BellDecision(bell: first, outcome: .ring), failed: false)
        let second = try #require(plan.next(after: first.instant))
        let step3 = loop.next(at: ringing)
        #expect(step3 == .wait(untilWall: second.instant * Self.second - Self.lead))
        #expect(loop.tally.rung == 1 && loop.tally.skipped == 0)
    }

    /// A stop while a bell rings ends the bells after it: the bells that came due with it are not
    /// carried out.
    @Test func aStopEndsTheBellsAfterTheOneRinging() throws {
        var (loop, _, start) = try Self.hourly()
        _ = loop.next(at: start)
        // Asleep for three hours: three bells come due at once, skipped.
        let woke = BellClocks(wall: start.wall + 3 * 3600 * Self.second, boot: 3 * 3600 * Self.second, monotonic: 0)
        guard case .carryOut(let decision) = loop.next(at: woke) else {
            Issue.record("no bell carried out")
            return
        }
        #expect(decision.outcome == .skipped(.asleep))
        let stops = loop.handle([.resized, .continued])
        #expect(!stops)
        let stops2 = loop.handle([.interrupt(count: 1)])
        #expect(stops2)
        let step = loop.next(at: woke)
        #expect(step == .stop)
        let step2 = loop.next(at: woke)
        #expect(step2 == .stop)
    }

    @Test func aStopWhileWaitingEndsTheBells() throws {
        var (loop, _, start) = try Self.hourly()
        _ = loop.next(at: start)
        let stops = loop.handle([.terminate])
        #expect(stops)
        let step = loop.next(at: Self.later(start, by: Self.second))
        #expect(step == .stop)
    }

    /// `gong ctl ring`: a bell outside the plan on a whole second two seconds on, once.
    @Test func aRingAskedForIsRungOnce() throws {
        var (loop, plan, start) = try Self.hourly()
        guard case .wait(let wakeAt) = loop.next(at: start) else {
            Issue.record("the loop did not wait")
            return
        }
        let now = Self.later(start, by: 60 * Self.second)
        let answer = loop.answer(.ring, now: now.wall / Self.second)
        #expect(answer.said == nil)
        #expect(loop.ringAsked)
        let unplanned = plan.unplannedBell(at: now.wall / Self.second + 2)
        let step = loop.next(at: now)
        #expect(step == .carryOut(BellDecision(bell: unplanned, outcome: .ring)))
        loop.carriedOut(BellDecision(bell: unplanned, outcome: .ring), failed: true)
        let step2 = loop.next(at: now)
        #expect(step2 == .wait(untilWall: wakeAt))
        #expect(loop.tally.skipped == 1)
    }

    @Test func pauseResumeAndNextChangeTheKeeperAndAreSaid() throws {
        var (loop, plan, start) = try Self.hourly()
        let now = start.wall / Self.second
        let paused = loop.answer(.pause(.seconds(600)), now: now)
        #expect(paused.said == "bells: paused until \(plan.wallText(now + 600))")
        #expect(paused.fields["pausedUntil"] == .string(plan.wallText(now + 600)))
        let resumed = loop.answer(.resume, now: now)
        #expect(resumed.said == "bells: resumed")
        let passing = loop.answer(.next, now: now)
        #expect(passing.said == nil)
        #expect(passing.fields["passingOver"] == true)
        #expect(passing.fields["next"] == .string(try #require(loop.keeper.nextBell).description))
        #expect(passing.fields["rungToday"] == AnyJSON(0))
        #expect(passing.fields["pausedUntil"] == nil)
    }

    /// A pause that ends seconds after the next bell holds it, and says so to the second: the
    /// status marks the next bell paused and gives the end as `01:00:10`, where a text of minutes
    /// (`01:00`) had a remote's page count down a bell that was then skipped. One that ends on
    /// the bell's second lets it ring.
    @Test func aPauseEndingSecondsPastTheNextBellHoldsItAndSaysSoToTheSecond() throws {
        var (loop, _, start) = try Self.hourly()
        let now = start.wall / Self.second
        let next = try #require(loop.keeper.nextBell)
        #expect(next.description == "2026-03-23 01:00")
        let paused = loop.answer(.pause(.seconds(next.instant + 10 - now)), now: now)
        #expect(paused.said == "bells: paused until 2026-03-23 01:00:10")
        #expect(paused.fields["pausedUntil"] == .string("2026-03-23 01:00:10"))
        #expect(paused.fields["nextPaused"] == true)
        let plan = loop.plan(day: next.day, records: [], now: now)
        let entry = plan["plan"]?.array?.first { $0["due"] == AnyJSON(next.instant) }
        #expect(entry?["reason"] == "paused", "\(plan)")
        let held = loop.keeper.pauseHolds(next)
        #expect(held, "the keeper holds what the status says it holds")
        let said = CtlCommand.describe(bells: paused.fields, pid: 1)
        #expect(said.hasPrefix("bells (pid 1): next 2026-03-23 01:00 (held by the pause), "), "\(said)")
        #expect(said.contains(", paused until 2026-03-23 01:00:10"), "\(said)")

        let endingOnIt = loop.answer(.pause(.seconds(next.instant - now)), now: now)
        #expect(endingOnIt.fields["pausedUntil"] == .string("2026-03-23 01:00"))
        #expect(endingOnIt.fields["nextPaused"] == nil)
        #expect(!CtlCommand.describe(bells: endingOnIt.fields, pid: 1).contains("held"))
        let rings = loop.keeper.pauseHolds(next)
        #expect(!rings)
    }

    /// What a remote asks of the socket: `subscribe` keeps the connection and changes nothing;
    /// a change is told to subscribers; `plan` lists a day's bells with what the history kept.
    @Test func subscribeKeepsTheConnectionAChangeIsToldAndPlanListsTheDay() throws {
        var (loop, plan, start) = try Self.hourly()
        let now = start.wall / Self.second
        let subscribing = loop.answer(.subscribe, now: now)
        #expect(subscribing.subscribes && !subscribing.changed && subscribing.said == nil)
        let status = loop.answer(.status, now: now)
        #expect(!status.subscribes && !status.changed)
        #expect(loop.answer(.pause(.seconds(60)), now: now).changed)
        #expect(loop.answer(.resume, now: now).changed)
        let today = plan.localDay(of: now)
        let asked = loop.answer(.plan(day: nil), now: now)
        #expect(asked.planDay == today && !asked.changed)
        // 00:30 on the 23rd: the bell at 00:00 was before the bells began, and rang.
        let first = try #require(plan.bells(onDay: today).first)
        let rung = BellRecord(
            due: first.instant, day: "2026-03-23", time: "00:00", number: first.number, outcome: "rung", offMs: 0.2)
        let listed = loop.plan(day: today, records: [rung], now: now)
        #expect(listed["day"] == "2026-03-23")
        guard case .array(let bells) = listed["plan"] else {
            Issue.record("no plan")
            return
        }
        #expect(bells.count == 24)
        #expect(bells.first?["outcome"] == "rung")
        #expect(bells.dropFirst().first?["outcome"] == "planned")
    }
}

/// A schedule changed while the bells run (`schedule` on the socket, from a phone).
@Suite struct BellsLoopScheduleTests {
    /// The new schedule's next bell is the one waited for; what was handled stays handled and a
    /// pause holds; the reply and the subscribers' line say the schedule in effect.
    @Test func aNewScheduleIsWaitedOnAtOnceAndAPauseHolds() throws {
        var (loop, plan, start) = try BellsLoopTests.hourly()
        _ = loop.next(at: start)
        let now = start.wall / BellsLoopTests.second
        _ = loop.answer(.pause(.seconds(7200)), now: now)
        let schedule = try BellRules.schedule(["at": .array(["06:15", "23:10"]), "quiet": "22:00-23:00"])
        let answer = loop.answer(.schedule(schedule), now: now)
        #expect(answer.failure == nil && answer.changed)
        #expect(answer.fields["schedule"] == ["at": "06:15,23:10", "quiet": "22:00-23:00"])
        #expect(answer.said == "bells: schedule now at = 06:15,23:10, quiet = 22:00-23:00")
        #expect(loop.keeper.pausedUntil == now + 7200, "the pause holds")
        let next = try #require(loop.keeper.nextBell)
        #expect(next.description.hasSuffix("06:15") && next.instant > now)
        #expect(loop.next(at: start) == .wait(untilWall: next.instant * BellsLoopTests.second - BellsLoopTests.lead))
        #expect(loop.keeper.plan.seed == plan.seed, "random gaps keep their seed")
    }

    /// A schedule that leaves no bell is refused and changes nothing.
    @Test func aScheduleWithNoBellLeftIsRefusedAndChangesNothing() throws {
        var (loop, plan, start) = try BellsLoopTests.hourly()
        _ = loop.next(at: start)
        var rules = try BellRules.schedule(["every": "1h"])
        rules.days = []
        let answer = loop.answer(.schedule(rules), now: start.wall / BellsLoopTests.second)
        #expect(answer.failure?.code == .badArgument && answer.failure?.message.contains("no bell") == true)
        #expect(loop.keeper.plan.rules == plan.rules)
    }

    /// What the schedule says of itself reads back to the same rules, and the socket's request
    /// reads it as `BellRules.schedule` does.
    @Test func theScheduleReadsBackAsItIsWritten() throws {
        let rules = try BellRules.schedule([
            "random": "20m-1h30m", "active": "09:00-18:00", "days": "fri-mon",
            "quiet": .array(["12:00-13:00", "22:00-07:00"]),
            "max": 12
        ])
        let texts = rules.scheduleTexts
        #expect(texts["days"] == "mon,fri,sat,sun" && texts["random"] == "20m-1h30m")
        #expect(try BellRules.schedule(texts.mapValues(AnyJSON.string)) == rules)
        let (_, parsed) = BellRequest.parse(#"{"command": "schedule", "rules": {"every": "5s"}}"#)
        guard case .failure(let failure) = parsed else {
            Issue.record("a 5 s gap was taken")
            return
        }
        #expect(
            failure.message
                == #"bells.every = "5s": not a whole-second gap from 1m to 24h; use a duration such as 45m or 1h30m"#)
        let (_, missing) = BellRequest.parse(#"{"command": "schedule"}"#)
        #expect(
            missing == .failure(.init(code: .badArgument, message: #"schedule needs "rules", e.g. {"every": "45m"}"#)))
    }

    /// A bell's stream whose first frame is heard late is still moved onto its second while the
    /// cue is ahead of what the device holds: at the default 500 ms latency, up to 1.25 s (the
    /// 795 ms a PipeWire stream once took among them; docs/bells.md gives the figure), and at
    /// the longest latency allowed, never.
    @Test func aLateFirstFrameIsMovableUpToTheWarmUpLessTheBufferAndAQuarterSecond() {
        let warmUp = BellsCommand.warmUpSeconds.doubleValue
        #expect(RingBellCommand.movableSeconds(warmUp: warmUp, latencyMs: 500) == 1.25)
        #expect(RingBellCommand.movableSeconds(warmUp: warmUp, latencyMs: 500) > 0.795)
        #expect(RingBellCommand.movableSeconds(warmUp: warmUp, latencyMs: 2000) < 0)
        #expect(BellsCommand.readyNanoseconds < BellsCommand.leadNanoseconds)
    }
}
