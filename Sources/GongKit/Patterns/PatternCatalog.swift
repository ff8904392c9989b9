import FoundationEssentials
import GongCore

/// Finds patterns by name or path: built-ins first, then `NAME.toml` in the user's pattern
/// directory and then in any extra ones (the config's `patterns`); anything that looks like a
/// path is read as a file.
public struct PatternCatalog: Sendable {
    public var directories: GongDirectories
    public var extraDirectories: [String]

    public init(directories: GongDirectories = GongDirectories(), extraDirectories: [String] = []) {
        self.directories = directories
        self.extraDirectories = extraDirectories
    }

    private var searched: [String] { [directories.userPatterns] + extraDirectories }

    public func pattern(named reference: String) throws(PatternError) -> Pattern {
        if reference.contains("/") || reference.hasSuffix(".toml") {
            return try PatternFile.load(path: expandingTilde(reference))
        }
        if let builtIn = BuiltInPatterns.named(reference) { return builtIn }
        for directory in searched {
            let file = directory + "/" + reference + ".toml"
            if FileManager.default.fileExists(atPath: file) { return try PatternFile.load(path: file) }
        }
        var error = PatternError(
            value: reference, problem: "no such pattern",
            allowed: "one of " + allNames().joined(separator: ", ") + ", or a path to a .toml pattern file")
        error.kind = .unknownPattern
        throw error
    }

    /// A pattern written in TOML (the format of pattern files), as a program holds it; errors
    /// name the line as `<name>.toml:LINE`.
    public static func pattern(toml text: String, name: String = "custom") throws(PatternError) -> Pattern {
        try PatternFile.parse(text, path: name + ".toml", defaultName: name)
    }

    /// Built-in names, then the user's own.
    public func allNames() -> [String] {
        BuiltInPatterns.all.map(\.name) + userPatternNames()
    }

    public func userPatternNames() -> [String] {
        let files = searched.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] }
        return Array(Set(files.filter { $0.hasSuffix(".toml") }.map { String($0.dropLast(5)) })).sorted()
    }
}
