import CGongTimer
import Glibc

/// The one wait `gong bells` makes between bells: a timer on the wall clock set for the next
/// wake, so the process sleeps in the kernel without a single periodic wake-up.
///
/// The timer is a `timerfd` on CLOCK_REALTIME with an absolute expiry: a suspend that outlasts it
/// fires it on resume, and `TFD_TIMER_CANCEL_ON_SET` wakes the wait when the wall clock is set
/// (NTP, a person), so a clock step reschedules at once instead of waiting out a stale timer. It
/// is a file descriptor, so the wait can watch signals and a control socket beside it.
public final class BellAlarm {
    /// Why a wait ended.
    public enum Wake: Sendable, Equatable {
        /// The timer expired.
        case due
        /// The wall clock was set while waiting.
        case clockSet
        /// One of the other descriptors is readable.
        case readable(Int32)
    }

    public let descriptor: Int32

    /// Nil when the kernel refuses a timer (the process is out of descriptors).
    public init?() {
        let descriptor = gong_timer_create()
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sleeps until the wall clock reaches `wall` (nanoseconds since 1970), the clock is set, or
    /// one of `others` becomes readable.
    public func wait(untilWall wall: Int64, watching others: [Int32]) -> Wake {
        // A moment already past still arms the timer (zero would disarm it): it fires at once.
        let target = max(wall, 1)
        let armed = gong_timer_arm(descriptor, target / 1_000_000_000, Int(target % 1_000_000_000)) == 0
        // Never refused for a valid moment; if it were, a plain timeout still wakes in time
        // (though late after a suspend), rather than a loop that never sleeps.
        let timeout = armed ? -1 : Int32(clamping: max(0, (target - Self.clocks().wall) / 1_000_000))
        var descriptors = [pollfd(fd: descriptor, events: Int16(armed ? POLLIN : 0), revents: 0)]
        descriptors += others.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 {
            guard errno == EINTR else { return .due }
        }
        if !armed { return descriptors.dropFirst().first(where: { $0.revents != 0 }).map { .readable($0.fd) } ?? .due }
        if let other = descriptors.dropFirst().first(where: { $0.revents != 0 }) { return .readable(other.fd) }
        var expirations: UInt64 = 0
        // ECANCELED: the wall clock was set while the timer was armed.
        return read(descriptor, &expirations, 8) < 0 && errno == ECANCELED ? .clockSet : .due
    }

    /// The three clocks now.
    public static func clocks() -> BellClocks {
        func read(_ clock: clockid_t) -> Int64 {
            var stamp = timespec()
            clock_gettime(clock, &stamp)
            return Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
        }
        return BellClocks(
            wall: read(CLOCK_REALTIME), boot: read(CLOCK_BOOTTIME), monotonic: read(CLOCK_MONOTONIC))
    }
}
