import Glibc

/// The systemd user unit `gong remote --install` writes: the remote as a service that starts
/// with the person's session (or at boot, with lingering) and comes back after a crash, logging
/// to the journal, as `gong bells --install` does for the bells.
public enum RemoteUnit {
    public static let name = "gong-remote.service"

    /// `$XDG_CONFIG_HOME/systemd/user/gong-remote.service` for this config directory
    /// (`$XDG_CONFIG_HOME/gong`).
    public static func path(configDirectory: String) -> String {
        let base = configDirectory.hasSuffix("/gong") ? String(configDirectory.dropLast(5)) : configDirectory
        return base + "/systemd/user/" + name
    }

    /// The unit running `executable remote ARGUMENTS`, each argument quoted for systemd.
    public static func text(executable: String, arguments: [String]) -> String {
        let command = ([executable, "remote"] + arguments).map(quoted).joined(separator: " ")
        return """
            # Written by gong remote --install; gong remote --uninstall removes it.
            [Unit]
            Description=gong remote: the page and API phones run gong with

            [Service]
            Type=exec
            ExecStart=\(command)
            # An address not yet up at login (--listen 192.168.1.20:8787), or a crash: try again.
            Restart=on-failure
            RestartSec=5
            NoNewPrivileges=yes

            [Install]
            WantedBy=default.target

            """
    }

    /// One word of `ExecStart=`: plain, or in double quotes with `"` and `\` escaped; `%` doubled.
    static func quoted(_ word: String) -> String {
        var escaped = ""
        for character in word { escaped += character == "%" ? "%%" : String(character) }
        let plain = !escaped.isEmpty && escaped.allSatisfy { !$0.isWhitespace && !"\"'\\;$".contains($0) }
        if plain { return escaped }
        var text = "\""
        for character in escaped {
            if character == "\\" || character == "\"" { text += "\\" }
            text.append(character)
        }
        return text + "\""
    }

    /// Writes `text` to `path` (making its directories), 0644; nil when done, else why not.
    public static func write(_ text: String, to path: String) -> String? {
        var directory = ""
        for part in path.split(separator: "/").dropLast() {
            directory += "/" + part
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                return "\(directory): \(String(cString: strerror(errno)))"
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return "\(path): \(String(cString: strerror(errno)))" }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        return written == bytes.count ? nil : "\(path): cannot be written"
    }

    /// Runs `systemctl --user ARGUMENTS` and waits; nil when it succeeded, else its first line
    /// of complaint.
    public static func systemctl(_ arguments: [String]) -> String? {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return "no pipe" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], STDERR_FILENO)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        let argv = (["systemctl", "--user"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "systemctl", &actions, nil, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { return "cannot be run" }
        var said: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = read(pipe[0], &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            said += chunk[0..<count]
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status != 0 else { return nil }
        let line = String(decoding: said, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return line.isEmpty ? "exit \((status >> 8) & 0xff)" : line
    }
}
