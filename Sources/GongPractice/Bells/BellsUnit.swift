import FoundationEssentials
import GongKit

/// The systemd user unit `gong bells --install` writes: the bells as a service that starts with
/// the person's session and comes back after a crash, logging to the journal.
public enum BellsUnit {
    public static let name = "gong-bells.service"

    /// `$XDG_CONFIG_HOME/systemd/user/gong-bells.service`, where systemd looks for a user's own units.
    public static func path(_ directories: GongDirectories = GongDirectories()) -> String {
        parentDirectory(of: directories.config) + "/systemd/user/" + name
    }

    /// The unit running `executable bells ARGUMENTS`; each argument quoted for systemd's
    /// command line, so a value with a space or a `%` arrives as given.
    public static func text(executable: String, arguments: [String]) -> String {
        let command = ([executable, "bells"] + arguments).map(quoted).joined(separator: " ")
        return """
            # Written by gong bells --install; gong bells --uninstall removes it.
            [Unit]
            Description=gong bells: mindfulness bells through the day
            After=sound.target pipewire.service pulseaudio.service

            [Service]
            Type=exec
            ExecStart=\(command)
            # A sound server that is not up yet, or a crash: try again rather than go quiet all day.
            Restart=on-failure
            RestartSec=30

            [Install]
            WantedBy=default.target

            """
    }

    /// One word of `ExecStart=`: as it is when plain, else in double quotes with `"` and `\`
    /// escaped; `%` is doubled either way (systemd's specifier character).
    static func quoted(_ word: String) -> String {
        let escaped = word.replacing("%", with: "%%")
        let plain = !escaped.isEmpty && escaped.allSatisfy { !$0.isWhitespace && !"\"'\\;$".contains($0) }
        if plain { return escaped }
        return "\"" + escaped.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            + "\""
    }
}
