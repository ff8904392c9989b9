import Glibc
import Testing

/// For a test that spends its time waiting on the clock — a session paced in real time by a
/// device, a process it waits for — rather than computing: each of its cases runs on a thread of
/// its own instead of one of Swift concurrency's shared threads. Swift Testing runs a test's body
/// on that pool, which has as many threads as the machine has cores; a test asleep in `poll` holds
/// one the whole time, so on a 2-core machine two such tests stop every other test, however
/// little CPU they use. On threads of their own they wait side by side, and the pool's threads go
/// to the tests that compute.
public struct ThreadOfItsOwnTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A suite is only a scope around its tests: each test case moves on its own.
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJob.shared) { try await function() }
    }
}

extension Trait where Self == ThreadOfItsOwnTrait {
    /// Each case of the test (or of every test in the suite) runs on a thread of its own.
    public static var onAThreadOfItsOwn: Self { Self() }
}

/// An executor that runs each job on a new thread, which ends with it: a test's body is one job
/// until it awaits, so a blocking test occupies exactly its own thread.
final class ThreadPerJob: TaskExecutor {
    static let shared = ThreadPerJob()

    private final class Work: Sendable {
        let job: UnownedJob
        let executor: UnownedTaskExecutor
        init(job: UnownedJob, executor: UnownedTaskExecutor) {
            self.job = job
            self.executor = executor
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let work = Unmanaged.passRetained(Work(job: UnownedJob(job), executor: asUnownedTaskExecutor()))
        var thread = pthread_t()
        let status = pthread_create(
            &thread, nil,
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                work.job.runSynchronously(on: work.executor)
                return nil
            }, work.toOpaque())
        precondition(status == 0, "a test's thread could not be started: \(String(cString: strerror(status)))")
        pthread_detach(thread)
    }
}
