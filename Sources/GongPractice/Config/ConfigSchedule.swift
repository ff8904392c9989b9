import FoundationEssentials
import Glibc
import GongCore
import GongKit

/// A bells schedule changed while `gong bells` runs, kept in config.toml so the bells started
/// again ring by it: the schedule's keys of `[bells]` are replaced, every other line of the file
/// (comments, other keys, other tables) is left as it was.
extension GongConfig {
    /// `text` with `[bells]`' schedule keys (`BellRules.scheduleKeys`) those of `rules`, in their
    /// order, right under the table's header (a `[bells]` table is added when there is none). A
    /// key's value that runs over several lines (a list) goes with it.
    public static func replacingSchedule(in text: String, with rules: BellRules) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let keyLines = scheduleLines(rules)
        guard let header = lines.firstIndex(where: { isHeader($0, named: "bells") }) else {
            if let last = lines.last, !last.trimmingSpaces().isEmpty { lines.append("") }
            return (lines + ["[bells]"] + keyLines).joined(separator: "\n") + "\n"
        }
        // One pass to the next table: a list open over several lines is inside its key, and
        // goes with it when the key is replaced.
        var kept: [String] = []
        var open = 0
        var dropping = false
        var end = lines.count
        for index in (header + 1)..<lines.count {
            let line = lines[index]
            if open > 0 {
                open += depth(line)
                if !dropping { kept.append(line) }
                continue
            }
            if line.trimmingSpaces().hasPrefix("[") {
                end = index
                break
            }
            let name = line.split(separator: "=", maxSplits: 1).first.map { String($0).trimmingSpaces() } ?? ""
            let key =
                name.count >= 2 && name.hasPrefix("\"") && name.hasSuffix("\"")
                ? String(name.dropFirst().dropLast()) : name
            open = line.contains("=") ? depth(String(line.drop { $0 != "=" })) : 0
            dropping = line.contains("=") && BellRules.Key(rawValue: key).map(BellRules.scheduleKeys.contains) == true
            if !dropping { kept.append(line) }
        }
        let result = Array(lines[...header]) + keyLines + kept + Array(lines[end...])
        return result.joined(separator: "\n") + "\n"
    }

    /// Writes the schedule into the config file (`path(directories)`), having read the new text
    /// back as gong reads it: a file the change would spoil is left as it was. Written whole to a
    /// file beside it, then renamed over it, so a crash leaves the old file or the new one.
    @discardableResult
    public static func saveSchedule(_ rules: BellRules, directories: GongDirectories = GongDirectories())
        throws(PatternError) -> String
    {
        let path = Self.path(directories)
        let exists = access(path, F_OK) == 0
        let old: String
        do { old = exists ? try readTextFile(path) : "" } catch {
            throw PatternError(location: path, problem: error.message, allowed: "a readable config file")
        }
        let new = replacingSchedule(in: old, with: rules)
        var check = GongConfig()
        try check.read(new, path: path)
        guard check.bells.value.scheduleTexts == rules.scheduleTexts else {
            throw PatternError(location: path, problem: "the schedule would not read back as it was given")
        }
        do {
            try FileManager.default.createDirectory(atPath: directories.config, withIntermediateDirectories: true)
        } catch {
            throw PatternError(
                location: directories.config, problem: "cannot be made", allowed: "a writable config directory")
        }
        var info = stat()
        let mode = exists && stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw PatternError(
                location: temporary, problem: String(cString: strerror(errno)), allowed: "a writable config directory")
        }
        let bytes = Array(new.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw PatternError(location: path, problem: why, allowed: "a writable config file")
        }
        return path
    }

    /// The schedule as config.toml's lines: lists as TOML lists, the cap as a number.
    static func scheduleLines(_ rules: BellRules) -> [String] {
        let texts = rules.scheduleTexts
        return BellRules.scheduleKeys.compactMap { key in
            guard let text = texts[key.rawValue] else { return nil }
            switch key {
            case .max: return "max = \(text)"
            case .at, .quiet:
                return "\(key.rawValue) = [" + text.split(separator: ",").map { "\"\($0)\"" }.joined(separator: ", ")
                    + "]"
            default: return "\(key.rawValue) = \"\(text)\""
            }
        }
    }

    /// `[NAME]`, with spaces or a comment around it.
    private static func isHeader(_ line: String, named name: String) -> Bool {
        let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return String(code).trimmingSpaces() == "[\(name)]"
    }

    /// How many brackets a line opens and leaves open (outside strings).
    private static func depth(_ line: String) -> Int {
        var count = 0
        var quoted = false
        for character in line {
            if character == "\"" { quoted.toggle() }
            if quoted { continue }
            if character == "#" { break }
            if character == "[" { count += 1 }
            if character == "]" { count -= 1 }
        }
        return count
    }
}
