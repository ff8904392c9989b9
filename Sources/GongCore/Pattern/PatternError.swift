/// Why a pattern, a pattern file or an override cannot be used, in words a person can act on.
///
/// It renders as one line: where (file and line, or the override), which key, the bad value, what is
/// wrong and what is allowed — `calm.toml:7: phases[1].length = "-4s": must be positive; use a
/// duration such as 4s, 4.5s, 90s, 15m, 1h30m or 250ms`.
public struct PatternError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Whose problem it is, for whoever decides what happens next (the command line's exit
    /// status): never read from the words.
    public enum Kind: Sendable, Equatable {
        /// The pattern, or a value given for it, is wrong.
        case invalid
        /// No pattern of that name.
        case unknownPattern
        /// The pattern file is missing or cannot be read.
        case unreadableFile
    }

    public var kind: Kind = .invalid
    /// A file path with an optional line.
    public var location: String?
    /// The override the value came from, when it came from one: whoever offered the override
    /// (a command line, a config file) names it in its own words.
    public var override: PatternOverrides.Field?
    /// The key inside the pattern, such as `phases[1].length` or `cycles`.
    public var key: String?
    /// The offending value as the person wrote it.
    public var value: String?
    /// What is wrong with it.
    public var problem: String
    /// What would have been accepted.
    public var allowed: String?
    /// What would have been accepted when saying it names how values are given or looked up, as
    /// data: `allowed` then says it without naming a flag or a command, and whoever offered the
    /// values (a command line) may say it in its own words.
    public var remedy: Remedy?

    /// What would be accepted where saying it fully names how it is given or found.
    public enum Remedy: Sendable, Equatable, CustomStringConvertible {
        /// An open sit with no number of cycles and no duration beside it.
        case openAlone
        /// A bed's gain together with a bed (a sound of the bank, or a file).
        case bedWithGain
        /// A number of cycles or a duration.
        case cyclesOrDuration
        /// A sound of the bank by name (whoever can list the bank may say how).
        case soundOfTheBank

        public var description: String {
            switch self {
            case .openAlone: "an open sit alone: it lasts until it is stopped"
            case .bedWithGain: "a bed (brown-noise, or a file) with its gain"
            case .cyclesOrDuration: "a number of cycles or a duration"
            case .soundOfTheBank: "a sound of the bank such as bowl"
            }
        }
    }

    public init(
        location: String? = nil, override: PatternOverrides.Field? = nil, key: String? = nil, value: String? = nil,
        problem: String, allowed: String? = nil, remedy: Remedy? = nil
    ) {
        self.location = location
        self.override = override
        self.key = key
        self.value = value
        self.problem = problem
        self.allowed = allowed ?? remedy?.description
        self.remedy = remedy
    }

    public var description: String {
        var text = ""
        if let location {
            text += location + ": "
        } else if let override {
            text += override.description + ": "
        }
        if let key {
            text += key
            if let value { text += " = \(quoted(value))" }
            text += ": "
        } else if let value {
            text += "\(quoted(value)): "
        }
        text += problem
        if let allowed { text += "; use " + allowed }
        return text
    }

    /// The same error, placed at `location` unless it already names one.
    public func located(_ location: String?) -> PatternError {
        var copy = self
        if copy.location == nil { copy.location = location }
        return copy
    }

    /// The same error, blamed on `override` unless it already names a place.
    public func caused(by override: PatternOverrides.Field) -> PatternError {
        var copy = self
        if copy.location == nil, copy.override == nil { copy.override = override }
        return copy
    }

    private func quoted(_ value: String) -> String {
        value.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) && !value.isEmpty ? value : "\"\(value)\""
    }
}
