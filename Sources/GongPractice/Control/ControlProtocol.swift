import FoundationEssentials
import GongAudio
import GongKit

/// The control channel's protocol: one JSON object per line each way, the same on standard
/// input (`gong run --control stdin`), on the session's Unix socket and for `gong ctl`.
///
///     → {"command": "pause", "id": 7}
///     ← {"type": "reply", "id": 7, "ok": true}
///     → {"command": "gain", "decibels": -6, "id": 8}
///     → {"command": "status", "id": 9}
///     ← {"type": "reply", "id": 9, "ok": true, "status": {…}}
///     → {"command": "resume"}                        (an id is optional, and echoed when given)
///     ← {"type": "reply", "ok": false, "error": {"code": "notNow", "message": "…"}}
///
/// Commands: `status`, `pause`, `resume`, `toggle` (pause if playing, resume if paused: what a
/// single button sends), `skip`, `stop`, `gain` (`decibels`), and on a socket
/// `subscribe` (the session's events follow on that connection, as `--json` prints them). A
/// line that is not a JSON object, names no known command, has a field of the wrong type or
/// is longer than `maxLineBytes` gets an error reply and changes nothing.
public enum ControlProtocol {
    /// A longer line is refused unread (and on a socket the rest of it skipped).
    public static let maxLineBytes = 4096

    public enum Command: String, Sendable, CaseIterable {
        case status, pause, resume, toggle, skip, stop, gain, subscribe
    }

    /// Why a line changed nothing, as data (`code`) and in words (`message`).
    public struct Failure: Error, Equatable, Sendable {
        public enum Code: String, Sendable, Codable {
            /// Not a JSON object.
            case malformed
            /// Longer than `maxLineBytes`.
            case tooLong
            /// `command` missing or not one of `Command`.
            case unknownCommand
            /// A field of the wrong type or out of range.
            case badArgument
            /// The session does not take the command in its state.
            case notNow
            /// `subscribe` where there is nothing to stream to (standard input).
            case unsupported
            /// Commands came faster than the audio thread takes them: try again.
            case busy
            /// The session is over.
            case over
        }
        public var code: Code
        public var message: String

        public init(code: Code, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// A line taken apart: the command and its id, or why it cannot be carried out.
    public struct Request: Sendable, Equatable {
        public var id: JSONValue?
        public var command: Command
        public var decibels: Double?
    }

    /// The reply to a line longer than `maxLineBytes`, which is skipped unread.
    public static var tooLongReply: String { replyLine(id: nil, failure: tooLong) }

    static let tooLong = Failure(code: .tooLong, message: "a line is at most \(maxLineBytes) bytes")

    public static func parse(_ line: Substring) -> (id: JSONValue?, result: Result<Request, Failure>) {
        guard line.utf8.count <= maxLineBytes else {
            return (nil, .failure(tooLong))
        }
        let data = Data(line.utf8)
        guard AnyJSON(parsing: data)?.object != nil else {
            return (
                nil,
                .failure(
                    Failure(
                        code: .malformed,
                        message: "not a JSON object; send one per line, e.g. {\"command\": \"pause\", \"id\": 1}"))
            )
        }
        // Each field read on its own and strictly (JSONDecoder takes no `true` for a number), so
        // a field of the wrong type is named rather than sinking the whole line.
        struct ID: Decodable { var id: JSONValue? }
        struct Name: Decodable { var command: String }
        struct Gain: Decodable { var decibels: Double }
        let decoder = JSONDecoder()
        let id = (try? decoder.decode(ID.self, from: data))?.id
        let names = Command.allCases.map(\.rawValue).joined(separator: ", ")
        guard let name = try? decoder.decode(Name.self, from: data).command else {
            return (
                id, .failure(Failure(code: .unknownCommand, message: "\"command\" must be a string: one of \(names)"))
            )
        }
        guard let command = Command(rawValue: name) else {
            return (
                id,
                .failure(Failure(code: .unknownCommand, message: "unknown command \"\(name)\"; use one of \(names)"))
            )
        }
        var request = Request(id: id, command: command)
        // A length is what the bells take with pause (BellControl); a session pauses until it is
        // resumed, and a length it would ignore is refused rather than dropped.
        if command == .pause,
            let object = AnyJSON(parsing: data)?.object,
            let length = ["seconds", "until", "today"].first(where: { object[$0] != nil })
        {
            return (
                id,
                .failure(
                    Failure(
                        code: .badArgument,
                        message:
                            "a session pauses until it is resumed: \"\(length)\" is for the bells; send pause without it"
                    ))
            )
        }
        if command == .gain {
            guard let gain = try? decoder.decode(Gain.self, from: data) else {
                return (
                    id,
                    .failure(Failure(code: .badArgument, message: "gain needs \"decibels\": a number from -60 to 12"))
                )
            }
            request.decibels = gain.decibels
        }
        return (id, .success(request))
    }

    /// Carries out one line on `session`; the reply line (without its newline). `subscribe` is
    /// the transport's to carry out: here it is unsupported.
    public static func reply(to line: Substring, session: GongSession) -> String {
        let (id, parsed) = parse(line)
        switch parsed {
        case .failure(let failure):
            return replyLine(id: id, failure: failure)
        case .success(let request):
            return replyLine(id: id, outcome: carryOut(request, on: session))
        }
    }

    /// What a command did: nothing to add, the status, or why it changed nothing.
    public enum Outcome: Sendable, Equatable {
        case done
        case status(SessionStatus)
        case refused(Failure)
    }

    public static func carryOut(_ request: Request, on session: GongSession) -> Outcome {
        let command: SessionCommand
        switch request.command {
        case .status: return .status(session.status)
        case .subscribe:
            return .refused(
                Failure(code: .unsupported, message: "subscribe works on the control socket, not on standard input"))
        case .pause: command = .pause
        case .resume: command = .resume
        case .toggle: command = .togglePause
        case .skip: command = .skip
        case .stop: command = .stop
        case .gain: command = .setGain(decibels: request.decibels ?? .nan)
        }
        do {
            try session.send(command)
            return .done
        } catch {
            let code: Failure.Code =
                switch error.reason {
                case .notNow: .notNow
                case .gainOutOfRange: .badArgument
                case .busy: .busy
                case .over: .over
                }
            return .refused(Failure(code: code, message: error.description))
        }
    }

    public static func replyLine(id: JSONValue?, outcome: Outcome) -> String {
        switch outcome {
        case .done: line(Reply(id: id, ok: true))
        case .status(let status): line(Reply(id: id, ok: true, status: status))
        case .refused(let failure): replyLine(id: id, failure: failure)
        }
    }

    public static func replyLine(id: JSONValue?, failure: Failure) -> String {
        line(Reply(id: id, ok: false, error: Reply.ErrorBody(code: failure.code, message: failure.message)))
    }

    /// One reply, as written.
    public struct Reply: Codable, Sendable, Equatable {
        /// As on every line gong writes as JSON (`SessionEvent.schemaVersion`).
        public var schema = SessionEvent.schemaVersion
        public var type = "reply"
        public var id: JSONValue?
        public var ok: Bool
        public var status: SessionStatus?
        public var error: ErrorBody?

        public struct ErrorBody: Codable, Sendable, Equatable {
            public var code: Failure.Code
            public var message: String
        }

        public init(id: JSONValue?, ok: Bool, status: SessionStatus? = nil, error: ErrorBody? = nil) {
            self.id = id
            self.ok = ok
            self.status = status
            self.error = error
        }
    }

    private static func line(_ reply: Reply) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(reply) else {
            return #"{"ok":false,"schema":\#(SessionEvent.schemaVersion),"type":"reply"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A request's `id`, echoed as it came: a number or a string (anything else is not kept).
public enum JSONValue: Codable, Sendable, Equatable {
    case number(Double)
    case string(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number):
            // Whole numbers as integers: an id of 7 comes back as 7, not 7.0.
            if number == number.rounded(), abs(number) < 1e15 {
                try container.encode(Int64(number))
            } else {
                try container.encode(number)
            }
        case .string(let string): try container.encode(string)
        }
    }
}

/// Cuts the bytes a control channel delivers into its lines, holding at most
/// `ControlProtocol.maxLineBytes` of one: what the stdin channel and the socket server both read
/// with. A blank line is nothing; a line that grows too long is reported once, when it passes
/// the cap, and the rest of it is skipped as it arrives.
public struct ControlLineSplitter {
    public enum Piece: Equatable, Sendable {
        case line(String)
        case tooLong
    }

    private var partial: [UInt8] = []
    private var discarding = false

    public init() {}

    /// Takes the next bytes in order; `take` gets each piece they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>, _ take: (Piece) -> Void) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if !discarding, !partial.isEmpty { take(.line(String(decoding: partial, as: UTF8.self))) }
                partial.removeAll(keepingCapacity: true)
                discarding = false
            } else if !discarding {
                partial.append(byte)
                if partial.count > ControlProtocol.maxLineBytes {
                    take(.tooLong)
                    partial.removeAll(keepingCapacity: true)
                    discarding = true
                }
            }
        }
    }
}
