import Foundation
import Glibc
import GongTestSupport
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
    var gone = false
    let catching = Waiting.until(seconds: timeoutSeconds) {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            gone = true
            return true
        }
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }
    return catching && !gone
}

/// Whether this run must reach everything its tests need: under `make test` (GONG_MAKE_TEST,
/// set by the Makefile, which has started every server itself) and on CI (CI). There a test that
/// cannot reach a server, a tool or a privilege means the rig broke, and says so by failing; a
/// skip is for a developer's narrower run (`swift test` by hand, on a machine without JACK).
let everyRigRequired = ["GONG_MAKE_TEST", "CI"].contains { ProcessInfo.processInfo.environment[$0] != nil }

/// Ends the running test for want of what `reason` names: under `make test` and on CI as a
/// failure, in one line; elsewhere as a skip, saying why.
///
/// `Test.cancel` alone is not enough for a skip. swift-testing 6.3.1's console prints a cancelled
/// test as "was cancelled" with the reason, but a cancelled *case* of a parameterized test (most
/// live tests run once per server or route) as "passed", reason dropped, even with `--verbose`;
/// and its last line counts neither. A warning-severity issue fails nothing, prints the reason
/// and is counted there ("passed … with N warnings"), so every skip shows in the summary. Where
/// the rig is required the issue is an error, and the test still ends here.
func skipTest(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
    if everyRigRequired {
        Issue.record(Comment(rawValue: "cannot run: " + reason), sourceLocation: sourceLocation)
    } else {
        Issue.record(Comment(rawValue: "skipped: " + reason), severity: .warning, sourceLocation: sourceLocation)
    }
    try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
}

/// A test server's set-up (its script run, and what it printed), shared by every test in the
/// process. One slow start on a loaded machine must not cost every later test of that server:
/// a set-up that fails is run again at once, up to `attempts` times, and only then is its
/// failure kept (each script is idempotent, and ends what is left of a server that does not
/// answer before it starts a new one).
final class ServerSetup: @unchecked Sendable {
    private let lock = NSLock()
    private let start: @Sendable () -> SoundServer.Setup
    private let attempts: Int
    private var result: SoundServer.Setup?

    init(attempts: Int = 3, start: @escaping @Sendable () -> SoundServer.Setup) {
        self.attempts = attempts
        self.start = start
    }

    /// The set-up, run (and run again while it fails) the first time it is asked for.
    var current: SoundServer.Setup {
        lock.lock()
        defer { lock.unlock() }
        if let result { return result }
        var setup = start()
        var problems = [setup.problem]
        for _ in 1..<attempts where setup.environment == nil {
            sleep(1)
            setup = start()
            problems.append(setup.problem)
        }
        if setup.environment == nil {
            let distinct = problems.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            setup.problem = "tried \(attempts) times: " + distinct.joined(separator: "; ")
        }
        result = setup
        return setup
    }

    /// The variables a client needs to reach the server; nil when it could not be started.
    var environment: [String: String]? { current.environment }
    /// Why it could not be started.
    var problem: String { current.problem }
}
