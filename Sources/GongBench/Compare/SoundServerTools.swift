import Foundation
import Glibc

/// Why a benchmark cannot run here, in one line a person can act on.
public struct BenchError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A program the benchmark runs is not installed.
        case missingTool
        /// No PulseAudio (or PipeWire's PulseAudio) server answers.
        case noServer
        /// A tool ran and failed.
        case toolFailed
    }

    public var kind: Kind
    public var message: String
    public var description: String { message }
}

/// The PulseAudio command-line tools `gong bench compare` records with and sets gong beside
/// (`paplay`, what people use instead), reached the way any client reaches the server:
/// `PULSE_SERVER`, else the user's own.
struct SoundServerTools {
    let pactl: String
    let parec: String
    let paplay: String
    let shell = "/bin/sh"

    /// Finds every tool on `PATH`, or says which is missing and where it comes from.
    init() throws(BenchError) {
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

    /// Runs a tool to its end; its standard output, or a line saying how it failed.
    @discardableResult
    func run(_ tool: String, _ arguments: [String], timeoutSeconds: Double = 10) throws(BenchError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw BenchError(kind: .toolFailed, message: "\(tool) could not be started: \(error.localizedDescription)")
        }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        let text = output.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            throw BenchError(
                kind: .toolFailed, message: "\(commandLine(tool, arguments)) did not finish in \(Int(timeoutSeconds)) s"
            )
        }
        guard process.terminationStatus == 0 else {
            let said =
                String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .split(separator: "\n").first.map(String.init) ?? ""
            throw BenchError(
                kind: .toolFailed,
                message:
                    "\(commandLine(tool, arguments)) failed (exit \(process.terminationStatus))\(said.isEmpty ? "" : ": \(said)")"
            )
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Starts a tool and returns at once.
    func start(_ tool: String, _ arguments: [String]) throws(BenchError) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            throw BenchError(kind: .toolFailed, message: "\(tool) could not be started: \(error.localizedDescription)")
        }
        return process
    }

    /// The server's name and version, as `pactl info` gives them, or why none answers.
    func serverName() throws(BenchError) -> String {
        let info: String
        do { info = try run(pactl, ["info"], timeoutSeconds: 5) } catch {
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
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    private func commandLine(_ tool: String, _ arguments: [String]) -> String {
        ([URL(fileURLWithPath: tool).lastPathComponent] + arguments).joined(separator: " ")
    }
}
