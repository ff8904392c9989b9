import ArgumentParser
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit
import GongPractice

struct CtlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ctl",
        abstract: "Control a running session, or gong bells.",
        discussion: """
            A session started with --control socket takes status, pause, resume, skip, stop, \
            gain DB and events; gong bells takes status, pause (1h, until 14:00 or today), \
            resume, ring and next.

            Finds the session by its socket in $XDG_RUNTIME_DIR/gong; with several running, name \
            one with --pid (without, they are listed). events prints the session's events as \
            JSON lines until it ends.

            Examples:
              gong run two-phase --control socket &
              gong ctl status
              gong ctl gain -6
              gong ctl --pid 4242 pause
              gong ctl pause until 14:00     (gong bells: no bell until then)
              gong ctl ring                  (gong bells: a bell now)
            """)

    @Option(
        help: ArgumentHelp(
            "The process id of the session to control (see gong ctl status with several).", valueName: "PID"))
    var pid: Int32?

    @Flag(help: "Print the reply as it came, one JSON object.")
    var json = false

    @Argument(help: "status, pause, resume, skip, stop, gain, events; for gong bells also ring and next.")
    var command: String

    /// Taken as it comes, so that `gain -6` is a value, not an unknown flag.
    @Argument(
        parsing: .allUnrecognized,
        help: "For gain: the master gain in dB, from -60 to 12. For pause of gong bells: 1h, until 14:00, or today.")
    var values: [String] = []

    private var value: String? { values.first }

    func run() throws {
        do {
            try control()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }

    private func control() throws {
        let names = ["status", "pause", "resume", "skip", "stop", "gain", "events", "ring", "next"]
        guard names.contains(command) else {
            throw UsageError("ctl \(command): unknown command; use one of \(names.joined(separator: ", "))")
        }
        var request: [String: AnyJSON] = ["command": .string(command == "events" ? "subscribe" : command), "id": 1]
        if command == "gain" {
            guard let value else {
                throw UsageError("ctl gain: needs the gain in dB, from -60 to 12, e.g. gong ctl gain -6")
            }
            guard let decibels = Double(value), decibels.isFinite else {
                throw UsageError(
                    "ctl gain \(value): not a number; use a gain in dB from -60 to 12, e.g. gong ctl gain -6")
            }
            request["decibels"] = .number(decibels)
        } else if command == "pause", !values.isEmpty {
            try Self.pauseLength(values).forEach { request[$0.key] = $0.value }
        } else if let value {
            throw UsageError("ctl \(command) \(value): \(command) takes no value")
        }
        if values.count > 1, command != "pause" {
            throw UsageError("ctl \(command) \(values.joined(separator: " ")): one value at most")
        }
        let target = try session()
        let descriptor = try ControlSockets.connect(target.path)
        defer { close(descriptor) }
        let line = AnyJSON.object(request).text() + "\n"
        _ = line.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var lines = ControlSockets.LineReader(descriptor: descriptor)
        guard let replyLine = lines.next() else {
            printError("session \(target.pid) closed the connection without a reply")
            throw ExitCode(ExitStatus.unavailable)
        }
        guard let reply = try? JSONDecoder().decode(ControlProtocol.Reply.self, from: Data(replyLine.utf8)) else {
            printError("session \(target.pid) answered with something that is not a reply: \(replyLine.prefix(200))")
            throw ExitCode(ExitStatus.unavailable)
        }
        if json || command == "events" {
            if json { print(replyLine) }
        } else if let status = reply.status {
            print(Self.describe(status, pid: target.pid))
        } else if let bells = AnyJSON(parsing: Array(replyLine.utf8))?["bells"]?.object {
            print(Self.describe(bells: bells, pid: target.pid))
        }
        if let error = reply.error {
            printError(error.message)
            throw ExitCode(error.code == .badArgument ? ExitStatus.usage : 1)
        }
        if command == "events" {
            while let event = lines.next() {
                print(event)
                fflush(nil)
            }
        }
    }

    /// The one session to talk to: the one with --pid, or the only one running.
    private func session() throws -> ControlSockets.Found {
        let running = ControlSockets.live()
        if let pid {
            guard let found = running.first(where: { $0.pid == pid }) else {
                printError(
                    "no gong session with a control socket runs as process \(pid)"
                        + (running.isEmpty
                            ? "" : "; running: \(running.map { String($0.pid) }.joined(separator: ", "))"))
                throw ExitCode(ExitStatus.unavailable)
            }
            return found
        }
        switch running.count {
        case 0:
            printError(
                "no gong session with a control socket is running (start one with gong run PATTERN --control socket)")
            throw ExitCode(ExitStatus.unavailable)
        case 1:
            return running[0]
        default:
            var listing = ["\(running.count) sessions are running; name one with --pid:"]
            for found in running {
                listing.append(
                    "  \(found.pid)  "
                        + ((try? Self.status(of: found)).map { Self.describe($0, pid: found.pid) } ?? "(not answering)")
                )
            }
            print(listing.joined(separator: "\n"))
            throw ExitCode(ExitStatus.usage)
        }
    }

    private static func status(of found: ControlSockets.Found) throws -> SessionStatus? {
        let descriptor = try ControlSockets.connect(found.path)
        defer { close(descriptor) }
        _ = (#"{"command":"status"}"# + "\n").withCString {
            send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL))
        }
        var lines = ControlSockets.LineReader(descriptor: descriptor)
        guard let line = lines.next() else { return nil }
        return try JSONDecoder().decode(ControlProtocol.Reply.self, from: Data(line.utf8)).status
    }

    /// `pause 1h`, `pause until 14:00`, `pause today` (for gong bells) as the request's fields.
    static func pauseLength(_ words: [String]) throws -> [String: AnyJSON] {
        let allowed = "use a duration such as 1h, until 14:00, or today"
        switch words.count {
        case 1 where words[0] == "today":
            return ["today": true]
        case 1:
            guard let seconds = DurationText.seconds(words[0]), seconds.isPositive else {
                throw UsageError("ctl pause \(words[0]): not a duration; \(allowed)")
            }
            return ["seconds": .number(seconds.doubleValue)]
        case 2 where words[0] == "until":
            guard DayBoundary(text: words[1]) != nil else {
                throw UsageError("ctl pause until \(words[1]): not a time of day; use one such as 14:00")
            }
            return ["until": .string(words[1])]
        default:
            throw UsageError("ctl pause \(words.joined(separator: " ")): \(allowed)")
        }
    }

    /// `bells (pid 4242): next 2026-11-26 10:30, 3 rung and 1 skipped today, paused until 14:00;
    /// CPU 2.1 ms waiting, 1210 ms ringing`.
    static func describe(bells: [String: AnyJSON], pid: Int32) -> String {
        var text = "bells (pid \(pid)): next " + (bells["next"]?.string ?? "none")
        if bells["passingOver"]?.bool == true { text += " (to be passed over)" }
        if bells["nextPaused"]?.bool == true { text += " (held by the pause)" }
        text += ", \(bells["rungToday"]?.int ?? 0) rung and \(bells["skippedToday"]?.int ?? 0) skipped today"
        if let until = bells["pausedUntil"]?.string {
            text += until == "resume" ? ", paused until gong ctl resume" : ", paused until \(until)"
        }
        if let waiting = bells["cpuMs"]?.double, let ringing = bells["ringingCpuMs"]?.double {
            text += "; CPU \(Figure.fixed(waiting, 1)) ms waiting, \(Figure.fixed(ringing, 0)) ms ringing"
        }
        return text
    }

    static func describe(_ status: SessionStatus, pid: Int32) -> String {
        let cycles = status.cycles > 1 ? ", cycle \(status.cycle)/\(status.cycles)" : ""
        return
            "\(status.pattern) (pid \(pid)): \(status.state.rawValue), \(status.phase) (phase \(status.phaseIndex + 1)/\(status.phaseCount)\(cycles)), "
            + "\(DurationText.format(seconds: status.elapsedSeconds.rounded(.down))) of \(DurationText.format(seconds: status.plannedSeconds)), "
            + "gain \(Figure.general(status.gainDB, signed: true)) dB"
    }
}
