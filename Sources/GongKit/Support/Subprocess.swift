import Glibc
import GongCore

/// Another program run by gong (`systemctl`, `pactl`, `parec`), started with `posix_spawn`:
/// what Foundation's `Process` does, without the Foundation that brings ICU's data along.
///
/// Its standard input reads `/dev/null`; its output and errors go to `/dev/null`, to a pipe gong
/// reads, or where gong's own go. It leads a process group of its own unless told not to, so a
/// signal to the group reaches whatever it starts in turn (a shell's children); one that stays
/// in gong's group hears a Ctrl-C on gong's terminal as gong does. It can be handed one more
/// descriptor of gong's, at a number of its choosing. It starts with no signal blocked or ignored: a
/// process inherits the blocked signals of the thread that starts it, and Swift's worker threads
/// block them all (started from one, `parec` did not hear the SIGTERM meant to stop it).
public final class Subprocess: Sendable {
    /// Where one of its output streams goes.
    public enum Output: Sendable {
        case discarded
        /// To a pipe, read with `readOutput()` / `readErrors()`.
        case captured
        /// Where gong's own goes.
        case inherited
    }

    /// One of gong's descriptors, handed on as `number` in the new process: a copy made by
    /// `dup2`, open across the exec though gong's own is close-on-exec. `number` must differ from
    /// `descriptor` (a `dup2` onto itself copies nothing) and from the standard three.
    public struct HandedOn: Sendable {
        public var descriptor: Int32
        public var number: Int32
        public init(_ descriptor: Int32, as number: Int32) {
            self.descriptor = descriptor
            self.number = number
        }
    }

    /// Why it did not start: the C library's words for `posix_spawn`'s error (`No such file or
    /// directory`).
    public struct LaunchFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public let processIdentifier: pid_t
    private let outputPipe: Int32?
    private let errorsPipe: Int32?
    /// The wait status once it has been reaped.
    private let ended = Locked<Int32?>(nil)

    /// Starts `executable` (a path) with `arguments` and gong's environment.
    ///
    /// - Parameters:
    ///   - handingOn: a descriptor it is given besides the standard three.
    ///   - ownProcessGroup: false to leave it in gong's process group.
    public init(
        _ executable: String, _ arguments: [String], output: Output = .discarded, errors: Output = .discarded,
        handingOn handedOn: HandedOn? = nil, ownProcessGroup: Bool = true
    ) throws(LaunchFailure) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        // Every signal to its default action: one gong ignores (SIGPIPE) must not stay ignored.
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (ownProcessGroup ? POSIX_SPAWN_SETPGROUP : 0)))
        if let handedOn { posix_spawn_file_actions_adddup2(&actions, handedOn.descriptor, handedOn.number) }

        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var readEnds: [Int32] = []
        var writeEnds: [Int32] = []
        func route(_ output: Output, to descriptor: Int32) -> Int32? {
            if case .inherited = output { return nil }
            guard case .captured = output else {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
                return nil
            }
            var ends: [Int32] = [-1, -1]
            // Closed on exec, so no other program started meanwhile holds them open.
            guard pipe(&ends) == 0, fcntl(ends[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(ends[1], F_SETFD, FD_CLOEXEC) == 0
            else {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
                return nil
            }
            posix_spawn_file_actions_adddup2(&actions, ends[1], descriptor)
            readEnds.append(ends[0])
            writeEnds.append(ends[1])
            return ends[0]
        }
        outputPipe = route(output, to: 1)
        errorsPipe = route(errors, to: 2)

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        for end in writeEnds { close(end) }
        guard status == 0 else {
            for end in readEnds { close(end) }
            throw LaunchFailure(description: String(cString: strerror(status)))
        }
        processIdentifier = pid
    }

    deinit {
        if let outputPipe { close(outputPipe) }
        if let errorsPipe { close(errorsPipe) }
    }

    /// Everything it writes to its standard output, read until it closes it. Empty when the
    /// output was not captured. Call it once, from one thread.
    public func readOutput() -> [UInt8] { outputPipe.map(Self.readToEnd) ?? [] }

    /// Everything it writes to its standard error, as `readOutput()`.
    public func readErrors() -> [UInt8] { errorsPipe.map(Self.readToEnd) ?? [] }

    /// True until it has ended (it is reaped then).
    public var isRunning: Bool {
        ended.withLock { ended in
            guard ended == nil else { return false }
            var status: Int32 = 0
            let reaped = waitpid(processIdentifier, &status, WNOHANG)
            if reaped == processIdentifier || (reaped < 0 && errno == ECHILD) { ended = status }
            return ended == nil
        }
    }

    /// Waits for it to end; its exit status (`terminationStatus`).
    @discardableResult
    public func waitUntilExit() -> Int32 {
        while isRunning {
            var status: Int32 = 0
            if waitpid(processIdentifier, &status, 0) == processIdentifier {
                ended.withLock { $0 = $0 ?? status }
            } else if errno != EINTR {
                ended.withLock { $0 = $0 ?? 0 }
            }
        }
        return terminationStatus
    }

    /// Its exit status once it has ended, or the signal that ended it (as Foundation's `Process`
    /// says); 0 while it runs.
    public var terminationStatus: Int32 {
        guard let status = ended.withLock({ $0 }) else { return 0 }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import (they are macros).
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// True once it has ended by a signal (`terminationStatus` is then the signal's number).
    public var endedBySignal: Bool { ended.withLock { $0 }.map { $0 & 0x7f != 0 } ?? false }

    private static func readToEnd(_ descriptor: Int32) -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                return data
            }
        }
    }
}
