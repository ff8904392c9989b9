#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A POSIX thread of gong's own, started at once and never joined: what the engine, the session
/// and the control channel run their loops on. Foundation's `Thread` would do the same, but it
/// comes with all of Foundation, and with it ICU's data, into every binary that links gong.
public enum DetachedThread {
    /// Starts `body` on a new thread. `name` (at most 15 bytes are kept: the kernel's limit) is
    /// what `top -H` and a debugger show; `stackSize` in bytes, nil for the system's default.
    /// Nil `name` leaves the naming to the thread itself (the audio thread names itself once its
    /// priority is set).
    public static func start(name: String? = nil, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        let status = create(context, stackSize: stackSize)
        // Out of threads or memory: nothing gong could go on without, as Foundation's `Thread` too.
        precondition(status == 0, "gong: cannot start a thread (pthread_create: \(status))")
    }

    private static func create(_ context: UnsafeMutableRawPointer, stackSize: Int?) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, runDetachedThread, context)
        pthread_attr_destroy(&attributes)
        return status
    }

    /// Names the calling thread, cut to the kernel's 15 bytes on a character boundary. Through
    /// `/proc` (the C library's `pthread_setname_np` is not in Swift's Glibc module).
    public static func setName(_ name: String) {
        var cut = Substring(name)
        while cut.utf8.count > 15 { cut.removeLast() }
        let comm = open("/proc/thread-self/comm", O_WRONLY)
        guard comm >= 0 else { return }
        _ = String(cut).withCString { write(comm, $0, strlen($0)) }
        close(comm)
    }

    fileprivate final class Start: @unchecked Sendable {
        let name: String?
        let body: @Sendable () -> Void
        init(name: String?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// The new thread's entry: names it, runs its body, and lets go of what `start` retained.
private func runDetachedThread(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<DetachedThread.Start>.fromOpaque(context!).takeRetainedValue()
    if let name = start.name { DetachedThread.setName(name) }
    start.body()
    return nil
}
