import Dispatch
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import Synchronization

/// cyclictest's measurement beside the audio thread: a thread at the audio thread's priority
/// sleeps to absolute CLOCK_MONOTONIC deadlines a millisecond apart and records how late it
/// woke. It says what the machine's scheduler does to a thread of that priority, whatever the
/// route — where the audio thread's own wake-ups, through a sound server, follow the server's
/// requests rather than a grid of their own.
final class TimerLatency: @unchecked Sendable {
    static let intervalNanoseconds: Int64 = 1_000_000
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Written by the probe thread alone until `stop` has waited for it.
    private var recorder = DistributionRecorder()

    /// Starts the thread at `priority` (none: the default).
    init(priority: ThreadPriority?) {
        DetachedThread.start(stackSize: 1 << 20) { [self] in
            if let priority { _ = priority.apply() }
            var deadline = MonotonicTime.now().nanoseconds
            while !stopping.load(ordering: .relaxed) {
                deadline += TimerLatency.intervalNanoseconds
                var wake = timespec(
                    tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
                let late = MonotonicTime.now().nanoseconds - deadline
                recorder.record(nanoseconds: late)
                // A thread that fell behind (a stopped machine) starts a new grid, as cyclictest does.
                if late > 100 * TimerLatency.intervalNanoseconds { deadline = MonotonicTime.now().nanoseconds }
            }
            finished.signal()
        }
    }

    /// Stops the thread and returns what it measured.
    func stop() -> Distribution {
        if !stopping.exchange(true, ordering: .relaxed) { finished.wait() }
        return recorder.summary
    }
}
