// Plays a 3-second session and prints its events as they come, then its report.
// Run: swift run play [DEVICE]   (default: null)
import Foundation
import GongKit

let device = CommandLine.arguments.dropFirst().first ?? "null"
let pattern = try PatternCatalog.pattern(
    toml: """
        name = "three"
        [[phases]]
        name = "sit"
        length = "3s"
        cue = "bowl"
        """)
// Bad input is a typed error, never a trap: a rate of 7 Hz names its setting and what is allowed.
do {
    _ = try GongSession(pattern: pattern, options: SessionOptions(device: device, rate: 7))
} catch {
    print("refused: \(error)")
}
do {
    let session = try GongSession(pattern: pattern, options: SessionOptions(device: device, gainDB: -6))
    let events = session.events()
    session.start()
    for await event in events {
        print("event: \(event.jsonLine())")
    }
    let report = await session.report()
    print("report: \(report.cues) cues, \(report.playedSeconds) s played, heard: \(report.heard)")
} catch {
    // Errors are values: the setting, the pattern or the device, with what was wrong.
    FileHandle.standardError.write(Data("play: \(error)\n".utf8))
    exit(69)
}
