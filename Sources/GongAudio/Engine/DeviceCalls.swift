/// The audio thread's one way to its device: every `PCM` call the push loop makes goes through
/// here, and only these are not checked by the compiler.
///
/// Why not: the calls enter libasound, libpulse or gong's hand-off ring, which the checker
/// cannot see into, and on two sound-server routes they do allocate or lock inside the library
/// (what, how often and why that is accepted is on `PCM`). So each is vouched for here with
/// `_unsafePerformance`, and everything around them — the loop and every step it calls — carries
/// `@_noAllocation @_noLocks` and is checked. Opening and closing are not here: the control side
/// does both (`PlaybackEngine`).
///
/// Made on the control side when a device is handed to the audio thread: it reads the device's
/// configuration there (it holds a `String`, whose copy would count a reference), and keeps the
/// device without counting references either — a count is an atomic the checker takes for a
/// possible lock. The control side holds the device for as long as the audio thread may call it.
struct DeviceCalls: BitwiseCopyable {
    unowned(unsafe) let device: any PCM
    let format: SampleFormat
    let bufferFrames: Int
    let reportJitterNanoseconds: Int64
    let takesBack: Bool
    let heardAfterNanoseconds: Int64
    let reportsNeverEarly: Bool

    init(_ device: any PCM) {
        let configuration = device.configuration
        self.device = device
        format = configuration.format
        bufferFrames = configuration.bufferFrames
        reportJitterNanoseconds = configuration.reportJitterNanoseconds
        takesBack = configuration.takesBack
        heardAfterNanoseconds = configuration.heardAfterNanoseconds
        reportsNeverEarly = configuration.reportsNeverEarly
    }

    @_noAllocation @_noLocks
    func write(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        _unsafePerformance { device.writeInterleaved(bytes, frames: frames) }
    }

    @_noAllocation @_noLocks
    func wait(timeoutMs: Int32) -> Int32 {
        _unsafePerformance { device.wait(timeoutMs: timeoutMs) }
    }

    @_noAllocation @_noLocks
    func recover(_ error: Int32) -> Int32 {
        _unsafePerformance { device.recover(error) }
    }

    @_noAllocation @_noLocks
    func drain() -> Int32 {
        _unsafePerformance { device.drain() }
    }

    @_noAllocation @_noLocks
    func status() -> PCMStatus? {
        _unsafePerformance { device.status() }
    }

    @_noAllocation @_noLocks
    func rewindableFrames() -> Int {
        _unsafePerformance { device.rewindableFrames() }
    }

    @_noAllocation @_noLocks
    func rewind(frames: Int) -> Int {
        _unsafePerformance { device.rewind(frames: frames) }
    }

    @_noAllocation @_noLocks
    func wakeWhenReadable(_ descriptor: Int32) {
        _unsafePerformance { device.wakeWhenReadable(descriptor) }
    }

    @_noAllocation @_noLocks
    func silenceHeardFrames() -> Int64? {
        _unsafePerformance { device.silenceHeardFrames() }
    }

    @_noAllocation @_noLocks
    func clockStoppedNanoseconds() -> Int64? {
        _unsafePerformance { device.clockStoppedNanoseconds() }
    }

    @_noAllocation @_noLocks
    func takeLossFrame() -> Int64? {
        _unsafePerformance { device.takeLossFrame() }
    }
}

/// A device the control side opened again after a loss, on its way to the audio thread, and how
/// many attempts it took.
struct DeviceHandover: BitwiseCopyable {
    let calls: DeviceCalls
    let attempts: Int32
}
