import Foundation
import Testing

/// The `gong` executable built alongside the tests.
let gongExecutable: String = {
    let directory = Bundle.main.bundleURL.path
    for candidate in [directory + "/gong", URL(fileURLWithPath: directory).deletingLastPathComponent().path + "/gong"]
    where FileManager.default.isExecutableFile(atPath: candidate) {
        return candidate
    }
    return directory + "/gong"
}()

struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs gong with a private HOME so no user pattern or sound leaks into a test, and a scratch
/// cache, history and state so no test reads or fills the user's own (a test may pass its own
/// `XDG_CACHE_HOME`, `XDG_DATA_HOME` or `XDG_STATE_HOME`). `whileRunning` is called with its
/// process ID on a thread of its own once it has started. `launcher`: a program that runs gong
/// (`pw-jack`), given gong's path before the arguments.
func runGong(
    _ arguments: [String], home: String? = nil, environment extra: [String: String] = [:],
    launcher: String? = nil, whileRunning: (@Sendable (pid_t) -> Void)? = nil
) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: launcher ?? gongExecutable)
    process.arguments = (launcher == nil ? [] : [gongExecutable]) + arguments
    var environment = ProcessInfo.processInfo.environment
    environment["HOME"] = home ?? FileManager.default.temporaryDirectory.appendingPathComponent("gong-cli-home").path
    environment.removeValue(forKey: "XDG_CONFIG_HOME")
    environment.removeValue(forKey: "GONG_SOUNDS")
    environment.merge(scratchState) { $1 }
    environment["XDG_CACHE_HOME"] = FileManager.default.temporaryDirectory.appendingPathComponent("gong-cli-cache").path
    for (key, value) in extra { environment[key] = value }
    process.environment = environment
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    if let whileRunning {
        let pid = process.processIdentifier
        DispatchQueue.global().async { whileRunning(pid) }
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
}

final class ScratchDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gong-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

/// Waits until process `pid` catches `signal` (its handler installed: `SigCgt` in its status),
/// up to `timeoutSeconds`; false if it never did or has gone.
func waitUntilCatching(_ signal: Int32, pid: pid_t, timeoutSeconds: Double = 60) -> Bool {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while Date() < deadline {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return false }
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16),
            mask & (1 << UInt64(signal - 1)) != 0
        {
            return true
        }
        usleep(20_000)
    }
    return false
}

/// Ends the running test as skipped, saying why: a live test whose rig is missing off CI.
///
/// `Test.cancel` alone is not enough. swift-testing 6.3.1's console prints a cancelled test as
/// "was cancelled" with the reason, but a cancelled *case* of a parameterized test (most live
/// tests run once per server or route) as "passed", reason dropped, even with `--verbose`; and
/// its last line counts neither. A warning-severity issue fails nothing, prints the reason and is
/// counted there ("passed … with N warnings"), so every skip shows in the summary.
func skipTest(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
    Issue.record(Comment(rawValue: "skipped: " + reason), severity: .warning, sourceLocation: sourceLocation)
    try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
}
