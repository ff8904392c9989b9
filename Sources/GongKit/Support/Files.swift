import FoundationEssentials

/// A file-system problem in words: `file not found`, `permission denied`, `is a directory`.
package struct FileProblem: Error {
    package let message: String
}

/// Reads a UTF-8 text file, saying plainly why it could not be read.
package func readTextFile(_ path: String) throws(FileProblem) -> String {
    var isDirectory = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw FileProblem(message: "file not found")
    }
    guard !isDirectory else { throw FileProblem(message: "is a directory, not a file") }
    guard FileManager.default.isReadableFile(atPath: path) else { throw FileProblem(message: "permission denied") }
    guard let data = FileManager.default.contents(atPath: path) else { throw FileProblem(message: "cannot be read") }
    guard let text = String(data: data, encoding: .utf8) else { throw FileProblem(message: "is not UTF-8 text") }
    return text
}

/// Expands a leading `~` to the home directory, as a shell would.
package func expandingTilde(_ path: String) -> String {
    guard path == "~" || path.hasPrefix("~/") else { return path }
    return homeDirectory() + path.dropFirst()
}

/// The user's home directory: `$HOME`, else the password database's.
package func homeDirectory() -> String {
    FileManager.default.homeDirectoryForCurrentUser.path
}

/// The directory a path names its file in, as `dirname` gives it without the `.`:
/// `/a/b/c` → `/a/b`, `/a` → `/`, `c` → the empty string.
public func parentDirectory(of path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
