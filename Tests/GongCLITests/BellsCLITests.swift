import Foundation
import Testing

/// `gong bells`' bad input at the command line: one line each, naming the flag or the file and
/// line, and the exit status that says what kind of problem it was. Nothing here plays.
@Suite struct BellsCommandLineWordingTests {
    @Test func everyBadBellFlagIsOneLineNamingItWithExit65() throws {
        let cases: [([String], String)] = [
            (["--every", "10s"], "gong: --every 10s: not a whole-second gap from 1m to 24h"),
            (["--at", "25:00"], "gong: --at 25:00: not a list of times of day"),
            (["--random", "1h-20m"], "gong: --random 1h-20m: not a range of gaps"),
            (["--every", "1h", "--active", "18:00-09:00"], "gong: --active 18:00-09:00: not a span of the day"),
            (["--every", "1h", "--days", "mon-fry"], "gong: --days mon-fry: not a set of days"),
            (["--every", "1h", "--quiet", "noon"], "gong: --quiet noon: not a list of spans of the day"),
            (["--every", "1h", "--max", "0"], "gong: --max 0: not a count from 1 to 1440"),
            (["--random", "20m-1h", "--seed", "x"], "gong: --seed x: not a seed"),
            (["--every", "1h", "--gain", "40"], "gong: --gain 40: out of range"),
            (["--every", "1h", "--at", "10:00"], "gong: --at 10:00: every is given too"),
            (["--every", "1h", "--sound", "nope"], "gong: bells: unknown sound \"nope\""),
            (
                ["--every", "1h", "--sound", ""],
                "gong: --sound : not a sound name; use a sound of the bank such as bowl (gong sounds)\n"
            ),
            (
                ["--every", "1h", "--then", "box 2 laps"],
                "gong: --then box 2 laps: not a practice; use breathe N breaths"
            ),
            (
                ["--every", "1h", "--then", "nosuch 2 breaths"],
                "gong: --then nosuch 2 breaths: no such pattern; use one of"
            )
        ]
        for (arguments, start) in cases {
            let refused = try runGong(["bells"] + arguments)
            #expect(refused.status == 65, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.hasPrefix(start), "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.filter { $0 == "\n" }.count == 1 && refused.stdout.isEmpty, "\(arguments)")
        }
    }

    @Test func aBadBellsKeyInTheConfigNamesItsLineAndNoTimingIsAUsageError() throws {
        let scratch = try ScratchDirectory()
        let configDirectory = scratch.path + "/config/gong"
        try FileManager.default.createDirectory(atPath: configDirectory, withIntermediateDirectories: true)
        let environment = ["XDG_CONFIG_HOME": scratch.path + "/config"]
        try "device = \"null\"\n\n[bells]\nevery = \"45m\"\nquiet = \"lunch\"\n".write(
            toFile: configDirectory + "/config.toml", atomically: true, encoding: .utf8)
        let refused = try runGong(["bells"], environment: environment)
        #expect(refused.status == 65)
        #expect(
            refused.stderr
                == "gong: \(configDirectory)/config.toml:5: bells.quiet = \"lunch\": not a list of spans of the day;"
                + " use spans such as 12:00-13:00,22:00-07:00\n")
        try "device = \"null\"\n\n[bells]\nevery = \"45m\"\nthen = \"nosuch\"\n".write(
            toFile: configDirectory + "/config.toml", atomically: true, encoding: .utf8)
        let unknown = try runGong(["bells"], environment: environment)
        #expect(unknown.status == 65)
        #expect(
            unknown.stderr.hasPrefix(
                "gong: \(configDirectory)/config.toml:5: bells.then = \"nosuch\": no such pattern; use one of "),
            "\(unknown.stderr)")
        try "device = \"null\"\n".write(toFile: configDirectory + "/config.toml", atomically: true, encoding: .utf8)
        let untimed = try runGong(["bells"], environment: environment)
        #expect(untimed.status == 64)
        #expect(
            untimed.stderr
                == "gong: bells: no timing for the bells; use --every 45m, --at 08:00,12:30 or --random 20m-60m,"
                + " or [bells] in config.toml\n")
        let impossible = try runGong(["bells", "--at", "02:00", "--active", "09:00-10:00"], environment: environment)
        #expect(impossible.status == 64)
        #expect(impossible.stderr.hasPrefix("gong: bells: these rules leave no bell in the next eight days"))
    }

    /// --install writes a unit that runs this gong with the flags given, which systemd-analyze
    /// verifies; without a user manager it says so (exit 69) and leaves the file. --uninstall
    /// removes it.
    @Test func installWritesAUnitSystemdVerifiesAndUninstallRemovesIt() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime)
        let environment = ["XDG_CONFIG_HOME": scratch.path + "/config", "XDG_RUNTIME_DIR": runtime]
        let installed = try runGong(
            ["bells", "--every", "45m", "--quiet", "12:00-13:00", "--device", "null", "--install"],
            environment: environment)
        #expect(installed.status == 0 || installed.status == 69, "\(installed)")
        if installed.status == 69 {
            #expect(installed.stderr.contains("the unit is written"), "\(installed)")
        }
        let path = scratch.path + "/config/systemd/user/gong-bells.service"
        let unit = try String(contentsOfFile: path, encoding: .utf8)
        let executable = URL(fileURLWithPath: gongExecutable).resolvingSymlinksInPath().path
        #expect(
            unit.contains("\nExecStart=\(executable) bells --every 45m --quiet 12:00-13:00 --device null\n"), "\(unit)")
        let verify = Process()
        verify.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        verify.arguments = ["--user", "verify", path]
        verify.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let said = Pipe()
        verify.standardError = said
        verify.standardOutput = said
        try verify.run()
        let output = String(decoding: said.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        verify.waitUntilExit()
        #expect(verify.terminationStatus == 0 && output.isEmpty, "\(output)")

        let removed = try runGong(["bells", "--uninstall"], environment: environment)
        #expect(removed.status == 0 && !FileManager.default.fileExists(atPath: path), "\(removed)")
        #expect(try runGong(["bells", "--install", "--uninstall"], environment: environment).status == 64)
    }
}
