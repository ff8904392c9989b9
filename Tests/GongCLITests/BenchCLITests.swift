import Foundation
import GongTestSupport
import Testing

/// `gong bench` on what needs no sound server: ALSA's `null` device, and its errors.
@Suite struct BenchCLITests {
    /// Every field of the jitter report, so a tool reading it finds the same keys in every run.
    static let jitterKeys = [
        "schema", "conditions", "device", "priority", "priorityRefused", "seconds", "stoppedEarly", "periods",
        "periodRecordsLost", "eventsDropped", "wakeLatency", "timerLatency", "renderTime", "renderP99ShareOfPeriod",
        "deviceClock", "cuesPlayed", "cueError", "cuesNotJudged", "cues", "underruns", "underrunsPerHour", "framesLost",
        "deviceLosses"
    ]
    static let distributionKeys = ["count", "min", "mean", "p50", "p99", "p999", "max", "beyondRange", "buckets"]
    static let conditionKeys = [
        "kernelRelease", "kernelVersion", "preemptRT", "cpuCount", "cpuModel", "frequencyGovernor",
        "loadAverageBefore", "loadAverageAfter", "busyThreads"
    ]

    @Test func jitterOnTheNullDeviceCarriesEveryField() throws {
        let scratch = try ScratchDirectory()
        let result = try runGong([
            "bench", "jitter", "--duration", "5s", "--device", "null", "--json", "--csv", scratch.file("j.csv"),
            "--svg", scratch.file("j.svg")
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(report.keys) == Set(Self.jitterKeys))
        #expect(report["schema"] as? String == "gong-bench-jitter/1")
        for key in ["wakeLatency", "timerLatency", "renderTime", "cueError"] {
            let distribution = try #require(report[key] as? [String: Any], "\(key)")
            #expect(Set(distribution.keys) == Set(Self.distributionKeys), "\(key)")
        }
        let conditions = try #require(report["conditions"] as? [String: Any])
        #expect(Set(conditions.keys) == Set(Self.conditionKeys))
        #expect((conditions["cpuCount"] as? Int ?? 0) >= 1)
        let device = try #require(report["device"] as? [String: Any])
        #expect(device["name"] as? String == "null" && device["paced"] as? Bool == false)
        // 5 s of 2-s cues: a second of silence, then two cues; every period rendered and timed.
        #expect(report["cuesPlayed"] as? Int == 2)
        let periods = try #require(report["periods"] as? Int)
        let expectedPeriods = 5 * 48000 / (device["periodFrames"] as? Int ?? 1)
        #expect(periods >= expectedPeriods)
        let render = try #require(report["renderTime"] as? [String: Any])
        #expect(render["count"] as? Int == periods)
        #expect((render["p50"] as? Double ?? 0) > 0)
        #expect((render["max"] as? Double ?? 0) >= (render["p99"] as? Double ?? .infinity))
        // A device with no clock: no drift, no cue errors, said as null and 0, not left out.
        let clock = try #require(report["deviceClock"] as? [String: Any])
        #expect(clock.keys.contains("driftPPM") && clock["driftPPM"] is NSNull)
        let cueError = try #require(report["cueError"] as? [String: Any])
        #expect(cueError["count"] as? Int == 0 && cueError["p50"] is NSNull)
        // Each cue said not judged, with why, rather than left out unsaid.
        let cues = try #require(report["cues"] as? [[String: Any]])
        #expect(report["cuesNotJudged"] as? Int == 2 && cues.count == 2)
        #expect(cues.allSatisfy { $0["errorMicroseconds"] is NSNull && $0["reason"] is String }, "\(cues)")
        #expect(report["underruns"] as? Int == 0 && report["deviceLosses"] as? Int == 0)
        // The raw values: a row per period for render time.
        let csv = try String(contentsOfFile: scratch.file("j.csv"), encoding: .utf8).split(separator: "\n")
        #expect(csv.first == "kind,seconds,microseconds")
        #expect(csv.filter { $0.hasPrefix("render,") }.count == periods)
        let svg = try String(contentsOfFile: scratch.file("j.svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<svg") || svg.hasPrefix("<?xml"))
        #expect(svg.contains("render time"))
    }

    @Test func jitterTableNamesEveryMeasure() throws {
        let result = try runGong(["bench", "jitter", "--duration", "2s", "--device", "null"])
        #expect(result.status == 0, "\(result.stderr)")
        for row in ["wake-up, device grid", "wake-up, 1 ms timer", "render time", "device clock jitter", "cue error"] {
            #expect(result.stdout.contains(row), "\(row)")
        }
        #expect(result.stdout.contains("no drift measured (the device has no clock)"))
        // The kernel as this machine's is: read here as gong reads it, and said one way only.
        var names = utsname()
        uname(&names)
        let version = withUnsafeBytes(of: &names.version) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let realtime =
            (try? String(contentsOfFile: "/sys/kernel/realtime", encoding: .utf8))?.hasPrefix("1") == true
            || version.contains("PREEMPT_RT")
        #expect(result.stdout.contains(realtime ? " PREEMPT_RT, " : " (not PREEMPT_RT), "), "\(result.stdout)")
    }

    @Test(arguments: [
        (["bench", "jitter", "--duration", "0s", "--device", "null"], "--duration 0s"),
        (["bench", "jitter", "--duration", "soon", "--device", "null"], "--duration soon"),
        (["bench", "jitter", "--load=-1", "--device", "null"], "--load -1"),
        (["bench", "jitter", "--load", "1000", "--device", "null"], "--load 1000"),
        (["bench", "jitter", "--rate", "7", "--device", "null", "--duration", "1s"], "--rate 7"),
        (["bench", "compare", "--every", "10ms"], "--every 10ms"),
        (["bench", "compare", "--duration", "5s", "--every", "10s"], "--every 10s")
    ])
    func badInputIsOneLineAndExit64(arguments: [String], named: String) throws {
        let result = try runGong(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("gong: \(named)"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func anUnwritableOutputIsExit73() throws {
        let result = try runGong([
            "bench", "jitter", "--duration", "1s", "--device", "null", "--csv", "/nonexistent/dir/j.csv"
        ])
        #expect(result.status == 73)
        #expect(result.stderr == "gong: --csv /nonexistent/dir/j.csv: cannot be written; use a writable path\n")
    }

    @Test func jitterStoppedByCtrlCReportsWhatItMeasured() throws {
        // The null device plays as fast as it renders: a day takes it about 40 s.
        let result = try runGong(["bench", "jitter", "--duration", "24h", "--device", "null", "--json"]) { pid in
            guard waitUntilCatching(SIGINT, pid: pid) else { return }
            // Once it measures: its audio thread is there, and named.
            _ = Waiting.until {
                let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
                return tasks.contains {
                    (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8)) == "gong audio\n"
                }
            }
            kill(pid, SIGINT)
        }
        // As cyclictest: the run so far, reported, and a normal exit.
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Set(report.keys) == Set(Self.jitterKeys))
        #expect(report["stoppedEarly"] as? Bool == true)
        let seconds = try #require(report["seconds"] as? Double)
        #expect(seconds > 0 && seconds < 30, "\(seconds)")
        let render = try #require(report["renderTime"] as? [String: Any])
        #expect((render["count"] as? Int ?? 0) > 0 && render["count"] as? Int == report["periods"] as? Int)
    }

    @Test func compareWithoutItsToolsSaysWhatToInstall() throws {
        let empty = try ScratchDirectory()
        let result = try runGong(["bench", "compare", "--duration", "4s"], environment: ["PATH": empty.path])
        #expect(result.status == 69)
        #expect(
            result.stderr.hasPrefix("gong: pactl is not installed; gong bench compare needs pactl, parec and paplay"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func compareWithoutAServerSaysSo() throws {
        let result = try runGong(
            ["bench", "compare", "--duration", "4s"], environment: ["PULSE_SERVER": "unix:/nonexistent/native"])
        #expect(result.status == 69)
        #expect(
            result.stderr
                == "gong: no PulseAudio or PipeWire server answers at PULSE_SERVER=unix:/nonexistent/native; start one (pulseaudio --start, or PipeWire with pipewire-pulse)\n"
        )
    }
}

/// `gong bench` on the test sound servers, timing to the frame: among the real-time suites,
/// which run alone.
@Suite(.serialized) struct BenchPulseTests {
    /// Each cue's error as the bench states it is where the cue was heard, judged on a clock
    /// independent of gong's: the sink's recording (on PipeWire the graph's own, by its tap; on
    /// PulseAudio the null sink's monitor). A busy machine may starve the server's client side for
    /// a second: the stream runs dry, and a cue gong wrote after the silence began is heard late
    /// by all of it (a loaded run recorded a cue 997.3 ms late; the bench said 998.1). That cue's
    /// error is the truth, not the bench's fault: held to the recording, within the route's
    /// report jitter (30 ms), and to 30 ms of its schedule only on a run that lost nothing.
    /// Beside an underrun the bench may decline a cue (`CueVerdict`), but every error it states
    /// is held to the recording, and a run that lost nothing must have every cue judged that
    /// the device gave a time for.
    @Test(arguments: SoundServer.allCases)
    func jitterThroughAServerReportsDriftAndCueErrorsWhereTheRecordingHearsThem(server: SoundServer) throws {
        try server.require()
        let scratch = try ScratchDirectory()
        let csv = scratch.file("jitter.csv")
        let recorder =
            server == .pulseAudio ? try MonitorRecorder(path: scratch.file("monitor.raw"), server: server) : nil
        let tap =
            server == .pipeWire
            ? try PipeWireTap(sink: "gong_test", environment: server.environment, seconds: 30) : nil
        let result = try runGong(
            ["bench", "jitter", "--device", "pulse", "--duration", "10s", "--json", "--csv", csv], home: realHome,
            environment: server.environment)
        let samples = recorder?.stop()
        let onGraphsClock = tap?.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let clock = try #require(report["deviceClock"] as? [String: Any])
        let underruns = report["underruns"] as? Int ?? -1
        // A fit spoilt by odd reports is thousands of ppm off (one was 12 000); a real clock is
        // within hundreds, and PipeWire's reports, which scatter by ±6 ms on a busy machine,
        // leave ten seconds' slope uncertain by about a thousand. The bench states no drift
        // beyond 5000 ppm (`ClockFit.plausibleDriftPPM`): on a run that lost nothing it must
        // state one.
        let drift = clock["driftPPM"] as? Double
        #expect(drift.map { abs($0) < 5000 } ?? (underruns != 0), "drift in \(clock)")
        #expect((clock["reports"] as? Int ?? 0) >= 3)
        // Five cues; the first is placed before the clock is known.
        #expect(report["cuesPlayed"] as? Int == 5)
        let cueError = try #require(report["cueError"] as? [String: Any])
        let cues = try #require(report["cues"] as? [[String: Any]])
        #expect(cues.count == 5)
        // Where the recording hears each cue against the schedule (a cue every 2 s from the
        // first, on the sink's own clock), in µs; nil where a hole in the tap's recording comes
        // just before the onset.
        let heard: [(frame: Int, placed: Bool)] =
            onGraphsClock?.placedOnsets(quietFrames: 24000)
            ?? onsets(in: samples ?? [], quietFrames: 24000).map { ($0, true) }
        #expect(heard.count == 5, "5 woodblocks recorded, not \(heard.count) at \(heard)")
        let recorded: [Double?] = heard.indices.map { index in
            guard heard[index].placed && heard[0].placed else { return nil }
            return Double(heard[index].frame - heard[0].frame - index * 96000) / 48000 * 1e6
        }
        // The bench's cue errors, each by its cue (a cue every 2 s from the session's first frame),
        // nil where it was not judged.
        let stated: [Double?] = cues.map { $0["errorMicroseconds"] as? Double }
        let csvRows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("cue,") }
        #expect(csvRows.count == stated.compactMap { $0 }.count && cueError["count"] as? Int == csvRows.count)
        #expect(report["cuesNotJudged"] as? Int == stated.filter { $0 == nil }.count)
        let judged = zip(recorded, stated).compactMap { recorded, stated in
            recorded.flatMap { recorded in stated.map { (recorded: recorded, stated: $0) } }
        }
        // Placed by the device's own clock: within the route's report jitter (30 ms through a
        // sound server; PipeWire's scatter by ±6 ms on a busy machine) of where the cue was
        // heard, not a period (125 ms) or a buffer off.
        #expect(
            judged.allSatisfy { abs($0.stated - $0.recorded) < 30_000 },
            "cue errors in µs, stated \(stated), recorded \(recorded); \(underruns) underruns, \(report["framesLost"] ?? 0) frames lost; \(cues)"
        )
        if underruns == 0 {
            // Nothing lost: every cue the device gave a time for is judged (at least the last
            // three), and held to the recording above (at least three placed in it) — but the
            // first, which may come before the device clock's first settled reports (on PipeWire
            // a clean run's cue at 2 s was `outsideStretch` so).
            let timed = cues.filter { $0["notJudged"] as? String != "noDeviceTime" }
            let declined = timed.dropFirst().filter { $0["notJudged"] as? String != nil }
            #expect(declined.isEmpty && stated.suffix(3).allSatisfy { $0 != nil } && judged.count >= 3, "\(cues)")
            let worst = max(
                abs(cueError["min"] as? Double ?? .infinity), abs(cueError["max"] as? Double ?? .infinity))
            #expect(worst < 30_000, "cue errors in µs: \(cueError)")
        }
        print(
            "bench jitter on \(server): cue errors stated \(stated.map { $0.map { Int($0) } }) µs, recorded \(recorded.map { $0.map { Int($0) } }) µs;"
                + " \(underruns) underruns, \(report["framesLost"] ?? 0) frames lost")
        let device = try #require(report["device"] as? [String: Any])
        #expect(device["soundServer"] as? Bool == true && device["paced"] as? Bool == true)
        #expect((report["priority"] as? [String: Any])?["policy"] as? String != nil)
    }

    /// Four ways for half a minute each, about a minute a server: a long round, run by
    /// `LongRoundPulseTests` (`make test-long`).
    func compareFindsEveryCueAndGongsAreExact(server: SoundServer) throws {
        try server.require()
        let scratch = try ScratchDirectory()
        let result = try runGong(
            ["bench", "compare", "--duration", "8s", "--every", "2s", "--json", "--svg", scratch.file("c.svg")],
            home: realHome, environment: server.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["cues"] as? Int == 4)
        let methods = try #require(report["methods"] as? [[String: Any]])
        #expect(methods.map { $0["method"] as? String } == ["gong", "sleepLoop", "deadlineLoop", "wholeFile"])
        for method in methods {
            #expect(method["found"] as? Int == 4, "\(method)")
            #expect(method["missed"] as? Int == 0, "\(method)")
        }
        // Every cue on its frame; on PipeWire, or off by the quantum it can shift a stream by.
        let gong = methods[0]
        let gongErrors = try #require(gong["errors"] as? [[String: Any]]).map { $0["frames"] as? Int ?? -1 }
        #expect(
            gongErrors.count == 4 && gongErrors.allSatisfy { $0 == 0 || server.isServersOwnSlip(frames: $0) },
            "gong's onsets: \(gong)")
        // The sleep loop waits out every paplay: each cue lands later than the last.
        let sleepLoop = methods[1]
        #expect((sleepLoop["lastErrorMilliseconds"] as? Double ?? 0) > 10, "\(sleepLoop)")
        let svg = try String(contentsOfFile: scratch.file("c.svg"), encoding: .utf8)
        #expect(svg.contains("gong run") && svg.contains("sleep; paplay loop"))
        // The null sink made for the run is gone.
        #expect(!(try Self.pactlModules(server)).contains("gong_bench_"))
    }

    @Test(arguments: SoundServer.allCases)
    func compareStoppedByCtrlCLeavesNothingBehind(server: SoundServer) throws {
        try server.require()
        let environment = server.environment
        let result = try runGong(
            ["bench", "compare", "--duration", "20s", "--json"], home: realHome, environment: environment
        ) { pid in
            // Once its sink is there, a few seconds into playing.
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !((try? Self.pactlModules(server)) ?? "").contains("gong_bench_\(pid)") {
                usleep(50_000)
            }
            sleep(3)
            kill(pid, SIGINT)
        }
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "gong: interrupted before the end: no report; the tools it started are stopped, any sink it made removed\n"
        )
        #expect(!(try Self.pactlModules(server)).contains("gong_bench_"))
        // No parec or paplay of its own left running.
        let survivors = try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { entry in
            guard Int(entry) != nil, let command = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return false }
            let words = String(decoding: command, as: UTF8.self)
            return words.contains("gong_bench_") || words.contains("gong-bench-compare-")
        }
        #expect(survivors.isEmpty, "still running: \(survivors)")
    }

    /// libpulse finds the server's cookie under HOME: these run with the real one.
    private var realHome: String? { ProcessInfo.processInfo.environment["HOME"] }

    private static func pactlModules(_ server: SoundServer) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = ["list", "short", "modules"]
        process.environment = environment(with: server.environment)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text
    }
}
