import Foundation
import GongTestSupport
import Testing

/// `gong history` and `gong stats` end to end, each test with a history of its own.
@Suite struct HistoryCLITests {
    final class Place {
        let scratch: ScratchDirectory
        let environment: [String: String]
        var file: String { scratch.path + "/data/gong/history.sqlite" }

        init() throws {
            scratch = try ScratchDirectory()
            environment = ["XDG_DATA_HOME": scratch.path + "/data", "XDG_STATE_HOME": scratch.path + "/state"]
        }

        func gong(_ arguments: [String]) throws -> CommandResult { try runGong(arguments, environment: environment) }

        /// `gong history --json`, newest first.
        func history() throws -> [[String: Any]] {
            let result = try gong(["history", "--json"])
            try #require(result.status == 0, "\(result.stderr)")
            return result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    /// One session played to its end, one stopped early through the control channel, and two
    /// played at once: each is in the history with how it ended and what it played.
    @Test func sessionsAreRecordedWithHowTheyEndedTwoAtOnceToo() throws {
        let place = try Place()
        let whole = try place.gong(["run", "box", "--cycles", "1", "--device", "null", "--quiet"])
        #expect(whole.status == 0, "\(whole.stderr)")

        let run = try ControlledRun(control: "stdin", runtime: place.scratch.path, extraEnvironment: place.environment)
        #expect(run.events.wait(for: "started", seconds: 60))
        run.send(#"{"command": "stop", "id": 1}"#)
        #expect(run.waitForExit())

        let pair = try (0..<2).map { _ in
            try startGong(["run", "box", "--cycles", "1", "--device", "null", "--json"], environment: place.environment)
        }
        for (process, _) in pair { process.waitUntilExit() }
        #expect(pair.allSatisfy { $0.process.terminationStatus == 0 })

        let records = try place.history()
        #expect(records.count == 4, "\(records)")
        let stopped = try #require(records.first { $0["pattern"] as? String == "two-phase" })
        #expect(stopped["ending"] as? String == "stopped" && stopped["parameters"] as? String == "--set meditation=23h")
        #expect((stopped["playedSeconds"] as? Double ?? 0) < (stopped["plannedSeconds"] as? Double ?? 0))
        let boxes = records.filter { $0["pattern"] as? String == "box" }
        #expect(boxes.count == 3 && boxes.allSatisfy { $0["ending"] as? String == "completed" }, "\(boxes)")
        #expect(boxes.allSatisfy { $0["parameters"] as? String == "--cycles 1" && $0["phases"] as? Int == 4 })

        let table = try place.gong(["history"])
        #expect(table.stdout.split(separator: "\n").count == 5, "a header and four rows: \(table.stdout)")
        #expect(table.stdout.contains("stopped") && table.stdout.contains("completed"))
        #expect(try place.gong(["history", "--limit", "1", "--json"]).stdout.split(separator: "\n").count == 1)
    }

    /// A session killed with SIGKILL mid-way is still in the history, as interrupted, with what
    /// it had played.
    @Test func aKilledSessionIsStillInTheHistory() throws {
        let place = try Place()
        let run = try ControlledRun(control: "stdin", runtime: place.scratch.path, extraEnvironment: place.environment)
        run.pauseOncePlaying()
        // Its record, written as it started and again as it paused.
        var records: [[String: Any]] = []
        #expect(
            try Waiting.until {
                records = try place.history()
                return records.first?["pauses"] as? Int == 1
            }, "the record says paused: \(records)")
        #expect(records.first?["ending"] as? String == "playing", "\(records)")
        kill(run.process.processIdentifier, SIGKILL)
        #expect(run.waitForExit())
        let after = try place.history()
        #expect(after.count == 1)
        #expect(after.first?["ending"] as? String == "interrupted", "\(after)")
        #expect((after.first?["playedSeconds"] as? Double ?? 0) > 0)
    }

    /// Out as CSV, into an empty history, and out again: the same file; importing it twice adds
    /// nothing.
    @Test func csvOutAndBackInLosesNothing() throws {
        let place = try Place()
        #expect(try place.gong(["run", "box", "--cycles", "1", "--device", "null", "--quiet"]).status == 0)
        let added = try place.gong([
            "history", "add", "--pattern", "walk", "--at", "2026-11-03 00:30", "--length", "25m"
        ])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("counted for 2026-11-02"), "\(added.stdout)")
        let csv = try place.gong(["history", "--csv"]).stdout
        let file = place.scratch.file("out.csv")
        try csv.write(toFile: file, atomically: true, encoding: .utf8)

        let fresh = try Place()
        let imported = try fresh.gong(["history", "import", file])
        #expect(imported.status == 0 && imported.stdout.contains("2 sessions added"), "\(imported)")
        #expect(try fresh.gong(["history", "--csv"]).stdout == csv)
        let again = try fresh.gong(["history", "import", file])
        #expect(again.stdout.contains("0 sessions added, 2 already there replaced"), "\(again.stdout)")
        #expect(try fresh.history().count == 2)

        let bad = place.scratch.file("bad.csv")
        try csv.replacingOccurrences(of: ",completed,", with: ",finished,").write(
            toFile: bad, atomically: true, encoding: .utf8)
        let refused = try fresh.gong(["history", "import", bad])
        #expect(refused.status == 65)
        #expect(
            refused.stderr.hasPrefix("gong: \(bad):2: ending = \"finished\": unknown; use one of"), "\(refused.stderr)")
        #expect(try fresh.history().count == 2, "a bad file adds nothing")
    }

    /// Sits on the 1st at 07:00, on the night of the 2nd at 00:30 (the 3rd by the clock) and
    /// half a minute on the 4th. With the day beginning at 4:00 the night sit counts for the
    /// 2nd: two days in a row. With midnight as the boundary it falls on the 3rd, and the streak
    /// breaks.
    @Test func statsCountStreaksAcrossMidnightWithTheDayBoundary() throws {
        let place = try Place()
        for (at, length) in [("2026-11-01 07:00", "20m"), ("2026-11-03 00:30", "15m"), ("2026-11-04 07:00", "30s")] {
            #expect(
                try place.gong(["history", "add", "--pattern", "two-phase", "--at", at, "--length", length]).status == 0
            )
        }
        func stats(_ arguments: [String]) throws -> [String: Any] {
            let result = try place.gong(["stats", "--json"] + arguments)
            try #require(result.status == 0, "\(result.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        }
        // 4:00: the 1st and the 2nd (the 00:30 sit); the 4th's half-minute is under the minimum.
        #expect(try stats([])["longestStreak"] as? Int == 2)
        // Midnight: the 1st and the 3rd, not in a row.
        #expect(try stats(["--day-starts", "0:00"])["longestStreak"] as? Int == 1)
        // No minimum: the 4th counts too, after the 2nd: still two in a row at 4:00.
        #expect(try stats(["--minimum", "0s"])["longestStreak"] as? Int == 2)
        #expect(try stats(["--no-streaks"])["longestStreak"] == nil)
        let total = try #require(try stats([])["total"] as? [String: Any])
        #expect(total["sessions"] as? Int == 2 && total["minutes"] as? Double == 35)

        let text = try place.gong(["stats", "--weeks", "2"])
        #expect(text.stdout.hasPrefix("2 sessions, 35:00 in all"), "\(text.stdout)")
        let hidden = try place.gong(["stats", "--no-streaks"]).stdout
        #expect(text.stdout.contains("streak:") && !hidden.contains("streak:"))
        for bad in [["--day-starts", "25:00"], ["--minimum", "soon"], ["--weeks", "0"]] {
            let refused = try place.gong(["stats"] + bad)
            #expect(refused.status == 64 && refused.stderr.hasPrefix("gong: \(bad[0]) "), "\(refused.stderr)")
        }
    }

    /// A damaged history: `gong history` says so in one line and exits 65, `gong run` plays
    /// the session anyway and says it was not recorded, and the file is untouched.
    @Test func aDamagedHistoryIsOneLineAndTheSessionStillPlays() throws {
        let place = try Place()
        try FileManager.default.createDirectory(
            atPath: place.scratch.path + "/data/gong", withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x5A, count: 8192)
        try garbage.write(to: URL(fileURLWithPath: place.file))
        let listed = try place.gong(["history"])
        #expect(listed.status == 65)
        #expect(
            listed.stderr.split(separator: "\n").count == 1 && listed.stderr.contains("is damaged"), "\(listed.stderr)")
        let played = try place.gong(["run", "box", "--cycles", "1", "--device", "null", "--quiet"])
        #expect(played.status == 0)
        #expect(played.stdout.contains("box finished"))
        #expect(
            played.stderr.contains("not recorded in the history") && played.stderr.contains("is damaged"),
            "\(played.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: place.file)) == garbage)
        let add = try place.gong(["history", "add", "--pattern", "x", "--at", "2026-02-30 07:00", "--length", "20m"])
        #expect(add.status == 64 && add.stderr.contains("no such day"))
    }

    /// Killed with SIGKILL while paused, the session is mentioned by the next `gong run`, and
    /// `gong resume --now` plays the rest of it from where it stood: the history has the first
    /// part as resumed and the rest as its own record, and no snapshot is left.
    /// Plays a 13-minute two-phase on `null`, pauses it, waits for its snapshot to say so, and
    /// kills it with SIGKILL; the snapshot's position.
    func killWhilePaused(_ place: Place) throws -> Double {
        let sessions = place.scratch.path + "/state/gong/sessions"
        let run = try ControlledRun(
            control: "stdin", runtime: place.scratch.path, meditation: "10m", extraEnvironment: place.environment)
        run.pauseOncePlaying()
        var snapshot: [String: Any] = [:]
        _ = Waiting.until {
            let name = (try? FileManager.default.contentsOfDirectory(atPath: sessions))?.first { $0.hasSuffix(".json") }
            snapshot =
                name.flatMap { FileManager.default.contents(atPath: sessions + "/" + $0) }
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            return snapshot["state"] as? String == "paused"
        }
        #expect(snapshot["state"] as? String == "paused" && snapshot["pauses"] as? Int == 1, "\(snapshot)")
        kill(run.process.processIdentifier, SIGKILL)
        #expect(run.waitForExit())
        return try #require(snapshot["positionSeconds"] as? Double)
    }

    @Test func aKilledSessionIsResumedFromWhereItStood() throws {
        let place = try Place()
        let sessions = place.scratch.path + "/state/gong/sessions"
        let position = try killWhilePaused(place)

        let mentioned = try place.gong(["run", "box", "--cycles", "1", "--device", "null", "--quiet", "--no-history"])
        #expect(
            mentioned.stderr.contains("an unfinished two-phase") && mentioned.stderr.contains("gong resume"),
            "\(mentioned.stderr)")

        let resumed = try place.gong(["resume", "--now", "--json"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let lines = resumed.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let finished = try #require(lines.last { $0["type"] as? String == "finished" })
        #expect(abs((finished["plannedSeconds"] as? Double ?? 0) - (780 - position)) < 0.01, "the rest: \(finished)")
        #expect(finished["stoppedEarly"] as? Bool == false)
        #expect(
            lines.first { $0["type"] as? String == "started" }?["device"] as? String == "null",
            "the device it played on")

        let records = try place.history()
        #expect(records.map { $0["ending"] as? String } == ["completed", "resumed"], "\(records)")
        #expect(records[0]["resumedFrom"] as? String == records[1]["id"] as? String)
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: sessions))?.filter { $0.hasSuffix(".json") } == [])
        let nothing = try place.gong(["resume", "--now"])
        #expect(nothing.status == 66 && nothing.stderr == "gong: no unfinished session to resume\n")
    }

    /// The config file chooses the device, the pattern and the volume, `gong config` says where
    /// each setting came from (flag over environment over file over default), and a bad file is
    /// one line with its line number and exit 65.
    @Test func theConfigFileIsUsedAndGongConfigSaysWhereEachSettingCameFrom() throws {
        let place = try Place()
        let configDirectory = place.scratch.path + "/config/gong"
        try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
        try "device = \"null\"\npattern = \"box\"\nvolume = -6\nday-starts = \"5:30\"\n".write(
            toFile: configDirectory + "/config.toml", atomically: true, encoding: .utf8)
        let environment = place.environment.merging(["XDG_CONFIG_HOME": place.scratch.path + "/config"]) { $1 }
        func gong(_ arguments: [String], _ extra: [String: String] = [:]) throws -> CommandResult {
            try runGong(arguments, environment: environment.merging(extra) { $1 })
        }
        // No pattern and no device named: the config's box, on null.
        let played = try gong(["run", "--cycles", "1", "--json"])
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.contains(#""device":"null""#) && played.stdout.contains(#""pattern":"box""#))
        let shown = try gong(["config", "--json", "--device", "pulse"], ["GONG_LATENCY": "300"])
        let settings = try #require(
            try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: [String: String]])
        #expect(settings["device"] == ["value": "pulse", "source": "flag --device"])
        #expect(settings["latency"] == ["value": "300", "source": "environment GONG_LATENCY"])
        #expect(settings["volume"]?["source"] == "file " + configDirectory + "/config.toml")
        #expect(settings["day-starts"]?["value"] == "5:30" && settings["streaks"]?["source"] == "default")

        try "device = \"null\"\nlatnecy = 5\n".write(
            toFile: configDirectory + "/config.toml", atomically: true, encoding: .utf8)
        for arguments in [["config"], ["run", "box", "--cycles", "1"], ["stats"]] {
            let refused = try gong(arguments)
            #expect(refused.status == 65, "\(arguments)")
            #expect(
                refused.stderr == "gong: \(configDirectory)/config.toml:2: latnecy = 5: unknown key; use one of "
                    + "device, latency, volume, pattern, patterns, sounds, day-starts, streak-minimum, streaks"
                    + " or [bells]\n")
        }
    }

    /// `gong resume` on a terminal waits for the person: `q` leaves the session for later
    /// (nothing played, nothing recorded, the snapshot kept); space carries on.
    @Test func resumeOnATerminalWaitsAndQLeavesItForLater() throws {
        let place = try Place()
        _ = try killWhilePaused(place)
        func resume(typing keys: String) throws -> (status: Int32, types: [String]) {
            let gong = try GongOnTerminal(["resume", "--json"], environment: place.environment)
            let (process, terminal, events) = (gong.process, gong.terminal, gong.events)
            // Typed once gong reads keys one by one: a key typed before the terminal leaves
            // line mode may be flushed as it does.
            #expect(terminal.waitUntilReadingKeys(), "gong resume began reading keys")
            terminal.type(keys)
            if !Waiting.ended(process.processIdentifier, seconds: 120) { process.terminate() }
            process.waitUntilExit()
            return (process.terminationStatus, events.types)
        }
        let left = try resume(typing: "q")
        #expect(left.status == 0 && left.types.isEmpty, "nothing played: \(left.types)")
        #expect(try place.history().map { $0["ending"] as? String } == ["interrupted"])
        let carried = try resume(typing: " ")
        #expect(
            carried.status == 0 && carried.types.first == "started" && carried.types.last == "finished",
            "\(carried.types)")
        #expect(try place.history().map { $0["ending"] as? String } == ["completed", "resumed"])
    }
}
