import GongAudio
import GongCore
import GongKit
import Testing

@testable import GongPractice

/// A schedule changed while the bells run, kept in config.toml: only `[bells]`' schedule keys
/// change, and the file reads back to the schedule given.
@Suite struct ConfigScheduleTests {
    static func schedule(_ values: [String: AnyJSON]) throws -> BellRules { try BellRules.schedule(values) }

    @Test func theScheduleKeysAreReplacedAndEveryOtherLineKept() throws {
        let file = """
            # my gong
            device = "pulse"

            [bells]   # through the day
            every = "45m"
            sound = "chime"
            at = [
              "08:00",  # morning
              "12:30",
            ]
            quiet = "12:00-13:00"
            gain = -6
            """
        let rules = try Self.schedule(["random": "20m-60m", "days": "mon-fri", "max": 8])
        let new = GongConfig.replacingSchedule(in: file, with: rules)
        #expect(
            new == """
                # my gong
                device = "pulse"

                [bells]   # through the day
                random = "20m-1h"
                days = "mon,tue,wed,thu,fri"
                max = 8
                sound = "chime"
                gain = -6

                """)
        var config = GongConfig()
        try config.read(new, path: "config.toml")
        #expect(config.bells.value.scheduleTexts == rules.scheduleTexts)
        #expect(config.bells.value.sound == "chime" && config.bells.value.gainDB == -6)
    }

    /// The table ends at the next one: a key of the same name there is not the bells'.
    @Test func aTableAfterTheBellsIsLeftAlone() throws {
        let rules = try Self.schedule(["every": "1h"])
        let file = "[bells]\nevery = \"45m\"\n[later]\nevery = \"2h\"\n"
        #expect(
            GongConfig.replacingSchedule(in: file, with: rules) == "[bells]\nevery = \"1h\"\n[later]\nevery = \"2h\"\n")
    }

    @Test func aFileWithoutBellsGetsTheTableAtItsEnd() throws {
        let rules = try Self.schedule(["at": .array(["08:00", "17:30"]), "quiet": "12:00-13:00"])
        #expect(
            GongConfig.replacingSchedule(in: "volume = -6\n", with: rules)
                == "volume = -6\n\n[bells]\nat = [\"08:00\", \"17:30\"]\nquiet = [\"12:00-13:00\"]\n")
        #expect(
            GongConfig.replacingSchedule(in: "", with: rules)
                == "[bells]\nat = [\"08:00\", \"17:30\"]\nquiet = [\"12:00-13:00\"]\n")
    }
}
