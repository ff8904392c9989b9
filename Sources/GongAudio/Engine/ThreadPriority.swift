import Glibc

/// How the audio thread asks to be scheduled ahead of other work — the one place that decides.
///
/// A thread that feeds a sound card's buffer itself asks for SCHED_FIFO: nothing else may run
/// before it when a period is due. A thread that hands its audio to a sound server (PulseAudio,
/// PipeWire, JACK, through their ALSA plugins) does not: there the server's own thread is the
/// real-time one, and the audio crosses the plugin's client thread, which is not real-time.
/// A SCHED_FIFO thread in front of it preempts it on every period and contends with it for the
/// plugin's lock, which cost CPU and, under load, put cues off their frames. So both threads get
/// a raised nice value instead (the plugin's thread inherits it: see `whileOpening`). Not raising
/// at all, as the server's other clients do, saves a little CPU on an idle machine but lets a
/// busy one push cues off their frames. The runs that showed both: bench/RESULTS.md, "The audio
/// thread's priority".
/// gong's own PulseAudio client (`PulsePCM`) has no plugin thread: there the audio thread is the
/// server's client and takes the same raised nice value.
public enum ThreadPriority: Equatable, Sendable, BitwiseCopyable {
    /// SCHED_FIFO at `realtimeLevel`.
    case realtime
    /// SCHED_OTHER at nice `raisedNice`.
    case raised

    public static let realtimeLevel: Int32 = 70
    /// PulseAudio's own nice value for its threads when it cannot be real-time is −11.
    public static let raisedNice: Int32 = -10

    /// What a thread feeding this device should ask for; nil for a device that never makes it
    /// wait (ALSA's `null`): a real-time thread that never sleeps would take a core from
    /// everything else, its own session's control side included.
    public static func suited(to configuration: PCMConfiguration) -> ThreadPriority? {
        guard configuration.paced else { return nil }
        return configuration.soundServer ? .raised : .realtime
    }

    /// Asks for this priority for the calling thread. Returns 0, or the errno when refused
    /// (an unprivileged user usually may do neither).
    public func apply() -> Int32 {
        switch self {
        case .realtime:
            var parameters = sched_param()
            parameters.sched_priority = min(sched_get_priority_max(SCHED_FIFO), ThreadPriority.realtimeLevel)
            return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        case .raised:
            return ThreadPriority.setNice(ThreadPriority.raisedNice)
        }
    }

    /// Runs `body` at raised priority, then puts the calling thread's nice value back. Threads
    /// started meanwhile keep it: opening a sound server's device starts the plugin's client
    /// thread, which carries every period to the server and must not wait behind ordinary work.
    static func whileOpening<T>(_ body: () throws(AudioDeviceError) -> T) throws(AudioDeviceError) -> T {
        errno = 0
        let previous = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let raised = errno == 0 && previous > raisedNice && setNice(raisedNice) == 0
        defer { if raised { _ = setNice(previous) } }
        return try body()
    }

    /// On Linux the nice value belongs to the thread, and `who` 0 is the calling thread.
    private static func setNice(_ value: Int32) -> Int32 {
        setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, value) == 0 ? 0 : errno
    }
}

/// The calling thread's kernel id (the last part of /proc/thread-self): what `top -H` shows and
/// where /proc keeps the thread's CPU time. The audio thread publishes its own
/// (`PlaybackEngine.audioThreadID`); tests compare others with it. It allocates: never on the
/// audio thread once it plays.
public func kernelThreadID() -> Int32 {
    var link = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &link, link.count - 1)
    let path = String(decoding: link.prefix(max(0, length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.split(separator: "/").last.flatMap { Int32($0) } ?? 0
}
