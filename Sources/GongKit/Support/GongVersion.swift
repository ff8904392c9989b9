import CGongBuild

/// Which gong this is: `gong --version`, the C ABI's `gong_version()` and the `started` event
/// all say `description`.
public enum GongVersion {
    /// The release number, set here and nowhere else: `make dist` names its files from it
    /// (scripts/version.sh reads this line), so a release is one edit and one tag `vNUMBER`.
    public static let number = "0.1.0"

    /// The commit built from, baked in at build time (see Sources/CGongBuild); nil when the
    /// build could not tell (`swift build` outside `make`, from a tree with no .git).
    public static let commit: String? = {
        let commit = String(cString: gong_build_commit())
        return commit.isEmpty ? nil : commit
    }()

    /// `0.1.0 (1a2b3c4d5e6f)`, or the number alone without a commit.
    public static let description = commit.map { "\(number) (\($0))" } ?? number
}
