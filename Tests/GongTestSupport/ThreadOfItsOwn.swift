import Glibc
import Testing

/// For a test that spends its time waiting on the clock — a session paced in real time by a
/// device, a process it waits for — rather than computing: it runs on threads of its own instead
/// of Swift concurrency's shared ones. Swift Testing runs a test's body on that pool, which has as
/// many threads as the machine has cores; a test asleep in `poll` holds one the whole time, so on
/// a 2-core machine two such tests stop every other test, however little CPU they use. On threads
/// of their own they wait side by side, and the pool's threads go to the tests that compute. On a
/// suite it moves the suite's own running too (what starts each test of a serialized suite after
/// the one before), which would otherwise wait its turn on the pool between its tests.
public struct ThreadOfItsOwnTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadPerJob.shared) { try await function() }
    }
}

extension Trait where Self == ThreadOfItsOwnTrait {
    /// The test (or the suite, with every test in it) runs on threads of its own.
    public static var onThreadsOfItsOwn: Self { Self() }
}

/// An executor that runs each job on a new thread, which ends with it: a test's body is one job
/// until it awaits, so a blocking test occupies exactly its own thread.
final class ThreadPerJob: TaskExecutor {
    static let shared = ThreadPerJob()

    func enqueue(_ job: consuming ExecutorJob) {
        let (job, executor) = (UnownedJob(job), asUnownedTaskExecutor())
        detachThreadWithSignalsBlocked { job.runSynchronously(on: executor) }
    }
}

/// Runs `body` on a new thread of its own, which ends with it. The thread starts with every
/// signal blocked, as Swift concurrency's pool threads do: Foundation's `Process` learns of its
/// children's exits from SIGCHLD through libdispatch, which holds it only while no thread takes
/// it; a thread that took it would lose it (its default is to be ignored), and `waitUntilExit`
/// would wait forever.
public func detachThreadWithSignalsBlocked(_ body: @escaping @Sendable () -> Void) {
    final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    let context = Unmanaged.passRetained(Body(body))
    var thread = pthread_t()
    var all = sigset_t()
    var was = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_SETMASK, &all, &was)
    defer { pthread_sigmask(SIG_SETMASK, &was, nil) }
    let status = pthread_create(
        &thread, nil,
        { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context.toOpaque())
    precondition(status == 0, "a test's thread could not be started: \(String(cString: strerror(status)))")
    pthread_detach(thread)
}
