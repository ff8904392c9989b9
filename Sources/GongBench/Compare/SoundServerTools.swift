import Dispatch
import FoundationEssentials
import Glibc
import GongCore
import GongKit

/// Why a benchmark cannot run here, in one line a person can act on.
public struct BenchError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A program the benchmark runs is not installed.
        case missingTool
        /// No PulseAudio (or PipeWire's PulseAudio) server answers.
        case noServer
        /// A tool ran and failed.
        case toolFailed
        /// Asked to stop (Ctrl-C) before the benchmark was done.
        case interrupted
    }

    public var kind: Kind
    public var message: String
    public var description: String { message }

    static let interrupted = BenchError(
        kind: .interrupted,
        message: "interrupted before the end: no report; the tools it started are stopped, any sink it made removed")
}

/// The PulseAudio command-line tools `gong bench compare` records with and sets gong beside
/// (`paplay`, what people use instead), reached the way any client reaches the server:
/// `PULSE_SERVER`, else the user's own.
struct SoundServerTools {
    let pactl: String
    let parec: String
    let paplay: String
    let shell = "/bin/sh"
    /// Ends the tool being waited on when asked.
    let interruption: BenchInterruption

    /// Finds every tool on `PATH`, or says which is missing and where it comes from.
    init(interruption: BenchInterruption) throws(BenchError) {
        self.interruption = interruption
        func find(_ name: String) throws(BenchError) -> String {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
                return "\(directory)/\(name)"
            }
            throw BenchError(
                kind: .missingTool,
                message:
                    "\(name) is not installed; gong bench compare needs pactl, parec and paplay (Debian: apt-get install pulseaudio-utils)"
            )
        }
        pactl = try find("pactl")
        parec = try find("parec")
        paplay = try find("paplay")
    }

    /// Runs a tool to its end; its standard output, or a line saying how it failed. An
    /// interruption, unless it cleans up (`interruptible` false), or the timeout ends it and
    /// whatever it started (its process group: a shell's `paplay` too).
    @discardableResult
    func run(
        _ tool: String, _ arguments: [String], timeoutSeconds: Double = 10, interruptible: Bool = true
    ) throws(BenchError) -> String {
        let process = try launch(tool, arguments, output: .captured, errors: .captured)
        // Read while it runs, so a full pipe never stalls it, and off this thread, so a child
        // that hangs with the pipe open cannot hang the benchmark.
        let text = Locked([UInt8]())
        let read = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let data = process.readOutput()
            text.withLock { $0 = data }
            read.signal()
        }
        let group = process.processIdentifier
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        let interruption = interruptible ? interruption : BenchInterruption()
        interruption.whileWaiting(endedBy: { signalGroup(group, SIGTERM) }) {
            while process.isRunning && Date() < deadline && !interruption.isRequested { usleep(10_000) }
        }
        if process.isRunning || read.wait(timeout: .now() + 1) == .timedOut {
            signalGroup(group, SIGKILL)
            process.waitUntilExit()
            if interruption.isRequested { throw BenchError.interrupted }
            throw BenchError(
                kind: .toolFailed, message: "\(commandLine(tool, arguments)) did not finish in \(Int(timeoutSeconds)) s"
            )
        }
        if interruption.isRequested { throw BenchError.interrupted }
        guard process.terminationStatus == 0 else {
            let said =
                String(decoding: process.readErrors(), as: UTF8.self)
                .split(separator: "\n").first.map(String.init) ?? ""
            throw BenchError(
                kind: .toolFailed,
                message:
                    "\(commandLine(tool, arguments)) failed (exit \(process.terminationStatus))\(said.isEmpty ? "" : ": \(said)")"
            )
        }
        return String(decoding: text.withLock { $0 }, as: UTF8.self)
    }

    /// Ends a tool `start` started, and whatever it started in turn, and waits for it: a
    /// recorder stopped so has written all it heard.
    func stop(_ process: Subprocess) {
        signalGroup(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// Starts a tool and returns at once; `stop` ends it.
    func start(_ tool: String, _ arguments: [String]) throws(BenchError) -> Subprocess {
        try launch(tool, arguments)
    }

    /// Starts a tool in a process group of its own, with no signal blocked (see `Subprocess`).
    private func launch(
        _ tool: String, _ arguments: [String], output: Subprocess.Output = .discarded,
        errors: Subprocess.Output = .discarded
    ) throws(BenchError) -> Subprocess {
        do throws(Subprocess.LaunchFailure) {
            return try Subprocess(tool, arguments, output: output, errors: errors)
        } catch {
            throw BenchError(kind: .toolFailed, message: "\(tool) could not be started: \(error)")
        }
    }

    /// The server's name and version, as `pactl info` gives them, or why none answers.
    func serverName() throws(BenchError) -> String {
        let info: String
        do { info = try run(pactl, ["info"], timeoutSeconds: 5) } catch {
            if error.kind == .interrupted { throw error }
            let address = ProcessInfo.processInfo.environment["PULSE_SERVER"].map { " at PULSE_SERVER=\($0)" } ?? ""
            throw BenchError(
                kind: .noServer,
                message:
                    "no PulseAudio or PipeWire server answers\(address); start one (pulseaudio --start, or PipeWire with pipewire-pulse)"
            )
        }
        let name = info.split(separator: "\n").first { $0.hasPrefix("Server Name:") }
        let version = info.split(separator: "\n").first { $0.hasPrefix("Server Version:") }
        return [name, version].compactMap { $0?.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingSpaces() }.joined(separator: " ")
    }

    private func commandLine(_ tool: String, _ arguments: [String]) -> String {
        ([String(tool.split(separator: "/").last ?? Substring(tool))] + arguments).joined(separator: " ")
    }
}

/// Sends `signal` to the process group `leader` leads — `Subprocess` starts each tool in a group
/// of its own, so a shell's children hear it too — or to the process alone if it leads none.
func signalGroup(_ leader: pid_t, _ signal: Int32) {
    if kill(-leader, signal) != 0 { kill(leader, signal) }
}
