/// A bell of `gong bells` as the history keeps it: rung or skipped, and why, so a day's bells
/// can be looked back on (`gong stats --bells`).
public struct BellRecord: Codable, Sendable, Equatable {
    /// When it was due: seconds since 1970.
    public var due: Int64
    /// Its local calendar date, `2026-11-26`, and time of day, `10:30`, as the rules named them.
    public var day: String
    public var time: String
    /// Its place in the day's plan, from 1; 0 for one asked for (`gong ctl ring`).
    public var number: Int
    /// `rung`, `skipped` or `failed` (the device could not play it).
    public var outcome: String
    /// Why it was skipped, or why it failed.
    public var reason: String?
    /// How far from its second it was heard, by the device's clock, when the device tells.
    public var offMs: Double?

    public init(
        due: Int64, day: String, time: String, number: Int, outcome: String, reason: String? = nil,
        offMs: Double? = nil
    ) {
        self.due = due
        self.day = day
        self.time = time
        self.number = number
        self.outcome = outcome
        self.reason = reason
        self.offMs = offMs
    }

    /// The record of a planned (or asked-for) bell.
    public init(_ bell: PlannedBell, outcome: String, reason: String? = nil, offMs: Double? = nil) {
        let words = bell.description.split(separator: " ").map(String.init)
        self.init(
            due: bell.instant, day: words.first ?? "", time: words.last ?? "", number: bell.number, outcome: outcome,
            reason: reason, offMs: offMs)
    }
}
