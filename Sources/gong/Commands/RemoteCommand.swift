import ArgumentParser
import Glibc
import GongCore
import GongKit
import GongPractice
import GongRemote

struct RemoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Serve a page and a JSON API for phones on the network: sessions, bells, history.",
        discussion: """
            A process of its own, a client of the control sockets sessions and gong bells already \
            have: stopping it or a fault in it never stops a bell or a session. It listens on \
            127.0.0.1 unless given --listen. Every device pairs first: gong remote pair prints a \
            one-time code (5 minutes) to type on the phone; gong remote devices lists and revokes them. \
            See docs/remote.md for the API.

            Examples:
              gong remote --listen 0.0.0.0:8787
              gong remote pair --role view
              gong remote devices revoke "Anna's phone"
            """,
        subcommands: [RemoteServeCommand.self, RemotePairCommand.self, RemoteDevicesCommand.self],
        defaultSubcommand: RemoteServeCommand.self)

    /// Where paired devices and the waiting code are kept.
    static func store() -> RemoteStore { RemoteStore(directory: GongDirectories().state + "/remote") }
}

struct RemoteServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve the page and the API until stopped (the default).")

    @Option(
        help: ArgumentHelp("Address and port, e.g. 0.0.0.0:8787 (default: 127.0.0.1:8787).", valueName: "ADDR:PORT"))
    var listen: String?

    @Option(
        help: ArgumentHelp("Another name this box is reached by (repeatable), e.g. gong.example.", valueName: "NAME"))
    var name: [String] = []

    @Flag(
        help: ArgumentHelp(
            "Write a systemd user unit that runs gong remote with these flags, and enable and start it.",
            discussion:
                "The unit goes to $XDG_CONFIG_HOME/systemd/user/gong-remote.service; journalctl --user -u gong-remote shows its lines. loginctl enable-linger USER starts it at boot, before anyone logs in."
        ))
    var install = false

    @Flag(help: "Stop, disable and remove the unit --install wrote.")
    var uninstall = false

    /// Synchronous on purpose (as `gong bells`): no Swift task ever starts, so no worker pool
    /// and its timer; the event loop thread sleeps in epoll_wait.
    func run() throws {
        guard geteuid() != 0 else {
            printError(
                "remote: gong remote does not run as root; run it as the user whose sessions and bells it serves")
            throw ExitCode(ExitStatus.usage)
        }
        var configuration = RemoteConfiguration(
            store: RemoteCommand.store(), controlDirectory: ControlSockets.directory(),
            gongExecutable: RunningExecutable.path())
        if let listen, let problem = configuration.listen(listen) {
            throw fail(UsageError("remote --listen \(listen): \(problem)"))
        }
        if install && uninstall { throw fail(UsageError("remote: --install or --uninstall, not both")) }
        if install { return try Self.installUnit() }
        if uninstall { return try Self.uninstallUnit() }
        configuration.extraHostNames = name
        configuration.historyPath = SessionHistory.defaultPath()
        if let config = try? loadConfig() {
            configuration.showStreaks = config.showStreaks.value
            configuration.streakMinimumSeconds = config.streakMinimumSeconds.value
        }
        let server: RemoteServer
        do { server = try RemoteServer(configuration: configuration) } catch {
            printError("remote: \(error)")
            throw ExitCode(ExitStatus.unavailable)
        }
        let shown = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        print("remote: serving http://\(shown):\(server.port)/ ; pair a device with gong remote pair; Ctrl-C stops")
        fflush(nil)
        try server.wait()
    }

    /// Writes the unit with the flags this gong was given (checked above), then enables and starts
    /// it. Without a user manager (a container, no login session) the file stays and it says so.
    static func installUnit() throws {
        let path = RemoteUnit.path(configDirectory: GongDirectories().config)
        let arguments = CommandLine.arguments.dropFirst().drop { $0 != "remote" }.dropFirst().filter {
            $0 != "--install" && $0 != "serve"
        }
        if let problem = RemoteUnit.write(
            RemoteUnit.text(executable: RunningExecutable.path(), arguments: Array(arguments)), to: path)
        {
            printError("remote: \(problem); check the directory's permissions")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        print("remote: wrote \(path)")
        for step in [["daemon-reload"], ["enable", "--now", RemoteUnit.name]] {
            if let failure = RemoteUnit.systemctl(step) {
                printError(
                    "systemctl --user \(step.joined(separator: " ")): \(failure); the unit is written, "
                        + "start it with systemctl --user enable --now \(RemoteUnit.name) where a user manager runs")
                throw ExitCode(ExitStatus.unavailable)
            }
        }
        print("remote: enabled and started \(RemoteUnit.name); journalctl --user -u gong-remote shows its lines")
    }

    static func uninstallUnit() throws {
        let path = RemoteUnit.path(configDirectory: GongDirectories().config)
        // Stopping and disabling may fail for want of a user manager: the file goes regardless.
        _ = RemoteUnit.systemctl(["disable", "--now", RemoteUnit.name])
        guard access(path, F_OK) == 0 else {
            print("remote: no unit at \(path)")
            return
        }
        guard unlink(path) == 0 else {
            printError("remote: \(path) cannot be removed (\(String(cString: strerror(errno))))")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        _ = RemoteUnit.systemctl(["daemon-reload"])
        print("remote: removed \(path)")
    }
}

struct RemotePairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Print a one-time code (valid 5 minutes) that pairs one device with the remote.")

    @Option(help: "What the device may do: view, or control (default).")
    var role: String = "control"

    @Option(help: ArgumentHelp("The page's address to print (default: http://HOSTNAME.local:8787/).", valueName: "URL"))
    var url: String?

    func run() throws {
        guard let role = RemoteRole(rawValue: role) else {
            throw fail(UsageError("remote pair --role \(role): use view or control"))
        }
        let code: String
        do { code = try RemoteCommand.store().newPairingCode(role: role, now: Int64(time(nil))) } catch {
            printError("remote: \(error)")
            throw ExitCode(ExitStatus.cannotCreate)
        }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count)
        let address = url ?? "http://\(String(nulTerminated: host)).local:8787/"
        print("Open \(address) on the phone and enter the code:")
        print("")
        print("    \(code.prefix(4)) \(code.dropFirst(4))")
        print("")
        // For a camera: the address with the code after '#', which the page fills in and no
        // request carries (it stays out of any log).
        if isatty(STDOUT_FILENO) == 1, let drawn = QRCode(QRCode.pairingAddress(address, code: code)) {
            print("or scan it:")
            for line in drawn.terminalLines() { print(line) }
            print("")
        }
        print("It pairs one device (\(role.rawValue)) and lasts 5 minutes; gong remote devices lists them.")
    }
}

struct RemoteDevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the paired devices, or revoke one: gong remote devices revoke NAME|ID.")

    @Argument(help: "list (default) or revoke.")
    var action: String = "list"

    @Argument(help: "The device to revoke: its name or its id.")
    var device: String?

    func run() throws {
        let store = RemoteCommand.store()
        do {
            switch (action, device) {
            case ("list", nil):
                let devices = try store.devices()
                if devices.isEmpty { print("no device is paired; gong remote pair prints a code for one") }
                for device in devices {
                    print("\(device.id)  \(device.role.rawValue.padding(7))  \(device.name)")
                }
            case ("revoke", let name?):
                let removed = try store.revoke(name)
                guard !removed.isEmpty else {
                    printError("remote devices revoke \(name): no paired device has that name or id")
                    throw ExitCode(ExitStatus.usage)
                }
                for device in removed { print("revoked \(device.id) \(device.name)") }
            default:
                throw fail(UsageError("remote devices \(action): use list, or revoke NAME|ID"))
            }
        } catch let error as RemoteStoreError {
            printError("remote: \(error)")
            throw ExitCode(ExitStatus.dataError)
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
