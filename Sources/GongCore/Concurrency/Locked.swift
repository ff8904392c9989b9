#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value that several control-side threads share, reached only under its lock. Never taken on
/// the audio thread: the real-time path talks through lock-free rings instead.
///
/// Why not the standard library's `Mutex`: on Linux it is a priority-inheriting futex, and when
/// two threads contend for it the kernel hands the lock from one to the other. The thread
/// sanitizer sees no acquire in that hand-over, so it reports races on state the lock does
/// protect (a `make test` run failed on one). A POSIX mutex is one the sanitizer understands, so
/// its reports stay worth reading; no state here is shared with a real-time thread, which is
/// where priority inheritance would matter.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. `body` must not take this lock again.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
