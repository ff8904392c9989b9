import Dispatch

/// Runs the work of the tasks that prefer it on a serial dispatch queue of its own, off Swift's
/// cooperative pool. That pool has as many threads as cores (two on the machines gong is tested
/// on), and any caller that blocks one of them (a host's synchronous call, a test) can hold it
/// all: a task that must run for a session's end to be taken in then waits, for nothing, until
/// they let go. A dispatch queue's thread comes from libdispatch's own pool instead, which starts
/// another thread when those it has are blocked.
public final class QueueExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
