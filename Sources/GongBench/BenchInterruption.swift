import GongCore

/// A request to end a benchmark early, made from another thread (the CLI's, on Ctrl-C). What a
/// benchmark waits on — a child process, a playing session — is registered with how to end it,
/// so a request takes effect at once rather than at the next look; the benchmark then cleans up
/// what it made (its null sink, the tools it started) on its way out.
public final class BenchInterruption: Sendable {
    private struct State {
        var requested = false
        var endings: [Int: @Sendable () -> Void] = [:]
        var nextKey = 0
    }

    private let state = Locked(State())

    public init() {}

    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Ends what is being waited on. The endings run under the lock, so none runs after its
    /// wait is over (a process reaped, its number reused).
    public func request() {
        state.withLock { state in
            guard !state.requested else { return }
            state.requested = true
            for ending in state.endings.values { ending() }
        }
    }

    /// Runs `body`, calling `ending` if a request comes while it runs, or came before.
    func whileWaiting<T, Failure: Error>(
        endedBy ending: @escaping @Sendable () -> Void, _ body: () throws(Failure) -> T
    ) throws(Failure) -> T {
        let key = state.withLock { state in
            let key = state.nextKey
            state.nextKey += 1
            state.endings[key] = ending
            if state.requested { ending() }
            return key
        }
        defer { _ = state.withLock { $0.endings.removeValue(forKey: key) } }
        return try body()
    }
}
