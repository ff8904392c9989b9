import FoundationEssentials
import GongAudio
import GongCore

/// One thing that happened in a live session, as tools see it: `gong run --json` prints exactly
/// these, one per line; `GongSession.events()` yields them; the C ABI hands them out as JSON.
///
/// Every line carries `schema` (``schemaVersion``) and `type`. What the audio side did also
/// carries `frame` (the session frame: frames since the session's first, skipped and lost
/// stretches included) and, when the device reports time, `audible`: the CLOCK_MONOTONIC second
/// it is heard. A reader must ignore keys it does not know; a key's meaning never changes within
/// a schema version, and a new version is a new number.
public struct SessionEvent: Sendable, Equatable {
    /// Raised whenever a type or key is removed or changes meaning; adding a type or an optional
    /// key keeps it.
    public static let schemaVersion = 1

    public var kind: Kind
    /// The session frame it happened on, where it has one.
    public var frame: Int64?
    /// When that frame is heard, CLOCK_MONOTONIC seconds (nil: the device gives no time).
    public var audible: Double?

    public init(_ kind: Kind, frame: Int64? = nil, audible: Double? = nil) {
        self.kind = kind
        self.frame = frame
        self.audible = audible
    }

    public enum Kind: Sendable, Equatable {
        /// The device is open and playing: what it granted.
        case started(pattern: String, device: String, rate: Int, channels: Int, format: String, latencyMs: Double)
        /// The session's first frame is heard at `audible`.
        case firstFrameAudible
        /// A phase began: its name, the cycle (1-based) of `cycles`, and how long it lasts.
        case phaseBegan(phase: String, cycle: Int, cycles: Int, seconds: Double)
        /// A cue started, `lateFrames` after its schedule (0 unless audio was lost); `offFrames`
        /// when the device's clock heard it further off its frame than `CueTiming.toleranceSeconds`.
        case cue(sound: String, lateFrames: Int64, offFrames: Int64?)
        /// A cue told before (its `cue` line has the same `frame`) was heard later than that line
        /// said: audio was lost (the `xrun` just before) behind it while it was already in the
        /// device's hands, too late to take back. `lateFrames` is its lateness in all, `audible`
        /// when it was really heard.
        case cueHeardLate(sound: String, lateFrames: Int64)
        /// A cue not yet heard is to be heard at `audible` (its scheduled `frame`), as the
        /// device's clock stands now: said ahead, so a display can mark it when it sounds
        /// rather than when its `cue` event comes. Said again if the estimate moves.
        case cueAhead(sound: String)
        /// The cues announced by `cueAhead` and not yet heard may not sound then (a pause, skip
        /// or stop was taken, audio or the device lost): forget them; those still to come are
        /// announced again once the session knows when.
        case cuesWithdrawn
        /// The fade-out after a pause is done: silence from `frame`.
        case paused
        case resumed
        /// A skip jumped over this much of the session.
        case skipped(seconds: Double)
        /// A stop was taken: the end cue plays and the tails ring out.
        case stopping
        /// The master gain is now this (it fades there smoothly).
        case gainChanged(decibels: Double)
        /// Audio was lost (an underrun) and recovered; cues after it stay on schedule. Or the
        /// device's clock stood still for `clockStoppedSeconds` (a sound server's driver that
        /// woke late), losing no frame: the cues after it are on their frames, heard that much
        /// later.
        case xrun(lostFrames: Int64, clockStoppedSeconds: Double = 0)
        /// The system suspended the device and it was brought back; `paused`: the session waits.
        case suspendRecovered(paused: Bool)
        /// The device went away; the session waits for it, retrying. `reason` and `errno` (positive,
        /// 0 for none) say why as data, `message` in words.
        case deviceLost(message: String, reason: AudioDeviceError.Reason, errno: Int32)
        /// The device is back; `resumed`: the session plays on (else it waits paused).
        case deviceBack(resumed: Bool)
        /// The audio thread could not get the priority it asked for and plays at normal priority.
        case priorityRefused(priority: Priority, message: String)
        /// A command the session does not take in its state (resume while playing).
        case ignored(command: SessionCommand.Name, state: SessionState.Kind)
        /// The audio side reported something the session does not accept in its state: a bug,
        /// said rather than dropped.
        case internalError(input: SessionInput.Kind, state: SessionState.Kind)
        /// The audio side had no room to hand over `count` events (this side fell behind
        /// taking them), just before the next one: what was said of the session is incomplete.
        case eventsLost(count: Int)
        /// The session cannot go on.
        case failed(message: String)
        /// The session is over; always the last event.
        case finished(SessionReport)
    }

    public enum Priority: String, Sendable, Codable, CaseIterable {
        /// SCHED_FIFO, as asked of a sound card.
        case realtime
        /// A raised nice value, as asked for a sound server's client.
        case raised
    }

    /// The `type` a line is written with: each kind's name, written once here, in the order
    /// docs/embedding.md's table lists them.
    public enum TypeName: String, Sendable, CaseIterable {
        case started, firstFrameAudible, phaseBegan, cue, cueHeardLate, cueAhead, cuesWithdrawn
        case paused, resumed, skipped, stopping, gainChanged, xrun
        case suspendRecovered, deviceLost, deviceBack, priorityRefused, ignored, internalError, eventsLost
        case failed, finished
    }

    /// The `type` this event is written with.
    public var typeName: TypeName {
        switch kind {
        case .started: .started
        case .firstFrameAudible: .firstFrameAudible
        case .phaseBegan: .phaseBegan
        case .cue: .cue
        case .cueHeardLate: .cueHeardLate
        case .cueAhead: .cueAhead
        case .cuesWithdrawn: .cuesWithdrawn
        case .paused: .paused
        case .resumed: .resumed
        case .skipped: .skipped
        case .stopping: .stopping
        case .gainChanged: .gainChanged
        case .xrun: .xrun
        case .suspendRecovered: .suspendRecovered
        case .deviceLost: .deviceLost
        case .deviceBack: .deviceBack
        case .priorityRefused: .priorityRefused
        case .ignored: .ignored
        case .internalError: .internalError
        case .eventsLost: .eventsLost
        case .failed: .failed
        case .finished: .finished
        }
    }

    public var type: String { typeName.rawValue }

    /// Every `type` a line may have, in the order docs/embedding.md's table lists them.
    public static let allTypes = TypeName.allCases.map(\.rawValue)

    public var isFinished: Bool { if case .finished = kind { true } else { false } }

    /// The event as one line of JSON (keys sorted, no newline).
    public func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding these plain values cannot fail; an empty object would say so if it did.
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

extension SessionEvent: Codable {
    enum Key: String, CodingKey {
        case schema, type, frame, audible
        case pattern, device, rate, channels, format, latencyMs, version
        case phase, cycle, cycles, seconds, sound, lateFrames, offFrames
        case decibels, lostFrames, clockStoppedMs, paused, resumed, message, priority, command, state, input, count
        case reason, errno
    }

    /// A line whose `schema` this build does not read.
    public struct SchemaMismatch: Error, Equatable, Sendable {
        public var found: Int
        public init(found: Int) { self.found = found }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(Self.schemaVersion, forKey: .schema)
        try c.encode(type, forKey: .type)
        try c.encodeIfPresent(frame, forKey: .frame)
        try c.encodeIfPresent(audible, forKey: .audible)
        switch kind {
        case .started(let pattern, let device, let rate, let channels, let format, let latencyMs):
            try c.encode(pattern, forKey: .pattern); try c.encode(device, forKey: .device);
            try c.encode(rate, forKey: .rate)
            try c.encode(channels, forKey: .channels); try c.encode(format, forKey: .format);
            try c.encode(latencyMs, forKey: .latencyMs)
            // Which gong is speaking: the writer's build, not a property of the session, so
            // it is written here and not carried in `Kind` (a reader needs no version to act).
            try c.encode(GongVersion.description, forKey: .version)
        case .firstFrameAudible, .paused, .resumed, .stopping, .cuesWithdrawn:
            break
        case .cueAhead(let sound): try c.encode(sound, forKey: .sound)
        case .phaseBegan(let phase, let cycle, let cycles, let seconds):
            try c.encode(phase, forKey: .phase); try c.encode(cycle, forKey: .cycle)
            try c.encode(cycles, forKey: .cycles); try c.encode(seconds, forKey: .seconds)
        case .cue(let sound, let lateFrames, let offFrames):
            try c.encode(sound, forKey: .sound); try c.encode(lateFrames, forKey: .lateFrames)
            try c.encodeIfPresent(offFrames, forKey: .offFrames)
        case .cueHeardLate(let sound, let lateFrames):
            try c.encode(sound, forKey: .sound); try c.encode(lateFrames, forKey: .lateFrames)
        case .skipped(let seconds): try c.encode(seconds, forKey: .seconds)
        case .gainChanged(let decibels): try c.encode(decibels, forKey: .decibels)
        case .xrun(let lostFrames, let stopped):
            try c.encode(lostFrames, forKey: .lostFrames)
            if stopped > 0 { try c.encode(stopped * 1000, forKey: .clockStoppedMs) }
        case .suspendRecovered(let paused): try c.encode(paused, forKey: .paused)
        case .deviceLost(let message, let reason, let errno):
            try c.encode(message, forKey: .message); try c.encode(reason.rawValue, forKey: .reason)
            try c.encode(errno, forKey: .errno)
        case .failed(let message): try c.encode(message, forKey: .message)
        case .deviceBack(let resumed): try c.encode(resumed, forKey: .resumed)
        case .priorityRefused(let priority, let message):
            try c.encode(priority, forKey: .priority); try c.encode(message, forKey: .message)
        case .ignored(let command, let state):
            try c.encode(command.rawValue, forKey: .command); try c.encode(state.rawValue, forKey: .state)
        case .internalError(let input, let state):
            try c.encode(input.rawValue, forKey: .input); try c.encode(state.rawValue, forKey: .state)
        case .eventsLost(let count): try c.encode(count, forKey: .count)
        case .finished(let report):
            try report.encode(to: encoder)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        let schema = try c.decode(Int.self, forKey: .schema)
        guard schema == Self.schemaVersion else { throw SchemaMismatch(found: schema) }
        frame = try c.decodeIfPresent(Int64.self, forKey: .frame)
        audible = try c.decodeIfPresent(Double.self, forKey: .audible)
        func string(_ key: Key) throws -> String { try c.decode(String.self, forKey: key) }
        func named<T: RawRepresentable<String>>(_ key: Key) throws -> T {
            guard let value = T(rawValue: try string(key)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: c, debugDescription: "unknown \(key.stringValue)")
            }
            return value
        }
        let written = try string(.type)
        guard let type = TypeName(rawValue: written) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c, debugDescription: "unknown event type \(written)")
        }
        switch type {
        case .started:
            kind = .started(
                pattern: try string(.pattern), device: try string(.device), rate: try c.decode(Int.self, forKey: .rate),
                channels: try c.decode(Int.self, forKey: .channels), format: try string(.format),
                latencyMs: try c.decode(Double.self, forKey: .latencyMs))
        case .firstFrameAudible: kind = .firstFrameAudible
        case .phaseBegan:
            kind = .phaseBegan(
                phase: try string(.phase), cycle: try c.decode(Int.self, forKey: .cycle),
                cycles: try c.decode(Int.self, forKey: .cycles), seconds: try c.decode(Double.self, forKey: .seconds))
        case .cue:
            kind = .cue(
                sound: try string(.sound), lateFrames: try c.decode(Int64.self, forKey: .lateFrames),
                offFrames: try c.decodeIfPresent(Int64.self, forKey: .offFrames))
        case .cueHeardLate:
            kind = .cueHeardLate(sound: try string(.sound), lateFrames: try c.decode(Int64.self, forKey: .lateFrames))
        case .cueAhead: kind = .cueAhead(sound: try string(.sound))
        case .cuesWithdrawn: kind = .cuesWithdrawn
        case .paused: kind = .paused
        case .resumed: kind = .resumed
        case .skipped: kind = .skipped(seconds: try c.decode(Double.self, forKey: .seconds))
        case .stopping: kind = .stopping
        case .gainChanged: kind = .gainChanged(decibels: try c.decode(Double.self, forKey: .decibels))
        case .xrun:
            kind = .xrun(
                lostFrames: try c.decode(Int64.self, forKey: .lostFrames),
                clockStoppedSeconds: (try c.decodeIfPresent(Double.self, forKey: .clockStoppedMs) ?? 0) / 1000)
        case .suspendRecovered: kind = .suspendRecovered(paused: try c.decode(Bool.self, forKey: .paused))
        case .deviceLost:
            // A reason this build does not know (a later one's) reads as `other`; errno says more.
            kind = .deviceLost(
                message: try string(.message),
                reason: try c.decodeIfPresent(String.self, forKey: .reason).flatMap(AudioDeviceError.Reason.init)
                    ?? .other,
                errno: try c.decodeIfPresent(Int32.self, forKey: .errno) ?? 0)
        case .deviceBack: kind = .deviceBack(resumed: try c.decode(Bool.self, forKey: .resumed))
        case .priorityRefused: kind = .priorityRefused(priority: try named(.priority), message: try string(.message))
        case .ignored: kind = .ignored(command: try named(.command), state: try named(.state))
        case .internalError: kind = .internalError(input: try named(.input), state: try named(.state))
        case .eventsLost: kind = .eventsLost(count: try c.decode(Int.self, forKey: .count))
        case .failed: kind = .failed(message: try string(.message))
        case .finished: kind = .finished(try SessionReport(from: decoder))
        }
    }
}
