import FoundationEssentials
import Glibc
import GongAudio
import GongCore

/// What `gong ctl` asks of `gong bells`, one JSON object a line on the same socket a session
/// listens on (`ControlSockets`), answered with a reply line like a session's:
///
///     → {"command": "status", "id": 1}
///     ← {"type": "reply", "id": 1, "ok": true, "bells": {"next": "2026-11-26 10:30", …}}
///     → {"command": "pause", "seconds": 3600}     (or "until": "14:00", or "today": true)
///     → {"command": "resume"}  {"command": "ring"}  {"command": "next"}
///     → {"command": "plan", "day": "2026-11-26"}  (the day's bells and what became of each;
///                                                 today without a day)
///     → {"command": "schedule", "rules": {"every": "45m", "active": "09:00-18:00"}}
///                                 (a new schedule, taken at once: `BellRules.schedule`)
///     → {"command": "subscribe"}  (the reply, then a JSON line for each bell and each change,
///                                  on this connection, until it closes)
public enum BellRequest: Sendable, Equatable {
    case status
    /// No bell until the pause ends; the bells meanwhile are skipped and said.
    case pause(BellPause)
    case resume
    /// A bell now, outside the plan.
    case ring
    /// Pass over the next planned bell.
    case next
    /// A day's bells (days since 1970; nil: today) with what became of each.
    case plan(day: Int?)
    /// Keep the connection: every bell and every change follows on it as a JSON line.
    case subscribe
    /// When bells ring from now on: the schedule's keys (`BellRules.scheduleKeys`), checked.
    case schedule(BellRules)

    public static let names = ["status", "pause", "resume", "ring", "next", "plan", "subscribe", "schedule"]

    /// The request's `command`, as it is sent.
    public var name: String {
        switch self {
        case .status: "status"
        case .pause: "pause"
        case .resume: "resume"
        case .ring: "ring"
        case .next: "next"
        case .plan: "plan"
        case .subscribe: "subscribe"
        case .schedule: "schedule"
        }
    }

    /// A line taken apart: the request and the id to echo, or why it cannot be carried out.
    public static func parse(_ line: String) -> (id: JSONValue?, result: Result<BellRequest, ControlProtocol.Failure>) {
        guard let object = AnyJSON(parsing: Array(line.utf8))?.object else {
            return (
                nil, .failure(.init(code: .malformed, message: "not a JSON object, e.g. {\"command\": \"status\"}"))
            )
        }
        let id: JSONValue? =
            if let number = object["id"]?.double { .number(number) } else {
                object["id"]?.string.map { .string($0) }
            }
        let known = names.joined(separator: ", ")
        guard let name = object["command"]?.string, names.contains(name) else {
            return (id, .failure(.init(code: .unknownCommand, message: "the bells take one of \(known)")))
        }
        switch name {
        case "status": return (id, .success(.status))
        case "resume": return (id, .success(.resume))
        case "ring": return (id, .success(.ring))
        case "next": return (id, .success(.next))
        case "subscribe": return (id, .success(.subscribe))
        case "schedule":
            guard let values = object["rules"]?.object else {
                return (
                    id,
                    .failure(
                        .init(code: .badArgument, message: #"schedule needs "rules", e.g. {"every": "45m"}"#))
                )
            }
            do throws(PatternError) {
                return (id, .success(.schedule(try BellRules.schedule(values))))
            } catch {
                return (id, .failure(.init(code: .badArgument, message: error.description)))
            }
        case "plan":
            guard let given = object["day"] else { return (id, .success(.plan(day: nil))) }
            let text = given.string ?? "(not a string)"
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3, let day = CivilDate.day(year: parts[0], month: parts[1], day: parts[2]),
                CivilDate.from(day: day) == (parts[0], parts[1], parts[2])
            else {
                return (
                    id, .failure(.init(code: .badArgument, message: "plan day \(text): use a date such as 2026-11-26"))
                )
            }
            return (id, .success(.plan(day: day)))
        default: break
        }
        if let seconds = object["seconds"]?.double {
            guard seconds.isFinite, seconds > 0, seconds <= Double(366 * DayBoundary.secondsPerDay) else {
                return (id, .failure(.init(code: .badArgument, message: "pause seconds: from 1 to a year")))
            }
            return (id, .success(.pause(.seconds(Int64(seconds.rounded(.up))))))
        }
        if let until = object["until"]?.string {
            guard let time = DayBoundary(text: until) else {
                return (
                    id, .failure(.init(code: .badArgument, message: "pause until \(until): use a time such as 14:00"))
                )
            }
            return (id, .success(.pause(.until(wallSecond: time.secondsAfterMidnight))))
        }
        if object["today"]?.bool == true { return (id, .success(.pause(.today))) }
        return (id, .success(.pause(.indefinitely)))
    }
}

/// How long a pause lasts.
public enum BellPause: Sendable, Equatable {
    case seconds(Int64)
    /// Until the wall clock next shows this time of day.
    case until(wallSecond: Int)
    /// Until the next local day begins.
    case today
    /// Until `resume`.
    case indefinitely

    /// When the pause ends (seconds since 1970) for one begun at `now`, on `plan`'s clock.
    public func end(now: Int64, plan: BellPlan) -> Int64 {
        let today = plan.localDay(of: now)
        switch self {
        case .seconds(let seconds): return now + seconds
        case .until(let second):
            let todays = plan.instant(day: today, wallSecond: second)
            return todays > now ? todays : plan.instant(day: today + 1, wallSecond: second)
        case .today: return plan.instant(day: today + 1, wallSecond: 0)
        case .indefinitely: return Int64.max
        }
    }
}

/// The socket `gong bells` listens on. It is served from the bells' own loop, one request per
/// connection, so the keeper is only ever touched from one place and nothing runs between bells
/// but the wait.
public final class BellControlSocket {
    public let path: String
    public let descriptor: Int32

    public init(directory: String = ControlSockets.directory()) throws(ControlSocketError) {
        (path, descriptor) = try ControlSockets.listen(directory: directory)
    }

    deinit {
        unlink(path)
        close(descriptor)
        subscribers.forEach { close($0) }
    }

    /// Connections that asked to `subscribe`, kept open for `publish`.
    private var subscribers: [Int32] = []
    /// More subscribers than this and the oldest is let go.
    public static let maxSubscribers = 16

    /// Takes the waiting connection's request and writes `answer`'s reply line. A client that
    /// sends nothing within a second is dropped, so a stuck one cannot hold up a bell. A
    /// connection whose request `subscribes` (`answer`'s second value) stays open for `publish`.
    public func serveOne(_ answer: (String) -> (reply: String, subscribes: Bool)) {
        // On Linux the accepted socket blocks (it inherits no O_NONBLOCK), within the timeout.
        let connection = accept(descriptor, nil, nil)
        guard connection >= 0 else { return }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        var keep = false
        defer { if !keep { close(connection) } }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var lines = ControlSockets.LineReader(descriptor: connection)
        guard let line = lines.next() else { return }
        let (reply, subscribes) = answer(line)
        _ = (reply + "\n").withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        if subscribes {
            keep = true
            if subscribers.count >= Self.maxSubscribers { close(subscribers.removeFirst()) }
            subscribers.append(connection)
        }
    }

    /// A line to every subscriber, never waiting: one whose socket will not take the whole line
    /// now (it has stopped reading, or gone) is closed and forgotten.
    public func publish(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        subscribers.removeAll { connection in
            let sent = bytes.withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            guard sent == bytes.count else {
                close(connection)
                return true
            }
            return false
        }
    }

    /// The reply line: `fields` under `bells` when it succeeded, else the failure.
    public static func reply(
        id: JSONValue?, bells fields: [String: AnyJSON]? = nil, failure: ControlProtocol.Failure? = nil
    )
        -> String
    {
        var object: [String: AnyJSON] = ["schema": .number(1), "type": .string("reply"), "ok": .bool(failure == nil)]
        switch id {
        case .number(let number): object["id"] = .number(number)
        case .string(let string): object["id"] = .string(string)
        case nil: break
        }
        if let fields { object["bells"] = .object(fields) }
        if let failure {
            object["error"] = .object(["code": .string(failure.code.rawValue), "message": .string(failure.message)])
        }
        return AnyJSON.object(object).text()
    }
}
