import Foundation
import Glibc
import GongAudio
import Testing

/// The JACK server the live JACK tests play through: jackd2 on its dummy driver (48 kHz,
/// 256-frame periods, paced by a timer in real time), named gong_test and started by
/// scripts/test-jack.sh when missing; clients reach it with JACK_DEFAULT_SERVER. On CI (CI set)
/// it must start; elsewhere a test is skipped with the reason if it cannot.
enum JackServer {
    static let scriptPath = SoundServer.scriptsDirectory + "/test-jack.sh"
    static let setup = ServerSetup { start() }

    /// The variables a child process (gong, jack_rec, jack_lsp) needs to reach the server.
    static var environment: [String: String] { setup.environment ?? [:] }

    /// Runs the script (idempotent: it reuses a server that answers) and reads the name it printed.
    static func start() -> SoundServer.Setup {
        do {
            let scratch = try ScratchDirectory()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [scriptPath]
            let output = Pipe()
            process.standardOutput = output
            _ = FileManager.default.createFile(atPath: scratch.file("stderr"), contents: nil)
            process.standardError = FileHandle(forWritingAtPath: scratch.file("stderr"))
            try process.run()
            let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let problem = ((try? String(contentsOfFile: scratch.file("stderr"), encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0 else {
                return .init(
                    environment: nil, problem: "\(scriptPath) exited with \(process.terminationStatus): \(problem)")
            }
            let name = printed.split(separator: "\n").last.map(String.init) ?? ""
            guard !name.isEmpty else { return .init(environment: nil, problem: "\(scriptPath) printed no server name") }
            return .init(environment: ["JACK_DEFAULT_SERVER": name, "JACK_NO_START_SERVER": "1"], problem: "")
        } catch {
            return .init(environment: nil, problem: "\(scriptPath) could not run: \(error)")
        }
    }

    /// Skips the test, with the reason, when the server could not be started; fails it on CI.
    static func require() throws {
        if ProcessInfo.processInfo.environment["CI"] != nil {
            try #require(
                setup.environment != nil, "JACK's dummy server gong_test must start on CI: \(setup.problem)")
        }
        if setup.environment == nil {
            try skipTest("no JACK server could be started (\(setup.problem))")
        }
    }

    /// The pid of the jackd scripts/test-jack.sh started (its state directory's `jackd.pid`),
    /// for a test that stops the server itself. A server the script found running is someone
    /// else's: such a test is skipped (failed on CI, where the script starts its own).
    static func ownProcess() throws -> pid_t {
        let directory = ProcessInfo.processInfo.environment["GONG_TEST_JACK_DIR"] ?? "/tmp/gong-test-jack"
        let recorded = (try? String(contentsOfFile: directory + "/jackd.pid", encoding: .utf8)) ?? ""
        let pid = pid_t(recorded.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
        guard pid > 0, command.hasPrefix("jackd\0") else {
            let reason = "the JACK server was not started by \(scriptPath) (no jackd pid in \(directory))"
            if ProcessInfo.processInfo.environment["CI"] != nil { try #require(Bool(false), "\(reason)") }
            try skipTest(reason)
        }
        return pid
    }

    /// The server's port names (jack_lsp), none when it does not answer.
    static func ports() -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jack_lsp")
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        guard (try? process.run()) != nil else { return [] }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return printed.split(separator: "\n").map(String.init)
    }
}

/// gong as a JACK client (`--device jack`, `jack:PORT,PORT`) on jackd2's dummy driver: cues
/// heard exactly on their frames, a stopped process that misses cycles counted and recovered, a
/// lost server that comes back, and the ways it says no.
@Suite(.serialized) struct LiveJackTests {
    @Test func deviceNamesChooseTheJackRoute() {
        #expect(OutputRoute(device: "jack") == .jack(ports: []))
        #expect(
            OutputRoute(device: "jack:system:playback_1,system:playback_2")
                == .jack(ports: ["system:playback_1", "system:playback_2"]))
        #expect(OutputRoute(device: "jack:") == .alsa)
    }

    /// 60 s through JACK, recorded on the server's frame clock from gong's own port: every
    /// interval between heard onsets is the scheduled 3 s = 144 000 frames, to the frame, and
    /// gong's account agrees — every cue on its frame, and its timing reports (JACK's clock each
    /// cycle) good enough to say so. gong plays into the tap and the dummy driver's playback port
    /// at once, so the port latency it reads is the driver's (512 frames).
    ///
    /// A busy machine may make JACK run a cycle without gong (two busy loops do, now and then).
    /// gong must then have counted it to the frame and moved its timeline on by it, so that the
    /// cues after it still land on their frames of the server's clock; and it says
    /// `audioLost`, never that every cue was on its frame. A cue whose onset fell in the frames
    /// lost starts where the loss ends, and gong says it late by exactly that. An onset right
    /// after a cycle the tap missed cannot be placed (it may have begun inside it); at most two
    /// such are allowed, and two more for each cue a loss came near.
    @Test func aMinuteThroughJackHasEveryIntervalExactToTheFrame() throws {
        try JackServer.require()
        let scratch = try ScratchDirectory()
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "60s")
        let tap = try JackTap(seconds: 70)
        let result = try runGong(
            [
                "run", pattern, "--device", "jack:\(tap.port),system:playback_1", "--channels", "1", "--rate",
                "48000", "--json"
            ],
            environment: JackServer.environment)
        let recording = tap.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        let finished = try #require(events.finished, "\(result.stdout)")
        #expect(finished["cycles"] as? Int == 20 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        #expect(finished["xruns"] as? Int == events.losses.count, "\(finished)")
        #expect(finished["cues"] as? Int == 20, "\(finished)")
        // A cue whose onset fell in frames gong lost starts where the loss ends (an idle run:
        // 256 frames lost from 1 055 760, the cue at 1 056 000 started 16 late), and gong says so.
        let cueFrames = LivePulseTests.cueFrames(20)
        let late = events.lateness(ofCuesAt: cueFrames)
        // A cue a loss came behind once it was rendered (out of gong's reach) is late by that
        // loss besides: said in its line if it was still to be told, else in a `cueHeardLate`.
        #expect(
            events.all("cue").compactMap { $0["frame"] as? Int } == zip(cueFrames, late).map(+)
                && Self.lateByLosses(said: events.saidLate, onsets: late, losses: events.losses),
            "gong lost \(events.losses): \(events.all("cue")), heard late \(events.all("cueHeardLate"))")
        let heard = recording.placedOnsets()
        #expect(heard.count == 20, "20 woodblocks heard, not \(heard.count)")
        // Every interval the tap can place is the one gong's account gives: the schedule, and
        // the lateness of the cues at either end as gong finally tells it (a cue a loss came
        // behind once gong could no longer take it back is told again, late: `cueHeardLate`).
        // An onset right after a cycle the tap missed (gong's loss is one) cannot be placed.
        let accounted = events.accountedIntervals(apart: 144_000)
        let cut = Set(
            cueFrames.indices.filter { index in events.losses.contains { $0.touches(frame: cueFrames[index]) } })
        let intervals = recording.intervals()
        #expect(
            intervals.count == 19 && zip(intervals, accounted).allSatisfy { $0 == nil || $0 == $1 }
                && intervals.filter { $0 == nil }.count <= 2 + 2 * cut.count,
            "intervals \(TapRecording.describe(intervals)), by gong's account \(accounted), gong lost \(events.losses), heard late \(events.all("cueHeardLate")), the tap missed \(recording.missedFrames) frames; gong's account: \(finished)"
        )
        // Exact, and gong says so — as `onFrame`, or as `roughReports` when jack2's dummy driver
        // woke late and its clock wobbled by more than a millisecond: reports that rough cannot
        // confirm the frame, and gong says that rather than claim it. A driver woken over a period
        // late stops the server's clock (bench/RESULTS.md, "JACK"): that is told as an xrun of no
        // frames, and the verdict is `audioLost`.
        let verdict = finished["heard"] as? String
        if events.losses.isEmpty {
            #expect(verdict == "onFrame" || verdict == "roughReports", "\(finished)")
        } else {
            #expect(verdict == "audioLost", "\(finished)")
        }
        print(
            "JACK: heard intervals \(Set(intervals.compactMap { $0 }).sorted()) (\(intervals.filter { $0 == nil }.count) not placed),"
                + " gong lost \(events.losses), heard late \(events.all("cueHeardLate").map { $0["lateFrames"] ?? 0 }), the tap missed \(recording.missedFrames) frames"
                + " (\(recording.rereadCycles) cycles read again); gong's account \(finished)")
    }

    /// The witness proved against a late call of its own (issue 38): the tap begins its calls at
    /// the 2nd, 3rd and 5th onsets 8, 11 and 14 ms late (a cycle is 5.3 ms: one and a half, two
    /// and nearly three), the others on time. A call that late reads the cycle the server has
    /// moved on to, and gong's port buffer, which gong has rewritten for that cycle by then; the
    /// tap once moved it back to where the late call belonged, and placed an onset early by part
    /// of a cycle (bench/RESULTS.md, stop 50). Now every onset the tap places is on its frame by
    /// gong's account (each span between two placed onsets is the account's to the frame), and
    /// an onset in a cycle the tap never saw is not placed.
    @Test func theTapLateForACueNeverPlacesItOffItsFrame() throws {
        try JackServer.require()
        let scratch = try ScratchDirectory()
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "18s")
        let tap = try JackTap(seconds: 30, lateAtOnsets: [0, 8000, 11_000, 0, 14_000, 0])
        let result = try runGong(
            ["run", pattern, "--device", "jack:\(tap.port)", "--channels", "1", "--json"],
            environment: JackServer.environment)
        let lateCalls = tap.lateCalls
        let recording = tap.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let detail = recording.judgedLateAtOnsets(lateCalls: lateCalls, gongOutput: result.stdout)
        // A call 8 ms or more late always reads a later cycle: the test reached what it is about.
        #expect(recording.rereadCycles >= 1 && recording.placedOnsets().contains { !$0.placed }, "\(detail)")
        print("JACK tap late at each onset: \(detail)")
    }

    /// gong is stopped (SIGSTOP) for 300 ms between two cues, its JACK thread with it: the server
    /// runs about 56 cycles without it. gong counts the lost audio (an xrun event, the summary's
    /// lost frames), moves its clock on by it and completes; the cues after the gap keep their
    /// places.
    ///
    /// What shows it: the tap records on the server's clock, which ran on through the gap, so
    /// the interval across it is 3 s to the frame only if gong counted exactly the frames JACK
    /// ran without it and moved its timeline on by them; every other interval is exact too (or
    /// late by exactly what gong said of a cue a cycle missed besides covered). And when gong
    /// says the cues on either side of the gap were heard, they are as far apart as the server's
    /// own clock puts their onsets (the tap's earliest wake-ups: 3 s and whatever the clock
    /// stood still), within a millisecond.
    @Test func aStoppedProcessMissesCyclesCountsTheLossAndLaterCuesKeepTheirFrames() throws {
        try JackServer.require()
        let (output, recording, stoppedFor) = try Self.playSixCuesStopping(nil, forMicroseconds: 300_000)
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["cycles"] as? Int == 6 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        let lost = events.all("xrun").compactMap { $0["lostFrames"] as? Int }
        let stopFrames = (atLeast: Int(stoppedFor.atLeast * 48000), atMost: Int(stoppedFor.atMost * 48000))
        #expect(
            lost.contains { (stopFrames.atLeast * 8 / 10...stopFrames.atMost + 48000).contains($0) },
            "a \(stoppedFor) s stop: xruns lost \(lost) frames: \(output)")
        #expect(finished["xruns"] as? Int == lost.count && (finished["lostFrames"] as? Int ?? 0) > 0, "\(finished)")
        let heard = recording.placedOnsets()
        #expect(heard.count == 6, "6 woodblocks heard, not \(heard.count) at \(heard)")
        // The gap is silence between two woodblocks, so no onset follows it; one a busy machine
        // made the tap miss the cycle before may not be placed. Every interval is the schedule,
        // or what gong said of the cues at its ends: a cycle missed besides (a busy machine) that
        // covered a cue's onset makes it late by the loss's rest, and gong says so.
        let intervals = recording.intervals()
        let saidLate = events.saidLate
        let accounted = events.accountedIntervals(apart: 144_000)
        #expect(
            intervals.count == 5 && accounted.count == 5 && intervals[1] == accounted[1]
                && zip(intervals, accounted).allSatisfy { $0 == nil || $0 == $1 }
                && intervals.filter { $0 == nil }.count <= 1
                && saidLate.allSatisfy { $0 <= finished["lostFrames"] as? Int ?? -1 },
            "intervals \(intervals), by gong's account \(accounted), gong lost \(events.losses), the tap missed \(recording.missedFrames) frames; gong's account \(finished)"
        )
        let audible = events.saidAudible
        let audibleAcross = audible.count == 6 ? audible[2] - audible[1] : 0
        // The server's clock may stop by itself on a busy machine: jack2's dummy driver, woken
        // late, starts its timeline again, and every frame after is heard that much later. So
        // the two cues are judged on the server's own clock, as the tap noted it cycle by cycle:
        // gong must say them apart by what the server's time between their onsets is (3 s and
        // whatever the clock stood still), within a millisecond. gong follows a stop under a
        // millisecond within two seconds of earliest wake-ups, so a cue up to two seconds after
        // one may be said early by up to a millisecond: a millisecond more for each driver xrun
        // the server reported from two seconds before the first cue to the second (the server's
        // word, not gong's); and a cycle's more for an onset the tap could not place.
        let serverAcross = heard.count == 6 ? recording.serverSecondsApart(heard[1], heard[2]) : nil
        let driverStops =
            heard.count == 6
            ? recording.driverXruns.filter { (heard[1].frame - 96000...heard[2].frame).contains($0) }.count : 0
        let stopsTold = events.all("xrun").compactMap { $0["clockStoppedMs"] as? Double }.reduce(0, +) / 1000
        let stopsMeasured =
            heard.count == 6
            ? recording.clockStops().filter { (heard[1].frame...heard[2].frame).contains($0.frame) } : []
        let slack = 0.001 + 0.001 * Double(driverStops) + (serverAcross?.within ?? 0)
        #expect(
            serverAcross.map { abs(audibleAcross - $0.seconds) < slack } == true,
            "cues said heard \(audibleAcross) s apart across the gap, \(serverAcross.map { "\($0.seconds)" } ?? "no") s on the server's clock (\(slack) s allowed: the driver's xruns around it \(driverStops), a cycle for each onset not placed): \(audible)"
        )
        print(
            "JACK stopped \(stoppedFor) s: lost \(lost) frames (\(events.all("xrun"))), the tap missed \(recording.missedFrames),"
                + " recorded intervals \(TapRecording.describe(intervals)), said heard across \(audibleAcross) s,"
                + " on the server's clock \(serverAcross.map { "\($0.seconds)" } ?? "?") s (its stops there \(stopsMeasured.map(\.seconds)) s; gong told \(stopsTold) s in all),"
                + " the driver's xruns around it \(driverStops) (at \(recording.driverXruns)), \(recording.serverXruns.count) xruns reported in all"
        )
    }

    /// gong is stopped (SIGSTOP) for 10 ms, 60 ms before each of the last four cues is heard: each
    /// cue is in gong's ring already, and JACK runs a cycle or two without gong. Every frame in
    /// the ring is now heard late by as much, so gong must take back what it still holds and
    /// render it again a loss on — at once: told only at its next wait for room (up to 125 ms
    /// later), the cue had been claimed by then and was heard a cycle late while gong said it was
    /// on time (issue 38). Four times, because a busy machine may wake jackd itself late across a
    /// stop (then no cycle runs without gong), or this test late, so that the stop falls on the
    /// cue itself: its onset is then among the frames lost, and it is heard, and said, late by
    /// the rest of the loss.
    ///
    /// Judged on the tap, the server's clock: every cue where gong's account puts it (on its
    /// frame unless a loss covered it, then late by exactly the loss's rest, and said so; or
    /// late by a loss that came behind it once the callback had claimed it, and said so), at
    /// least one with a loss just before it; each loss gong told is a hole of exactly its frames
    /// in the tap's recording (gong's port feeds the tap, so a cycle gong missed is one the tap
    /// missed too), in order, each before the frame gong's account says it made the loss up from,
    /// or, with no hole, a cycle the server itself reported gong late for (an xrun report to the
    /// tap) there; and the verdict `audioLost`, with the frames lost told.
    @Test func aCycleMissedJustBeforeACueInTheRingKeepsThatCueOnItsFrame() throws {
        try JackServer.require()
        let (output, recording, stoppedFor) = try Self.playSixCuesStopping(
            nil, forMicroseconds: 10_000, secondsAfterTheSecondCue: [2.94, 5.94, 8.94, 11.94])
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["cycles"] as? Int == 6 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        let losses = events.losses.filter { $0.frames > 0 }
        let cues = (0..<6).map { 48_000 + 144_000 * $0 }
        // What gong's account says of each cue: on its frame, or late by the rest of a loss that
        // covered its onset.
        let accountedLate = events.lateness(ofCuesAt: cues)
        let clearBefore = cues.dropFirst(2).filter { cue in
            losses.contains { $0.from >= cue - 6000 && $0.from + $0.frames <= cue }
        }
        #expect(
            !clearBefore.isEmpty,
            "no stop made JACK run a cycle without gong just before a cue: gong lost \(losses), stops \(stoppedFor)")
        #expect(
            finished["xruns"] as? Int == events.losses.count
                && finished["lostFrames"] as? Int == losses.map(\.frames).reduce(0, +)
                && finished["heard"] as? String == "audioLost",
            "a \(stoppedFor) s stop: gong lost \(losses); \(finished)")
        let heard = recording.placedOnsets()
        #expect(heard.count == 6 && heard.allSatisfy(\.placed), "6 woodblocks placed, not \(heard)")
        // A stop that fell just after the callback claimed a cue leaves it heard late by the
        // loss: gong tells it again, late (`cueHeardLate`), and the interval is judged by that.
        let intervals = recording.intervals()
        let saidLate = events.saidLate
        let accounted = events.accountedIntervals(apart: 144_000)
        #expect(
            intervals == accounted,
            "intervals \(TapRecording.describe(intervals)), by gong's account \(accounted): gong lost \(losses), heard late \(events.all("cueHeardLate")), the tap's holes \(recording.holes)"
        )
        #expect(
            events.all("cue").compactMap { $0["frame"] as? Int } == zip(cues, accountedLate).map(+)
                && Self.lateByLosses(said: saidLate, onsets: accountedLate, losses: losses),
            "cues said late by \(saidLate), covered by a loss by \(accountedLate), gong lost \(losses)")
        // Each loss gong told is a hole of its frames in the tap's recording, in the order told,
        // and before where gong's account puts the take-back that made it up on the tap's clock:
        // the first woodblock's onset (session frame 48 000) plus the session frames since and
        // the losses before. How long before depends on how soon gong's audio thread woke, so
        // only the order is held; the tap may have holes of its own besides (a cycle it missed).
        // Or, where the tap has no hole, a cycle gong was called too late for: jack2 still ran
        // the tap then (with what gong's port held from before), so no frame is missing from the
        // tap, but the server reported the late client to every client, the tap too, within half
        // a second of the place (the report comes through its notification thread). What such a
        // loss cost is judged above, by the intervals, to the frame.
        // A clock stop (jack2's dummy driver woken late) is told as an xrun of no frames: no frame
        // is missing, so it has no hole.
        if let first = heard.first?.frame {
            var holes = recording.holes[...]
            var reports = recording.serverXruns
            var before = 0
            for loss in losses {
                let placed = first + loss.from - 48000 + before
                before += loss.frames
                if let match = holes.firstIndex(where: { $0.frames == loss.frames && $0.frame <= placed }) {
                    holes = holes[(match + 1)...]
                } else if let report = reports.firstIndex(where: { abs($0 - placed) <= 24000 }) {
                    reports.remove(at: report)
                } else {
                    Issue.record(
                        "gong lost \(loss) (made up from tap frame \(placed)); the tap's holes: \(recording.holes), the server's xruns at \(recording.serverXruns)"
                    )
                    break
                }
            }
        }
        print(
            "JACK stopped \(stoppedFor) s before a cue: gong lost \(losses), heard late \(events.all("cueHeardLate").map { $0["lateFrames"] ?? 0 }), the tap's holes \(recording.holes), the server's xruns at \(recording.serverXruns),"
                + " intervals \(TapRecording.describe(intervals)); \(finished)")
    }

    /// jackd itself is stopped (SIGSTOP) for 60 ms between two cues: its dummy driver wakes that
    /// late and starts its timeline again from then, and the server's clock with it, losing no
    /// frame. gong tells it as an xrun of no frames with the time the clock stood still, moves
    /// nothing on, and judges no cue off its frame because of it: on the server's frame clock
    /// every interval is still exactly 3 s, and the cues gong says were heard either side of the
    /// stop are as far apart as the server's own clock puts their onsets (the tap's earliest
    /// wake-ups), within 3 ms; the stop gong told is the one the tap measured, within 3 ms. Its
    /// verdict is `audioLost`: the server lost time, and a listener heard the cue after it that
    /// much later.
    @Test func aServerWhoseClockStopsIsToldAndNoCueIsJudgedAcrossIt() throws {
        try JackServer.require()
        let server = try JackServer.ownProcess()
        let (output, recording, stoppedFor) = try Self.playSixCuesStopping(server, forMicroseconds: 60_000)
        let events = GongEvents(output)
        let finished = try #require(events.finished, "\(output)")
        #expect(finished["cycles"] as? Int == 6 && finished["stoppedEarly"] as? Bool == false, "\(finished)")
        // The driver wakes as late as it was stopped, less what was left of the period it slept
        // in (5.3 ms); a busy machine may wake it later still. With two busy loops the told stop
        // was 5 to 13 ms under the stop measured here (5 runs and CI's); on a machine busy with
        // other builds, 18.4 ms under once in 8 runs (bench/RESULTS.md, "JACK"): 24 ms' slack.
        let stops = events.all("xrun").filter { $0["lostFrames"] as? Int == 0 }.compactMap {
            $0["clockStoppedMs"] as? Double
        }
        let stoppedMs = stops.max() ?? 0
        #expect(finished["heard"] as? String == "audioLost", "\(finished)")
        // The stop is told also when the server's first cycles after it ran without gong too
        // (its frame time jumped a cycle or two: seen idle and loaded): the restart is judged
        // against the server's prediction carried on by the frames between. The server's
        // lateness is then split between the clock's stop and those cycles' frames, told lost
        // just before the stop is (it is measured over the 16 cycles after): the two together
        // are held to the stop made here. No cue is judged off across it.
        let stopFrame = events.all("xrun").first { $0["clockStoppedMs"] as? Double == stoppedMs }?["frame"] as? Int
        let lostBeside =
            stopFrame.map { frame in
                events.losses.filter { $0.frames > 0 && (frame - 24000...frame).contains($0.from + $0.frames) }
                    .map(\.frames).reduce(0, +)
            } ?? 0
        let lateMs = stoppedMs + Double(lostBeside) / 48
        let judgedOff = events.all("cue").compactMap { $0["offFrames"] as? Int }
        #expect(
            lateMs > stoppedFor.atLeast * 1000 - 24 && lateMs < stoppedFor.atMost * 1000 + 50,
            "jackd stopped \(stoppedFor) s; the clock stops told: \(stops) ms, gong lost \(events.losses): \(output)")
        #expect(judgedOff.isEmpty, "a cue judged off: \(events.all("cue"))")
        let heard = recording.placedOnsets()
        #expect(heard.count == 6, "6 woodblocks heard, not \(heard.count) at \(heard)")
        let intervals = recording.intervals()
        #expect(
            intervals.count == 5 && intervals.allSatisfy { $0 == nil || $0 == 144_000 }
                && intervals.filter { $0 == nil }.count <= 1,
            "intervals \(intervals), gong lost \(events.losses), the tap missed \(recording.missedFrames) frames; gong's account \(finished)"
        )
        // The cues gong says were heard either side of the stop are judged on the server's own
        // clock, as the tap noted it cycle by cycle: gong must say them apart by the server's
        // time between their onsets (3 s, the stop made here, and any the server made by itself,
        // idle too), within 3 ms. gong measures a stop over the 16 cycles after it and places the
        // cue after it by the device clock a second on, both from the callback's wake-ups, which
        // agreed within 0.02 ms in 4 runs with two busy loops and 2 ms in a fifth. The stop gong
        // told is set beside the one the tap measured.
        let audible = events.all("cue").compactMap { $0["audible"] as? Double }
        let audibleAcross = audible.count == 6 ? audible[2] - audible[1] : 0
        let serverAcross = heard.count == 6 ? recording.serverSecondsApart(heard[1], heard[2]) : nil
        let measured =
            heard.count == 6
            ? recording.clockStops().filter { (heard[1].frame...heard[2].frame).contains($0.frame) } : []
        #expect(
            serverAcross.map { abs(audibleAcross - $0.seconds) < 0.003 + $0.within } == true,
            "cues said heard \(audibleAcross) s apart across a stop, \(serverAcross.map { "\($0)" } ?? "no") s on the server's clock (its stops \(measured.map(\.seconds)) s; gong told \(stops) ms): \(audible)"
        )
        let measuredStop = measured.map(\.seconds).reduce(0, +)
        #expect(
            measuredStop > stoppedFor.atLeast - 0.024 && abs(measuredStop * 1000 - stoppedMs) < 3,
            "jackd stopped \(stoppedFor) s; the tap saw the server's clock stand still \(measured) s, gong told \(stops) ms"
        )
        print(
            "JACK's server stopped \(stoppedFor) s: clock stops told \(stops) ms, measured by the tap \(measured.map(\.seconds)) s,"
                + " recorded intervals \(TapRecording.describe(intervals)), said heard across \(audibleAcross) s, on the server's clock \(serverAcross.map { "\($0.seconds)" } ?? "?") s; \(finished)"
        )
    }

    /// Whether each cue's lateness as gong finally says it is the rest of a loss that covered
    /// its onset (`onsets`), and besides that nothing, or exactly the frames of a run of losses
    /// gong told (which came behind it once out of its reach).
    static func lateByLosses(said: [Int], onsets: [Int], losses: [GongEvents.Loss]) -> Bool {
        let frames = losses.map(\.frames)
        let runs = Set(
            frames.indices.flatMap { start in
                frames.indices.filter { $0 >= start }.map { frames[start...$0].reduce(0, +) }
            })
        return said.count == onsets.count && zip(said, onsets).allSatisfy { $0 == $1 || runs.contains($0 - $1) }
    }

    /// gong plays six woodblocks 3 s apart into a JACK tap; at each of `times` seconds after it
    /// says the second was heard (1.4 s: well clear of the woodblock before and the cue after,
    /// however long gong took to start), `target` (gong itself when nil) is stopped with SIGSTOP
    /// for `microseconds`. Returns gong's JSON lines once it has ended (exit 0 expected), the
    /// tap's recording, and how long the longest stop lasted in seconds (at least and at most).
    static func playSixCuesStopping(
        _ target: pid_t?, forMicroseconds microseconds: UInt32, secondsAfterTheSecondCue times: [Double] = [1.4]
    ) throws -> (output: String, recording: TapRecording, stoppedFor: (atLeast: Double, atMost: Double)) {
        let scratch = try ScratchDirectory()
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "18s")
        let tap = try JackTap(seconds: 30)
        let (process, out) = try startGong(
            ["run", pattern, "--device", "jack:\(tap.port)", "--channels", "1", "--json"],
            environment: JackServer.environment)
        var output = ""
        var secondCueHeard: Double?
        while secondCueHeard == nil {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            output += String(decoding: data, as: UTF8.self)
            secondCueHeard = GongEvents(output).all("cue").dropFirst().first?["audible"] as? Double
        }
        let heardAt = try #require(secondCueHeard, "gong reported no second cue: \(output)")
        let stopped = target ?? process.processIdentifier
        var stoppedFor = (atLeast: 0.0, atMost: 0.0)
        for after in times {
            let wait = heardAt + after - MonotonicTime.now().seconds
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            // A busy machine may hold this thread back between reading the clock and the signal:
            // the stop lasted at least from the SIGSTOP sent to the SIGCONT about to be, and at
            // most from before the one to after the other.
            let beforeStop = MonotonicTime.now()
            kill(stopped, SIGSTOP)
            let stoppedAt = MonotonicTime.now()
            usleep(microseconds)
            let continuedAt = MonotonicTime.now()
            kill(stopped, SIGCONT)
            let afterContinue = MonotonicTime.now()
            stoppedFor.atLeast = max(stoppedFor.atLeast, continuedAt.seconds - stoppedAt.seconds)
            stoppedFor.atMost = max(stoppedFor.atMost, afterContinue.seconds - beforeStop.seconds)
        }
        output += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let recording = tap.finish()
        #expect(process.terminationStatus == 0)
        return (output, recording, stoppedFor)
    }

    /// Half a second is buffered in gong's ring, yet a key press is heard at once: a pause
    /// pressed 0.2 s before a woodblock already in the ring takes it back (what JACK has not
    /// claimed), and the recording shows no trace of it; the pause and the resume are each heard
    /// within 250 ms of the key on the tap's clock (`KeysHeard`), gong's own account agrees with
    /// it, and every woodblock after is a second after the one before, to the frame.
    @Test func aPausePressedJustBeforeACueTakesItBackThroughJack() throws {
        try JackServer.require()
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("tick.toml")
        try """
        warmup = "0s"
        end = "click"
        cycles = 6
        [[phases]]
        name = "tick"
        length = "1s"
        cue = "woodblock"
        """.write(toFile: pattern, atomically: true, encoding: .utf8)
        let tap = try JackTap(seconds: 20)
        let gong = try GongOnTerminal(
            ["run", pattern, "--device", "jack:\(tap.port)", "--channels", "1", "--json"],
            environment: JackServer.environment)
        let (process, terminal, events) = (gong.process, gong.terminal, gong.events)
        defer { gong.end() }

        #expect(events.wait(for: "cue", count: 3))
        let started = try #require(events.last("started"))
        #expect(started["latencyMs"] as? Double == 500, "the default buffer: \(started)")
        let third = try #require(events.all("cue").last?["audible"] as? Double, "\(events.all("cue"))")
        let pressAt = third + 0.8
        while MonotonicTime.now().seconds < pressAt { usleep(1000) }
        let pausePressed = MonotonicTime.now().seconds
        terminal.type(" ")
        #expect(events.wait(for: "paused"))
        #expect(events.all("cue").count == 3, "the woodblock taken back is not reported: \(events.types)")
        usleep(1_500_000)
        let resumePressed = MonotonicTime.now().seconds
        terminal.type(" ")
        #expect(events.wait(for: "resumed"))
        #expect(events.wait(for: "finished", seconds: 20))
        process.waitUntilExit()
        let recording = tap.finish()

        let cues = events.all("cue")
        let heard = recording.placedOnsets(quietFrames: 24000)
        #expect(heard.count == cues.count, "\(cues.count) cues reported, \(heard.count) heard: \(heard)")
        // gong's account within 2 ms, and a millisecond more for each time the server's clock
        // may have stood (its driver's xruns: gong tells a stop only over a millisecond).
        let keys = KeysHeard.judged(
            pausePressed: pausePressed, resumePressed: resumePressed,
            onsets: heard.map { (recording.serverSeconds(atFrame: $0.frame), $0.placed) }, told: KeysHeard.Told(events),
            clock: "the tap's", agreeing: 0.002 + 0.001 * Double(recording.driverXruns.count),
            cycleSeconds: 256.0 / 48000)
        // Six woodblocks and the end click a second apart, but for the pause between the third
        // and the fourth. Excepted: an onset the tap could not place (after a cycle it missed),
        // and the intervals around a cue that began in audio gong told lost (a busy machine's;
        // jack2 skipped one cycle in an idle run of the whole suite), which is cut or heard late.
        let cueFrames = cues.compactMap { $0["frame"] as? Int }
        let cut = Set(
            cueFrames.indices.filter { index in events.losses.contains { $0.touches(frame: cueFrames[index]) } })
        let intervals = recording.intervals(quietFrames: 24000).enumerated().map { index, interval in
            cut.contains(index) || cut.contains(index + 1) ? nil : interval
        }
        #expect(
            intervals.count == 6
                && intervals.enumerated().allSatisfy { index, interval in
                    guard let interval else { return true }
                    return index == 2 ? interval > 48000 + 60000 : interval == 48000
                } && intervals.filter { $0 == nil }.count <= 1 + 2 * cut.count,
            "\(intervals), gong lost \(events.losses), the tap missed \(recording.missedFrames)")
        #expect(recording.longSilences(atLeast: 1.4) == 1, "the pause was silent, nothing else was")
        // Every loss is told, and none is the take-back's own doing: no audio was lost where the
        // pause took back what JACK had not claimed.
        let pausedAt = events.last("paused")?["frame"] as? Int ?? -1
        #expect(
            events.last("finished")?["xruns"] as? Int == events.losses.count
                && !events.losses.contains { $0.touches(frame: pausedAt) },
            "\(events.last("finished") ?? [:]), gong lost \(events.losses), paused at \(pausedAt)")
        print("JACK: \(keys); intervals \(TapRecording.describe(intervals))")
    }

    /// A port that does not exist is one line and the device's exit status, before anything
    /// plays; so is a server that does not run (which gong never starts).
    @Test func aJackPortThatDoesNotExistIsAOneLineErrorAndExit69() throws {
        try JackServer.require()
        let result = try runGong(
            ["run", "box", "--cycles", "1", "--device", "jack:gong_test_nobody:in_1"],
            environment: JackServer.environment)
        #expect(result.status == 69, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("no such port 'gong_test_nobody:in_1'"), "\(result.stderr)")
    }

    @Test func noJackServerIsAOneLineErrorAndExit69AndNoServerIsStarted() throws {
        let server = "gong_absent_\(getpid())"
        let result = try runGong(
            ["run", "box", "--cycles", "1", "--device", "jack"], environment: ["JACK_DEFAULT_SERVER": server])
        #expect(result.status == 69, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("no JACK server"), "\(result.stderr)")
        #expect(try runTool("/usr/bin/pgrep", ["-f", "jackd.*\(server)"]) != 0, "a server was started")
        // `gong devices` asks a JACK server only if one runs, and does not wait for one.
        let started = MonotonicTime.now()
        let devices = try runGong(["devices"], environment: ["JACK_DEFAULT_SERVER": server])
        #expect(devices.status == 0 && !devices.stdout.contains("jack:"), "\(devices)")
        #expect(MonotonicTime.now().seconds - started.seconds < 5)
    }

    /// The server's playback ports are devices gong lists, by the names it takes.
    @Test func gongDevicesListsJacksPlaybackPorts() throws {
        try JackServer.require()
        let devices = try runGong(["devices"], environment: JackServer.environment)
        #expect(devices.status == 0)
        #expect(
            devices.stdout.contains("jack:system:playback_1") && devices.stdout.contains("jack:system:playback_2"),
            "\(devices.stdout)")
    }

    /// JACK plays at the server's rate: a session asked for 44.1 kHz on a 48 kHz server is
    /// granted 48 kHz, says so, and is prepared at it.
    @Test func theServersRateIsGranted() throws {
        try JackServer.require()
        let scratch = try ScratchDirectory()
        let pattern = scratch.file("blip.toml")
        try "warmup = \"0s\"\ncycles = 1\n[[phases]]\nname = \"blip\"\nlength = \"250ms\"\n".write(
            toFile: pattern, atomically: true, encoding: .utf8)
        let result = try runGong(
            ["run", pattern, "--device", "jack", "--rate", "44100", "--json"], environment: JackServer.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        let started = try #require(events.all("started").first, "\(result.stdout)")
        #expect(started["rate"] as? Int == 48000 && started["format"] as? String == "float32", "\(started)")
        #expect(events.finished?["rate"] as? Int == 48000, "\(result.stdout)")
    }

    /// In this process: what JackPCM grants, that JACK's cycles pace it and its reports place
    /// frame 0 within 5 ms of the one before, but where the server's own clock steps (a busy
    /// machine's jack2 restarts its timeline, see below), and that what the callback has not
    /// claimed can be taken back — all of it, and no more.
    @Test func itIsPacedByJackReportsAgreeWithin5msButAtAClockStepAndTakesBackWhatIsNotClaimed() throws {
        try JackServer.require()
        // libjack reads the server's name from this process's environment as the client opens.
        let saved = JackServer.environment.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (key, value) in JackServer.environment { setenv(key, value, 1) }
        defer {
            for (key, value) in saved {
                if let value { setenv(key, value, 1) } else { unsetenv(key) }
            }
        }
        let pcm = try JackPCM(PCMRequest(device: "jack", channels: 1), ports: [])
        defer { pcm.close() }
        let configuration = pcm.configuration
        #expect(configuration.rate == 48000 && configuration.format == .float32 && configuration.takesBack)
        #expect(configuration.periodFrames == 6000 && configuration.bufferFrames == 24000, "\(configuration)")
        let period = configuration.periodFrames
        let silence = [Float](repeating: 0, count: period)
        var written: Int64 = 0
        var origins: [Int64] = []
        var beyond: [Int] = []
        let start = MonotonicTime.now()
        while written < 3 * 48000 {
            // A cycle JACK ran without the client (a busy machine's) is told at once, as -EPIPE,
            // and is nothing to recover from: the ring plays on.
            var ready = pcm.wait(timeoutMs: 1000)
            if ready == -EPIPE { ready = pcm.wait(timeoutMs: 1000) }
            #expect(ready == 1)
            var count = silence.withUnsafeBytes { pcm.writeInterleaved($0.baseAddress!, frames: period) }
            if count == -EPIPE {
                count = silence.withUnsafeBytes { pcm.writeInterleaved($0.baseAddress!, frames: period) }
            }
            #expect(count > 0)
            written += Int64(max(0, count))
            if written > 48000, let status = pcm.status(), status.state == .running {
                // Frame 0 of the stream's timeline: what was written and what the server ran
                // without the client (the silence heard in its place) were all heard before.
                let played = written + (pcm.silenceHeardFrames() ?? 0)
                origins.append(
                    status.timestamp.nanoseconds + (Int64(status.delayFrames) - played) * 1_000_000_000 / 48000)
                // The next frame written is heard after everything the ring holds, and at most
                // JACK's latency (512 frames here), the cycle being copied and a little later:
                // a report carried to CLOCK_MONOTONIC with the wrong offset fails this.
                let beyondRing = status.delayFrames - pcm.rewindableFrames() - pcm.takeBackGuardFrames()
                beyond.append(beyondRing)
            }
        }
        #expect(
            beyond.allSatisfy { (0...(512 + 2 * 256 + 480)).contains($0) },
            "frames heard after the ring's: \(beyond) (JACK's latency and a cycle or two)")
        let elapsed = MonotonicTime.now().seconds - start.seconds
        let least = 3 - configuration.latencySeconds - 0.02
        #expect(elapsed > least && elapsed < 3.2, "3 s of frames took \(elapsed) s (at least \(least) s)")
        // Nearly every report places frame 0 at the same moment when idle (the spread is printed
        // below). Under load not so: with two busy loops beside it, jack2's dummy driver wakes
        // late and restarts its timeline, every later frame heard that much later, and its clock
        // (a DLL) moves by milliseconds before it settles (bench/RESULTS.md, "JACK") — the
        // server's own doing, which gong tells as a clock stop (`gong_clock_origin`): the reports
        // then fall in two groups, each to the 0.1 ms, milliseconds apart. What is asserted is
        // what holds on a busy machine: each report within 5 ms of the one before but at most at
        // one step in these 3 s. A report carried to
        // CLOCK_MONOTONIC from the wrong clock is caught above (`beyond`), 11 108 frames off here.
        #expect(origins.count >= 10)
        let median = origins.sorted()[origins.count / 2]
        let agreeing = origins.filter { abs($0 - median) <= 100_000 }.count
        let steps = zip(origins, origins.dropFirst()).map { Double($1 - $0) / 1e6 }.filter { abs($0) > 5 }
        let spread = Double((origins.max() ?? 0) - (origins.min() ?? 0)) / 1e6
        #expect(
            steps.count <= 1,
            "frame 0 moved by more than 5 ms between reports \(steps.count) times (\(steps) ms): \(origins)")
        print(
            "JACK: \(agreeing) of \(origins.count) reports place frame 0 within 0.1 ms; all within \(spread) ms; steps \(steps) ms; heard \(Set(beyond).sorted()) frames after the ring"
        )
        // Everything not yet claimed (the ring less the cycle JACK copies now), less the guard
        // a take-back leaves in place, comes back.
        let reach = pcm.rewindableFrames()
        #expect(reach > configuration.bufferFrames / 2 && reach <= configuration.bufferFrames, "reach \(reach)")
        #expect(pcm.rewind(frames: reach + 48000) == 0, "more than is unclaimed is refused")
        let taken = pcm.rewind(frames: reach / 2)
        #expect(taken == reach / 2)
        #expect(pcm.rewindableFrames() <= reach - taken)
        // A cycle JACK ran without the client since the last write is told by the drain as
        // -EPIPE, as a write would have told it, idle too, and the drain then ends. A busy
        // machine's jack2 may run another cycle without it while the drain waits: each is told
        // once more, never without frames the callback counted lost.
        var drained = pcm.drain()
        var lossesTold = 0
        while drained == -EPIPE && lossesTold < 20 {
            lossesTold += 1
            let lost = pcm.silenceHeardFrames() ?? 0
            #expect(lost > 0, "the drain told a loss the callback did not count")
            print("JACK: a loss told by the drain; \(lost) frames lost in all")
            drained = pcm.drain()
        }
        #expect(drained == 0, "the drain ended with \(drained) after \(lossesTold) losses told")
    }

    /// PipeWire's JACK (`pw-jack`, its libjack in place of jack2's) on the PipeWire test rig: gong
    /// plays as a JACK client of PipeWire's graph, on the null sink's ports, for 30 s, and on the
    /// graph's own clock (`PipeWireTap`) every interval is exact to the frame: the schedule, or
    /// what gong said of a cue a late cycle made late.
    ///
    /// Not judged by parec: a follower of pipewire-pulse that splices what it gets, on a busy
    /// machine it dropped a quantum of the monitor (intervals 143 744) four times in one run, and
    /// once heard an onset where there was none, while the graph's clock and gong ran on exactly.
    @Test func pipeWiresJackPlaysItExactlyToo() throws {
        try Self.playOnPipeWiresGraph(throughItsJack: true, seconds: 30, stallingTheDaemon: false)
    }

    /// The same, with PipeWire's daemon itself stopped (SIGSTOP) for 30 ms every 0.6 s: the graph
    /// stands still, then runs the cycles it owes back to back, and gong's calls read positions a
    /// cycle or two ahead of the cycle they serve, several in a row. gong counts what the graph
    /// ran without it only where a call came a period after the last, and every interval on the
    /// graph's clock is still what gong said. Before (issue 38), the second of two calls reading
    /// ahead was believed: a cycle told lost that was not, the session moved on by it, and every
    /// cue after came a cycle early; this test failed every run (bench/RESULTS.md, stop 54).
    @Test func pipeWiresJackKeepsItsCuesWhenTheDaemonStandsStill() throws {
        try Self.playOnPipeWiresGraph(throughItsJack: true, seconds: 15, stallingTheDaemon: true)
    }

    /// gong plays woodblocks 3 s apart for `seconds` into the PipeWire rig's sink, on its own
    /// stream or `throughItsJack` (pw-jack), recorded on the graph's clock; `stallingTheDaemon`:
    /// the rig's pipewire process is stopped for 30 ms every 0.6 s meanwhile. Each interval the
    /// tap places must be gong's account.
    static func playOnPipeWiresGraph(throughItsJack: Bool, seconds: Int, stallingTheDaemon: Bool) throws {
        try SoundServer.pipeWire.require()
        guard !throughItsJack || FileManager.default.isExecutableFile(atPath: "/usr/bin/pw-jack") else {
            if ProcessInfo.processInfo.environment["CI"] != nil {
                Issue.record("pw-jack (Debian pipewire-jack) must be installed on CI")
                return
            }
            try skipTest("no pw-jack (Debian pipewire-jack) to play through PipeWire's JACK")
        }
        // The rig's runtime directory, where PipeWire's JACK finds the server: its PulseAudio
        // socket's.
        let address = SoundServer.pipeWire.environment["PULSE_SERVER"] ?? ""
        let runtime = String(address.dropFirst("unix:".count).dropLast("/pulse/native".count))
        let daemon = stallingTheDaemon ? try pipeWireDaemon(runtime: runtime) : nil
        let scratch = try ScratchDirectory()
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "\(seconds)s")
        let cycleTrace = scratch.file("gong-cycles.txt")
        let tap = try PipeWireTap(
            sink: "gong_test", environment: SoundServer.pipeWire.environment, seconds: 2 * seconds)
        let stalls = daemon.map { Stalls(of: $0, forMicroseconds: 30_000, every: 0.6) }
        let result = try runGong(
            ["run", pattern, "--device", throughItsJack ? "jack" : "pipewire", "--channels", "1", "--json"],
            environment: SoundServer.pipeWire.environment.merging([
                "XDG_RUNTIME_DIR": runtime, throughItsJack ? "GONG_JACK_TRACE" : "GONG_PIPEWIRE_TRACE": cycleTrace
            ]) { $1 },
            launcher: throughItsJack ? "/usr/bin/pw-jack" : nil)
        let stalled = stalls?.end() ?? 0
        let onGraphsClock = tap.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let events = GongEvents(result.stdout)
        let finished = try #require(events.finished, "\(result.stdout)")
        let cues = seconds / 3
        // PipeWire's JACK runs cycles without gong now and then, idle too: gong counts each to
        // the frame, moves its session on by them and says `audioLost`.
        let xruns = finished["xruns"] as? Int ?? -1
        #expect(finished["cycles"] as? Int == cues && xruns == events.losses.count, "\(finished)")
        #expect(finished["heard"] as? String == (xruns > 0 ? "audioLost" : "onFrame"), "\(finished)")
        if daemon != nil {
            #expect(stalled >= 15 && xruns > 0, "the daemon stopped \(stalled) times, gong told \(xruns) losses")
        }
        // On the graph's clock every interval is the schedule and the lateness gong said of the
        // cues at its ends: one told heard late (PipeWire's JACK ran gong late just before it) is
        // that late in the recording, to the frame, and never later than what gong lost. Only an
        // interval the tap cannot place (an onset right after a cycle the tap itself missed) is
        // left out.
        let saidLate = events.saidLate
        let lost = finished["lostFrames"] as? Int ?? -1
        let accounted = events.accountedIntervals(apart: 144_000)
        let exact = onGraphsClock.intervals()
        let placed = zip(exact, accounted).filter { $0.0 != nil }
        // gong's own account of its calls, for whoever reads a failure.
        let trace = CycleTrace(path: cycleTrace)
        #expect(
            exact.count == cues - 1 && saidLate.count == cues && saidLate.allSatisfy { $0 <= lost }
                && placed.count >= cues - 3 && placed.allSatisfy { $0.0 == $0.1 },
            "on the graph's clock: \(TapRecording.describe(exact)), by gong's account \(accounted) (tap missed \(onGraphsClock.missedFrames) frames, read \(onGraphsClock.rereadCycles) cycles again, found buffers stacked \(onGraphsClock.stackedCalls) times, cycle lengths from (frame, frames) \(onGraphsClock.cycleLengthChanges.prefix(20))), gong lost \(events.losses); onsets at \(onGraphsClock.placedOnsets().map(\.frame)), the tap's holes (frame, frames) \(onGraphsClock.holes), its calls in doubt (frame, frames) \(onGraphsClock.doubtfulRuns.prefix(40)); \(finished); \(trace.described())"
        )
        print(
            "\(throughItsJack ? "pw-jack" : "PipeWire's own stream")\(daemon == nil ? "" : " with the daemon stopped \(stalled) times"): on the graph's clock \(TapRecording.describe(exact)), onsets at \(onGraphsClock.placedOnsets().map(\.frame)), by gong's positions \(trace.onsetsByPosition), gong's account \(finished)"
        )
    }

    /// The pid of the PipeWire rig's daemon (scripts/test-pipewire.sh's): the `pipewire` process
    /// in the process group its `rig.pid` names. A rig the script did not start is skipped
    /// (failed on CI).
    static func pipeWireDaemon(runtime: String) throws -> pid_t {
        let recorded = (try? String(contentsOfFile: runtime + "/rig.pid", encoding: .utf8)) ?? ""
        let group = pid_t(recorded.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { pid_t($0) } ?? []
        let daemon = pids.first { pid in
            // /proc/PID/stat: "pid (comm) state ppid pgrp …"
            guard group > 0, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.range(of: ") ", options: .backwards)
            else { return false }
            let fields = stat[close.upperBound...].split(separator: " ")
            return stat.contains("(pipewire)") && fields.count > 2 && pid_t(fields[2]) == group
        }
        guard let daemon else {
            let reason = "the PipeWire rig's daemon was not found (no pipewire process in group \(group) of \(runtime))"
            if ProcessInfo.processInfo.environment["CI"] != nil { try #require(Bool(false), "\(reason)") }
            try skipTest(reason)
        }
        return daemon
    }

    /// A process stopped (SIGSTOP) for `microseconds` every `seconds`, on a thread of its own,
    /// until `end()`, which says how many times it was.
    final class Stalls: @unchecked Sendable {
        private let lock = NSCondition()
        private var ending = false, ended = false
        private var count = 0

        init(of pid: pid_t, forMicroseconds microseconds: UInt32, every seconds: Double) {
            Thread.detachNewThread { [self] in
                lock.lock()
                while !ending {
                    // Signalled: `end()` was called.
                    if lock.wait(until: Date(timeIntervalSinceNow: seconds)) { continue }
                    kill(pid, SIGSTOP)
                    usleep(microseconds)
                    kill(pid, SIGCONT)
                    count += 1
                }
                ended = true
                lock.broadcast()
                lock.unlock()
            }
        }

        func end() -> Int {
            lock.lock()
            defer { lock.unlock() }
            ending = true
            lock.broadcast()
            while !ended { lock.wait() }
            return count
        }
    }

    /// The JACK server itself goes away mid-session and comes back: the session pauses, gong
    /// reopens its client when it can and, with no terminal to wait for, resumes and completes.
    @Test func aJackServerThatRestartsIsALostDeviceThatComesBack() throws {
        try JackServer.require()
        let scratch = try ScratchDirectory()
        let pattern = try LivePulseTests.pattern(in: scratch, duration: "12s")
        let (process, out) = try startGong(
            ["run", pattern, "--device", "jack", "--channels", "1", "--json"], environment: JackServer.environment)
        let read = readEvents(from: out, until: "cue", count: 2)
        // The script ends only a server it started itself.
        if try runTool("/bin/bash", [JackServer.scriptPath, "stop"]) != 0 {
            process.terminate()
            process.waitUntilExit()
            try skipTest("the JACK server running is not the test script's own: not stopping it")
        }
        usleep(1_500_000)
        #expect(try runTool("/bin/bash", [JackServer.scriptPath]) == 0, "the test's server started again")
        try expectOneLossAndReturn(of: process, output: out, read: read, device: "jack")
    }
}
