import Glibc

/// A way for one thread to wake another that sleeps in `poll`: a non-blocking pipe. Ringing
/// writes a byte (never blocks: a full pipe is ringing already); the sleeper watches
/// `descriptor` and, once woken, empties it. Allocates nothing after `init`.
///
/// `@unchecked Sendable`: it holds two descriptors set once in `init`, and `write`/`read` on a
/// pipe are safe from any thread; nothing else is shared.
public final class Doorbell: @unchecked Sendable {
    /// The end to watch for `POLLIN`.
    public let descriptor: Int32
    private let writer: Int32

    public init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        descriptor = ends[0]
        writer = ends[1]
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if writer >= 0 { close(writer) }
    }

    public func ring() {
        var byte: UInt8 = 1
        _ = write(writer, &byte, 1)
    }

    /// Empties the pipe behind `descriptor`: however often it was rung, once answers all.
    public static func drain(_ descriptor: Int32) {
        var bytes: (UInt64, UInt64) = (0, 0)
        while read(descriptor, &bytes, MemoryLayout.size(ofValue: bytes)) > 0 {}
    }

    public func drain() { Doorbell.drain(descriptor) }
}
