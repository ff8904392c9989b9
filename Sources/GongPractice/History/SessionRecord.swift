import FoundationEssentials
import GongKit

/// One sitting in the history: a session gong played, or one a person added by hand.
///
/// Times are kept in UTC with the offset of the person's local time when the sitting began, so
/// the day it counts for can be worked out again with any day boundary, wherever the person is
/// now.
public struct SessionRecord: Sendable, Equatable, Codable {
    /// Stable across export and import: importing the same sitting twice keeps one.
    public var id: String
    public var pattern: String
    /// What was asked of the pattern, in the words of whoever recorded it (the command line's
    /// overrides, such as `--set meditation=20m`); empty when nothing was.
    public var parameters: String
    public var source: Source
    public var startedAt: Date
    /// When it ended; nil while it plays, and for one whose process died.
    public var endedAt: Date?
    /// Local time minus UTC when it began, in seconds.
    public var utcOffsetSeconds: Int
    /// The local day it counted for when recorded (`YYYY-MM-DD`), by the day boundary then.
    public var day: String
    public var plannedSeconds: Double
    /// Time heard, the ring-out included and pauses not; kept up to date while it plays, so a
    /// session whose process died keeps what was played.
    public var playedSeconds: Double
    public var phases: Int
    public var cycles: Int
    public var plannedCycles: Int
    public var ending: Ending
    public var pauses: Int
    public var skips: Int
    public var xruns: Int
    public var deviceLosses: Int
    public var lostFrames: Int64
    /// The report's verdict on when the cues were heard (`onFrame`, `audioLost`, …); nil for a
    /// sitting without gong.
    public var heard: String?
    public var maxDeviationMs: Double?
    public var jitterMs: Double?
    public var deviceClockPPM: Double?
    /// The process playing it, while it plays: a row still `playing` whose process is gone
    /// was interrupted.
    public var processID: Int32?
    /// The record of the session this one resumed, when it is the rest of one whose process died.
    public var resumedFrom: String?

    public enum Source: String, Sendable, Codable, CaseIterable {
        /// Played by gong.
        case played
        /// Added by hand for a sitting without gong.
        case added
    }

    public enum Ending: String, Sendable, Codable, CaseIterable {
        /// Still playing.
        case playing
        case completed
        /// Stopped early by the person.
        case stopped
        /// Could not go on (its device never came back).
        case failed
        /// Its process died mid-way (killed, a power loss) and it was not resumed.
        case interrupted
        /// Its process died mid-way and the session was resumed: the rest is its own record.
        case resumed
    }

    public init(
        id: String = UUID().uuidString.lowercased(), pattern: String, parameters: String = "", source: Source,
        startedAt: Date, endedAt: Date? = nil, utcOffsetSeconds: Int, day: String, plannedSeconds: Double,
        playedSeconds: Double = 0, phases: Int = 0, cycles: Int = 0, plannedCycles: Int = 0, ending: Ending,
        pauses: Int = 0, skips: Int = 0, xruns: Int = 0, deviceLosses: Int = 0, lostFrames: Int64 = 0,
        heard: String? = nil, maxDeviationMs: Double? = nil, jitterMs: Double? = nil, deviceClockPPM: Double? = nil,
        processID: Int32? = nil, resumedFrom: String? = nil
    ) {
        self.resumedFrom = resumedFrom
        self.id = id
        self.pattern = pattern
        self.parameters = parameters
        self.source = source
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.utcOffsetSeconds = utcOffsetSeconds
        self.day = day
        self.plannedSeconds = plannedSeconds
        self.playedSeconds = playedSeconds
        self.phases = phases
        self.cycles = cycles
        self.plannedCycles = plannedCycles
        self.ending = ending
        self.pauses = pauses
        self.skips = skips
        self.xruns = xruns
        self.deviceLosses = deviceLosses
        self.lostFrames = lostFrames
        self.heard = heard
        self.maxDeviationMs = maxDeviationMs
        self.jitterMs = jitterMs
        self.deviceClockPPM = deviceClockPPM
        self.processID = processID
    }

    /// The local time it began, as the person's clock showed it.
    public var localStart: Date { startedAt.addingTimeInterval(TimeInterval(utcOffsetSeconds)) }

    /// `localStart` as a person reads it: `2026-11-23 07:00`.
    public var localStartText: String { localClockText(startedAt, utcOffsetSeconds: utcOffsetSeconds) }

    /// The record as one JSON line (`gong history --json`), times as the CSV writes them.
    public func jsonLine() throws -> String {
        String(decoding: try JSONEncoder.millisecondTimes().encode(self), as: UTF8.self)
    }

    /// Takes in what a session's report says of it: how it ended and what was heard.
    public mutating func finish(with report: SessionReport, at end: Date) {
        endedAt = end
        playedSeconds = report.playedSeconds
        plannedSeconds = report.plannedSeconds
        phases = report.phases
        cycles = report.cycles
        plannedCycles = report.plannedCycles
        ending = report.failure != nil ? .failed : report.stoppedEarly ? .stopped : .completed
        pauses = report.pauses
        skips = report.skips
        xruns = report.xruns
        deviceLosses = report.deviceLosses
        lostFrames = report.lostFrames
        heard = report.heard.word
        maxDeviationMs = report.timing?.maxDeviationMs
        jitterMs = report.timing?.maxJitterMs
        deviceClockPPM = report.timing?.deviceClockPPM
        processID = nil
    }
}

/// Where a day begins for the history: a sit just after midnight counts for the day before
/// until this time (4:00 by default).
public struct DayBoundary: Sendable, Equatable, CustomStringConvertible {
    /// A calendar day on the clock the history keeps (local time as written, no leap seconds).
    public static let secondsPerDay = 86400

    public var secondsAfterMidnight: Int

    public static let standard = DayBoundary(secondsAfterMidnight: 4 * 3600)

    public init(secondsAfterMidnight: Int) { self.secondsAfterMidnight = secondsAfterMidnight }

    /// `H:MM` or `HH:MM`, from 0:00 to 23:59; nil otherwise.
    public init?(text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0..<24).contains(hour), (0..<60).contains(minute)
        else { return nil }
        secondsAfterMidnight = hour * 3600 + minute * 60
    }

    public var description: String {
        "\(secondsAfterMidnight / 3600):" + Figure.zeroPadded(secondsAfterMidnight % 3600 / 60, 2)
    }

    /// The local day a moment counts for, as days since 1970-01-01.
    public func dayNumber(localTime: Date) -> Int {
        let seconds = Int(localTime.timeIntervalSince1970.rounded(.down)) - secondsAfterMidnight
        let day = DayBoundary.secondsPerDay
        return seconds >= 0 ? seconds / day : (seconds - day + 1) / day
    }

    /// The day a record counts for, as days since 1970-01-01.
    public func dayNumber(of record: SessionRecord) -> Int { dayNumber(localTime: record.localStart) }

    /// `YYYY-MM-DD` of a day number.
    public static func text(ofDay day: Int) -> String {
        let (year, month, dayOfMonth) = CivilDate.from(day: day)
        return "\(Figure.zeroPadded(year, 4))-\(Figure.zeroPadded(month, 2))-\(Figure.zeroPadded(dayOfMonth, 2))"
    }
}
