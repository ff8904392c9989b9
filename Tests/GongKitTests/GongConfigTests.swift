import Foundation
import GongCore
import GongKit
import Testing

@testable import GongPractice

@Suite struct GongConfigTests {
    @Test func everyKeyIsReadAndSaysItCameFromTheFile() throws {
        var config = GongConfig()
        try config.read(
            """
            device = "pulse:studio"
            latency = 250
            volume = -6.5
            pattern = "box"
            patterns = ["/zen/patterns", "/more"]
            sounds = ["/zen/sounds"]
            day-starts = "5:30"
            streak-minimum = "5m"
            streaks = false
            """, path: "config.toml")
        #expect(config.device.value == "pulse:studio" && config.latencyMs.value == 250 && config.volumeDB.value == -6.5)
        #expect(config.pattern.value == "box" && config.patternDirectories.value == ["/zen/patterns", "/more"])
        #expect(
            config.soundDirectories.value == ["/zen/sounds"] && config.dayStartsAt.value.secondsAfterMidnight == 19800)
        #expect(config.streakMinimumSeconds.value == 300 && config.showStreaks.value == false)
        #expect(config.listing.allSatisfy { $0.source == .file("config.toml") })
        #expect(config.listing.map(\.key) == GongConfig.keys)
    }

    @Test func nothingGivenIsEveryDefault() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gong-config-\(UUID().uuidString)")
            .path
        let config = try GongConfig.load(directories: GongDirectories(environment: ["HOME": scratch]), environment: [:])
        #expect(config.listing.allSatisfy { $0.source == .standard })
        #expect(config.device.value == "auto" && config.latencyMs.value == nil && config.pattern.value == "two-phase")
        #expect(config.dayStartsAt.value == .standard && config.streakMinimumSeconds.value == 60)
    }

    /// File, then environment: each over the one before, and each says so.
    @Test func theEnvironmentComesOverTheFile() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gong-config-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let directories = GongDirectories(environment: ["HOME": scratch])
        try FileManager.default.createDirectory(atPath: directories.config, withIntermediateDirectories: true)
        try "device = \"null\"\nvolume = -6\n".write(
            toFile: GongConfig.path(directories), atomically: true, encoding: .utf8)
        let config = try GongConfig.load(
            directories: directories, environment: ["GONG_DEVICE": "pulse", "GONG_LATENCY": "300"])
        #expect(config.device.value == "pulse" && config.device.source == .environment("GONG_DEVICE"))
        #expect(config.volumeDB.value == -6 && config.volumeDB.source == .file(GongConfig.path(directories)))
        #expect(config.latencyMs.value == 300 && config.latencyMs.source == .environment("GONG_LATENCY"))
    }

    /// A bad file gets the pattern file's kind of error: file and line, key, value, what is
    /// allowed.
    @Test func badFilesAreOneLineWithTheLine() {
        func error(_ text: String) -> String? {
            var config = GongConfig()
            do {
                try config.read(text, path: "c.toml")
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            error("device = \"null\"\nlatnecy = 5") == "c.toml:2: latnecy = 5: unknown key; use one of "
                + GongConfig.keys.joined(separator: ", ") + " or [bells]")
        #expect(error("latency = 5000") == "c.toml:1: latency = 5000: out of range; use 1 to 2000 ms")
        #expect(error("volume = \"loud\"") == "c.toml:1: volume = \"loud\": out of range; use a gain from -60 to 12 dB")
        #expect(
            error("day-starts = \"25:00\"")?.hasPrefix("c.toml:1: day-starts = \"25:00\": not a time of day") == true)
        #expect(
            error("streak-minimum = \"soon\"")?.hasPrefix("c.toml:1: streak-minimum = \"soon\": not a duration") == true
        )
        #expect(error("streaks = \"yes\"") == "c.toml:1: streaks = \"yes\": not true or false; use true or false")
        #expect(error("sounds = \"/one\"")?.hasPrefix("c.toml:1: sounds = \"/one\": not a list of directories") == true)
        #expect(error("latency = ")?.hasPrefix("c.toml:1: malformed TOML") == true)
    }
}
