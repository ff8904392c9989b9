import ArgumentParser
import Glibc
import GongCore
import GongKit
import GongPractice
import GongTerminal

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Carry on with a session whose process died.",
        discussion: """
            While a session plays, gong keeps a snapshot of where it stands in \
            $XDG_STATE_HOME/gong/sessions/. If its process dies (killed, a power loss), this \
            plays the rest of the newest unfinished one from there: paused until you press \
            space, or at once with --now (for use without a terminal). The device is the one it \
            played on unless --device says otherwise.
            """)

    @Flag(help: "Carry on at once, without waiting for a key.")
    var now = false

    @OptionGroup var live: LiveOptions
    @OptionGroup var volume: VolumeOption

    func run() async throws { try await exiting { try await resume() } }

    private func resume() async throws -> Int32 {
        let (unfinished, setAside) = SnapshotStore().unfinished()
        for aside in setAside { printError(aside.description) }
        guard let snapshot = unfinished.first else {
            printError("no unfinished session to resume")
            return ExitStatus.noInput
        }
        guard now || live.control == .stdin || TerminalScreen.isTerminal(STDIN_FILENO) else {
            throw UsageError("resume: no terminal to wait on for the go-ahead; use --now to carry on at once")
        }
        // The device it played on, unless a flag names another.
        var live = live
        if live.deviceFlag == nil { live.deviceFlag = snapshot.device }
        let settings = try PlaySettings(live: live, volume: volume)
        let config = settings.config
        if unfinished.count > 1 {
            printError("\(unfinished.count - 1) more unfinished after this one; gong resume again for them")
        }
        return try await LivePlayer.play(
            snapshot.pattern, options: settings.live, bank: .standard(extra: config.soundDirectories.value),
            volume: settings.volume,
            parameters: snapshot.parameters, boundary: config.dayStartsAt.value,
            resuming: now ? .now(snapshot) : .whenAsked(snapshot))
    }
}
