import Glibc
import Synchronization

/// Signals for the live session's main loop.
public enum SignalEvent: Equatable, Sendable {
    /// Ctrl-C, `count` times since the last look: the first asks for a graceful stop, the
    /// second for an immediate one.
    case interrupt(count: Int)
    case terminate
    /// Ctrl-Z: pause, restore the terminal, then `SignalWatcher.stopProcess()`.
    case stopRequested
    /// `fg` after Ctrl-Z: redraw; the session stays paused.
    case continued
    case resized
    /// The terminal went away (an SSH connection dropped): carry on without it.
    case hangup
}

private let interrupts = Atomic<Int>(0)
private let terminations = Atomic<Int>(0)
private let stops = Atomic<Int>(0)
private let continues = Atomic<Int>(0)
private let resizes = Atomic<Int>(0)
private let hangups = Atomic<Int>(0)
/// The write end of a pipe the handlers poke, so `poll` wakes at once.
private let wakeDescriptor = Atomic<Int32>(-1)

/// Async-signal-safe: an atomic add and a write(2).
private func onSignal(_ number: Int32) {
    switch number {
    case SIGINT: interrupts.add(1, ordering: .relaxed)
    case SIGTERM: terminations.add(1, ordering: .relaxed)
    case SIGTSTP: stops.add(1, ordering: .relaxed)
    case SIGCONT: continues.add(1, ordering: .relaxed)
    case SIGWINCH: resizes.add(1, ordering: .relaxed)
    case SIGHUP: hangups.add(1, ordering: .relaxed)
    default: break
    }
    let descriptor = wakeDescriptor.load(ordering: .relaxed)
    if descriptor >= 0 {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }
}

/// Catches SIGINT, SIGTERM, SIGTSTP, SIGCONT, SIGWINCH and SIGHUP for the main loop. The
/// handlers only count; `take()` turns the counts into events.
public final class SignalWatcher {
    /// Poll this for readability to wake on a signal.
    public let wakeFileDescriptor: Int32
    private let writeEnd: Int32
    private var seen = (interrupts: 0, terminations: 0, stops: 0, continues: 0, resizes: 0, hangups: 0)
    private static let signals = [SIGINT, SIGTERM, SIGTSTP, SIGCONT, SIGWINCH, SIGHUP]

    public init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeFileDescriptor = ends[0]
        writeEnd = ends[1]
        wakeDescriptor.store(writeEnd, ordering: .relaxed)
        seen = (
            interrupts.load(ordering: .relaxed), terminations.load(ordering: .relaxed), stops.load(ordering: .relaxed),
            continues.load(ordering: .relaxed), resizes.load(ordering: .relaxed), hangups.load(ordering: .relaxed)
        )
        // A parent may have left these blocked (test runners, some service managers); a blocked
        // SIGTERM would never reach the handler.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in SignalWatcher.signals { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for number in SignalWatcher.signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { onSignal($0) }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Restores the default handlers.
    public func uninstall() {
        for number in SignalWatcher.signals { signal(number, SIG_DFL) }
        wakeDescriptor.store(-1, ordering: .relaxed)
    }

    deinit {
        close(wakeFileDescriptor)
        close(writeEnd)
    }

    /// What arrived since the last call.
    public func take() -> [SignalEvent] {
        var drained = [UInt8](repeating: 0, count: 64)
        while read(wakeFileDescriptor, &drained, 64) > 0 {}
        var events: [SignalEvent] = []
        let counts = (
            interrupts.load(ordering: .relaxed), terminations.load(ordering: .relaxed), stops.load(ordering: .relaxed),
            continues.load(ordering: .relaxed), resizes.load(ordering: .relaxed), hangups.load(ordering: .relaxed)
        )
        if counts.0 > seen.interrupts { events.append(.interrupt(count: counts.0 - seen.interrupts)) }
        if counts.1 > seen.terminations { events.append(.terminate) }
        if counts.2 > seen.stops { events.append(.stopRequested) }
        if counts.3 > seen.continues { events.append(.continued) }
        if counts.4 > seen.resizes { events.append(.resized) }
        if counts.5 > seen.hangups { events.append(.hangup) }
        seen = (counts.0, counts.1, counts.2, counts.3, counts.4, counts.5)
        return events
    }

    /// Stops this process the way Ctrl-Z would have (call after pausing and restoring the
    /// terminal). Returns after `fg`.
    public static func stopProcess() {
        raise(SIGSTOP)
    }
}
