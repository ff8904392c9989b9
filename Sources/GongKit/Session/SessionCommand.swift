import FoundationEssentials
import GongCore

/// What may be asked of a running session, from any thread or task: `GongSession.send`.
public enum SessionCommand: Sendable, Equatable {
    /// Fade out and hold the session clock; sounds freeze where they are.
    case pause
    /// Fade back in where the pause began.
    case resume
    /// Pause if the session plays, resume if it is paused (what a space bar or a single button
    /// sends): decided under the session's own lock, never on a state read a moment before and
    /// changed since. A refusal names the one it became.
    case togglePause
    /// Jump to the next phase; its cue plays, bells in between do not.
    case skip
    /// End early, gracefully: the end cue plays and every tail rings out.
    case stop
    /// End now: fade out over `SessionRenderer.rampSeconds`, cutting tails (a second Ctrl-C).
    case halt
    /// Set the master gain, in dB (`SessionLimits.gainDB`); it fades there smoothly.
    case setGain(decibels: Double)

    /// A command's name, as the control channel and the `ignored` event spell it.
    public enum Name: String, Sendable, Codable, CaseIterable {
        case pause, resume, toggle, skip, stop, halt, gain

        /// The person's command a refused state-machine input was.
        init?(_ input: SessionInput.Kind) {
            switch input {
            case .pause: self = .pause
            case .resume: self = .resume
            case .skip: self = .skip
            case .stop: self = .stop
            default: return nil
            }
        }
    }

    public var name: Name {
        switch self {
        case .pause: .pause
        case .resume: .resume
        case .togglePause: .toggle
        case .skip: .skip
        case .stop: .stop
        case .halt: .halt
        case .setGain: .gain
        }
    }
}

/// Why a command changed nothing. The session goes on as it was.
public struct CommandRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The session does not take this command in its state (resume while playing, skip
        /// while the end cue rings out).
        case notNow(SessionState.Kind)
        /// A gain outside `SessionLimits.gainDB`, or not a number.
        case gainOutOfRange(Double)
        /// The audio thread has not yet taken the commands before it (they were sent faster than
        /// it takes them, once a period): try again shortly.
        case busy
        /// The session has ended.
        case over
    }

    public var command: SessionCommand.Name
    public var reason: Reason

    public init(command: SessionCommand.Name, reason: Reason) {
        self.command = command
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .notNow(let state): "\(command.rawValue): not taken while the session is \(state.rawValue)"
        case .gainOutOfRange(let value):
            "gain \(Figure.general(value)): out of range; use \(SessionLimits.gainAllowed)"
        case .busy: "\(command.rawValue): commands are coming faster than the audio takes them; try again"
        case .over: "\(command.rawValue): the session is over"
        }
    }
}
