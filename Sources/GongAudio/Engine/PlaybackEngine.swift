import Dispatch
import Glibc
import GongCore
import Synchronization

/// Plays a session on a device from one real-time thread.
///
/// The thread owns the renderer (`PushLoop`). Each period it takes the control side's
/// commands from a lock-free ring, renders one period into a buffer allocated up front, converts
/// it to the device's format, writes it, and reports what happened — with the CLOCK_MONOTONIC
/// time each event is heard, from the device's status — through a second ring. It allocates
/// nothing and takes no locks once it plays, and the compiler checks it (`PushLoop`); its system
/// calls are the device's and the doorbells'.
///
/// Faults: an underrun (`-EPIPE`, or a gap seen in the device's timestamps) is recovered and the
/// session clock moved on by the frames lost, so later cues stay on schedule; a suspend is
/// recovered; a device that is gone (`-ENODEV`, `-EIO`, `-EAGAIN` or timeouts for the stall
/// limit) is let go and reported. What follows is the session state machine's to decide
/// (`SessionMachine`'s device-loss policy), and the control side carries it out through this
/// engine: `closeLostDevice`, `reopenLostDevice` (which hands the new device to the audio thread
/// through a lock-free ring) and the commands it sends. The audio thread never opens or closes
/// a device: both may allocate, lock and wait on a server.
///
/// Taking back: on a device that can replace what it has not played yet (gong's PulseAudio
/// client), the buffer is long — few wake-ups, a busy machine survived — and a command is not
/// made to wait behind it. The renderer's state is kept at every step of
/// `PushLoop.takeBackStepSeconds`; a command rings the audio thread awake, which takes back what
/// is still out of the device's reach, goes back to the checkpoint there, applies the command,
/// and renders again. The renderer's events are held until they are out of reach too, so the
/// control side never hears of a cue that was taken back.
///
/// What the audio thread must never call once it plays:
/// - `malloc`, `free`, or anything that may: Swift arrays, strings, classes, closures that
///   capture, `print`, string interpolation, `Data`, Foundation;
/// - a lock: `Mutex`, `NSLock`, `DispatchQueue.sync`, a semaphore's `wait`, `pthread_mutex_*`;
/// - a device's open or close, the file system, the network, logging, or `poll` on anything but
///   the device and the command doorbell;
/// - the Swift runtime's slow paths: `as?` to an existential, a generic not specialised,
///   `Task`, actors, `await`;
/// - anything without a bound on how long it takes: unbounded loops, sleeps other than the
///   device's wait (or, with no device, the command doorbell's).
/// It talks to the control side only through the lock-free rings, the doorbells and atomics,
/// and its whole loop is compiled with `@_noAllocation @_noLocks`, which makes the compiler
/// refuse most of the above; the device's own calls are vouched for in one place
/// (`DeviceCalls`), and what they cost is on `PCM`.
///
/// `@unchecked Sendable`: the loop belongs to the audio thread alone once it runs (the control
/// side touches it only before `start` and after `join`); the devices belong to the control
/// side, which holds them (`device`) for as long as the audio thread may call one; everything
/// else the two sides share is a lock-free ring, a doorbell or an atomic.
public final class PlaybackEngine<Device: PCM>: @unchecked Sendable {
    public typealias DeviceOpener = @Sendable () throws(AudioDeviceError) -> Device

    /// The command ring (sent with `send`, which also wakes the audio thread, whose device wait
    /// watches the command bell), the event ring and its bell, and the steps of the real-time
    /// path `PullEngine` takes too.
    private let link = EngineLink()
    private var commands: SPSCRing<RenderCommand> { link.commands }
    /// Audio → control; `eventsReadyDescriptor` turns readable when something was put here.
    public var events: SPSCRing<EngineEvent> { link.events }
    private var eventBell: Doorbell { link.eventBell }

    private let loop: UnsafeMutablePointer<PushLoop>
    /// Control → audio: a device opened again after a loss.
    private let handovers = SPSCRing<DeviceHandover>(minimumCapacity: 2)
    private let shared = PushShared()
    /// The control side's hold on the device the audio thread plays, or has let go of after a
    /// loss until it is closed: the one reference, so a device is freed on this side too.
    /// Guarded by `devicesLock` (the loss's effects and the reopening thread both reach it).
    private var device: Device?
    private let devicesLock = Locked(())
    private let reopen: DeviceOpener
    private let firstConfiguration: PCMConfiguration
    private let done = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let reopening = Atomic<Bool>(false)
    private let threadID = Atomic<Int32>(0)
    /// Where each period's timing goes when someone measures it (see `PeriodTiming`).
    private let timing: SPSCRing<PeriodTiming>?

    /// - Parameters:
    ///   - renderer: the session; must be at the device's rate and channel count.
    ///   - device: an open device.
    ///   - reopen: opens the same device again after it was lost (`reopenLostDevice`).
    ///   - timing: a ring that takes a `PeriodTiming` for every period played, for a measurement;
    ///     a full ring loses the period's record (counted in `timingRecordsLost`), never waits.
    public init(
        renderer: consuming SessionRenderer, device: Device, reopen: @escaping DeviceOpener,
        timing: SPSCRing<PeriodTiming>? = nil
    ) {
        let configuration = device.configuration
        precondition(
            configuration.rate == renderer.sampleRate && configuration.channels == renderer.channels,
            "the renderer must be prepared at the device's rate and channel count")
        firstConfiguration = configuration
        self.device = device
        self.reopen = reopen
        self.timing = timing
        loop = .allocate(capacity: 1)
        loop.initialize(
            to: PushLoop(
                renderer: renderer, device: DeviceCalls(device), periodFrames: configuration.periodFrames, link: link,
                handovers: handovers, shared: shared, timing: timing))
    }

    deinit {
        loop.deinitialize(count: 1)
        loop.deallocate()
    }

    /// The session frame the audio thread has rendered to (ahead of what is heard by up to the
    /// device's buffer), as of its latest block.
    public var renderedSessionFrame: Int64 { link.rendered.latest }

    /// Sends a command to the audio thread and wakes it. False when the ring is full (the
    /// audio thread is not taking commands).
    @discardableResult
    public func send(_ command: RenderCommand) -> Bool {
        link.send(command)
    }

    /// Commands sent and not yet taken by the audio thread (at most this many; it takes them
    /// once a period), of `commandCapacity`. Read by the sender, the ring's one producer.
    public var pendingCommands: Int { commands.approximateCount }
    public var commandCapacity: Int { commands.capacity }

    /// Readable when the audio thread has reported something since `clearEventsReady`.
    public var eventsReadyDescriptor: Int32 { eventBell.descriptor }

    /// Call before taking the events a wake-up announced.
    public func clearEventsReady() { eventBell.drain() }

    public var isRunning: Bool { running.load(ordering: .acquiring) }
    /// Periods written to the device so far (for monitoring and benchmarks).
    public var periodsPlayed: Int { shared.periods.load(ordering: .relaxed) }
    /// The audio thread's kernel thread id once it runs (0 before): where /proc keeps its CPU
    /// time and scheduling, for monitoring and tests.
    public var audioThreadID: Int32 { threadID.load(ordering: .acquiring) }
    /// Periods whose `PeriodTiming` found the timing ring full.
    public var timingRecordsLost: Int { shared.timingLost.load(ordering: .relaxed) }

    /// Starts the audio thread.
    public func start() {
        running.store(true, ordering: .releasing)
        // Named by the thread itself, once its priority is set (see `audioThread`).
        DetachedThread.start(stackSize: 1 << 20) { [self] in
            audioThread()
            done.signal()
        }
    }

    /// Waits for the audio thread to finish, then closes the device it played: here, on the
    /// control side, rather than wherever the engine's last reference happens to go.
    public func join() {
        done.wait()
        done.signal()  // later joins return at once
        devicesLock.withLock { _ in device?.close() }
    }

    // MARK: A lost device, on the control side

    /// Closes the device the audio thread reported lost: never on the audio thread, which let go
    /// of it before it told. Nothing to do while it plays one (a finished session's device is
    /// closed by `join`, once the thread has ended).
    ///
    /// The close runs on a thread of its own that nobody waits for. A lost device's close talks
    /// to a server that may be gone, and may never return: libjack's `jack_client_close` once
    /// blocked for good on a mutex of its own after the JACK server restarted. Its caller holds
    /// the session's lock, and the reopening and every status request must go on without it.
    public func closeLostDevice() {
        let lost: LostDevice? = devicesLock.withLock { _ in
            guard shared.deviceLetGo.load(ordering: .acquiring), let device else { return nil }
            self.device = nil
            return LostDevice(device: device)
        }
        guard let lost else { return }
        DetachedThread.start(name: "gong close") { lost.device.close() }
    }

    /// A lost device on its way to the thread that closes it: no one else holds it any more.
    private struct LostDevice: @unchecked Sendable { let device: Device }

    /// Opens the lost device again on a thread of the control side's, waiting
    /// `SessionMachine.DeviceLoss.retryDelayMilliseconds` before each attempt — sleeping — until
    /// one opens at the session's rate and channel count, which is handed to the audio thread,
    /// or the session has ended. A call while it tries does nothing.
    public func reopenLostDevice() {
        guard isRunning, !reopening.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DetachedThread.start(name: "gong reopen") { [self] in
            defer { reopening.store(false, ordering: .releasing) }
            var attempt = 0
            while true {
                attempt += 1
                guard
                    sleepWhileRunning(
                        milliseconds: SessionMachine.DeviceLoss.retryDelayMilliseconds(beforeAttempt: attempt))
                else { return }
                guard let device = try? reopen() else { continue }
                guard device.configuration.rate == firstConfiguration.rate,
                    device.configuration.channels == firstConfiguration.channels
                else {
                    device.close()
                    continue
                }
                handOver(device, attempts: Int32(clamping: attempt))
                return
            }
        }
    }

    /// Sleeps for `milliseconds`, or until the audio thread has ended (a stop while the device
    /// was gone), whichever comes first: false once it has ended, so no more attempts are made.
    /// It waits on `done`, which the thread signals as it ends, and gives the signal back for
    /// `join`; the thread signals it after its real-time loop, never within it.
    private func sleepWhileRunning(milliseconds: Int) -> Bool {
        guard done.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return isRunning }
        done.signal()
        return false
    }

    /// Holds the new device on this side, then hands it to the audio thread and wakes it.
    private func handOver(_ device: Device, attempts: Int32) {
        devicesLock.withLock { _ in
            self.device = device
            shared.deviceLetGo.store(false, ordering: .releasing)
        }
        if handovers.tryPush(DeviceHandover(calls: DeviceCalls(device), attempts: attempts)) {
            link.commandBell.ring()
        }
    }

    // MARK: The audio thread

    private func audioThread() {
        // The bell rings once more when the thread has ended, so a control side that sleeps on
        // it learns that `isRunning` turned false without looking again later.
        defer {
            running.store(false, ordering: .releasing)
            eventBell.ring()
        }
        // Signals are the control side's business: keep them off this thread, whose every
        // system call is the device's.
        var blocked = sigset_t()
        sigfillset(&blocked)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Its priority first: whoever finds the thread by its name finds it at that priority.
        requestPriority(for: firstConfiguration)
        // Named for `top -H`, and its id published for whoever watches it. The id allocates:
        // before the first period.
        let comm = open("/proc/thread-self/comm", O_WRONLY)
        if comm >= 0 {
            _ = write(comm, "gong audio", 10)
            close(comm)
        }
        threadID.store(kernelThreadID(), ordering: .releasing)
        loop.pointee.run()
    }

    /// Asks once, for the first device, and says so if refused.
    private func requestPriority(for configuration: PCMConfiguration) {
        guard let priority = ThreadPriority.suited(to: configuration) else { return }
        let refusal = priority.apply()
        if refusal != 0 { link.audioSide.report(.priorityRefused(priority, code: refusal)) }
    }
}
