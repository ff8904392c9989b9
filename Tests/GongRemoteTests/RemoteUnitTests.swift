import Glibc
import GongCore
import Testing

@testable import GongRemote

@Suite("gong remote --install's unit")
struct RemoteUnitTests {
    /// The unit runs this gong's remote with the flags as given (a value with a space or a `%`
    /// quoted for systemd), and systemd-analyze finds nothing wrong with it.
    @Test func theUnitRunsTheRemoteWithItsFlagsAndSystemdVerifiesIt() throws {
        let text = RemoteUnit.text(
            executable: gongExecutable, arguments: ["--listen", "0.0.0.0:8787", "--name", "gong box", "--name", "50%"])
        #expect(
            text.contains(
                "\nExecStart=\(gongExecutable) remote --listen 0.0.0.0:8787 --name \"gong box\" --name 50%%\n"))
        var template = Array("/tmp/gong-remote-unit-XXXXXX".utf8CString)
        let directory = String(cString: mkdtemp(&template))
        defer { _ = "rm -rf '\(directory)'".withCString { system($0) } }
        let path = RemoteUnit.path(configDirectory: directory + "/config/gong")
        #expect(path == directory + "/config/systemd/user/gong-remote.service")
        #expect(RemoteUnit.write(text, to: path) == nil)
        guard access("/usr/bin/systemd-analyze", X_OK) == 0 else {
            Issue.record("systemd-analyze is needed: scripts/install-deps.sh test installs systemd")
            return
        }
        // systemd-analyze --user wants a runtime directory of the user's.
        mkdir(directory + "/run", 0o700)
        let command = "XDG_RUNTIME_DIR='\(directory)/run' /usr/bin/systemd-analyze --user verify '\(path)' 2>&1"
        guard let pipe = popen(command, "r") else { return }
        var output = ""
        var line = [CChar](repeating: 0, count: 1024)
        while fgets(&line, Int32(line.count), pipe) != nil { output += String(nulTerminated: line) }
        #expect(pclose(pipe) == 0 && output.isEmpty, "\(output)")
    }
}
