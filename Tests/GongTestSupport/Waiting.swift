import Glibc
import GongAudio

/// How the tests wait for something to happen: on the descriptor the code offers when it has
/// one (an engine's event bell, a pipe, a socket, a process's pidfd), else by looking again after
/// a short and growing pause; either way up to a deadline generous enough for a loaded 2-core
/// machine, past which the test fails, saying what it waited for (`#expect(Waiting.until …,
/// "what")`). A fixed sleep in the hope that something has happened by then is slow on a calm
/// machine and flaky on a busy one; these return the moment it has.
public enum Waiting {
    /// A loaded machine's worst, not its usual: a deadline is where a test gives up, not a pace.
    public static let generousSeconds: Double = 60

    /// Sleeps until `descriptor` is readable, or `seconds` pass; true when it is readable.
    public static func readable(_ descriptor: Int32, seconds: Double = generousSeconds) -> Bool {
        let deadline = MonotonicTime.now().seconds + seconds
        var watch = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let left = max(0, deadline - MonotonicTime.now().seconds)
            let ready = poll(&watch, 1, Int32((left * 1000).rounded(.up)))
            if ready > 0 { return true }
            if ready == 0 || errno != EINTR { return false }
        }
    }

    /// Until `condition` holds, looked at again after 1 ms, then twice as long each time up to
    /// `longestPause` (what has no descriptor: a file written, a row committed; a longer pause for
    /// a look that costs, such as starting a process); false if `seconds` pass.
    public static func until(
        seconds: Double = generousSeconds, longestPause: Double = 0.05, _ condition: () throws -> Bool
    ) rethrows -> Bool {
        let deadline = MonotonicTime.now().seconds + seconds
        var pause = 0.001
        while true {
            if try condition() { return true }
            if MonotonicTime.now().seconds > deadline { return false }
            usleep(UInt32(pause * 1e6))
            pause = min(pause * 2, longestPause)
        }
    }

    /// `until` for a test that runs as a task: it gives its thread back while it waits.
    public static func until(
        seconds: Double = generousSeconds, longestPause: Double = 0.05, _ condition: () async throws -> Bool
    ) async rethrows -> Bool {
        let deadline = MonotonicTime.now().seconds + seconds
        var pause = 0.001
        while true {
            if try await condition() { return true }
            if MonotonicTime.now().seconds > deadline { return false }
            try? await Task.sleep(for: .seconds(pause))
            pause = min(pause * 2, longestPause)
        }
    }

    /// Sleeps until process `pid` has ended (without reaping it), or `seconds` pass; true when
    /// it has ended. Its pidfd turns readable when it ends; a process already reaped has ended.
    public static func ended(_ pid: pid_t, seconds: Double = generousSeconds) -> Bool {
        let descriptor = pidfdOpen(pid, 0)
        guard descriptor >= 0 else { return errno == ESRCH }
        defer { close(descriptor) }
        return readable(descriptor, seconds: seconds)
    }

    /// glibc's `pidfd_open` (2.36), whose header Swift's Glibc module does not bring in.
    private static let pidfdOpen: @convention(c) (pid_t, UInt32) -> Int32 = {
        guard let symbol = dlsym(nil, "pidfd_open") else {
            fatalError("glibc without pidfd_open (2.36 or later is needed)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (pid_t, UInt32) -> Int32).self)
    }()
}
