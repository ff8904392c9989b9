/// One period as the audio thread lived it, for whoever measures the real-time path (`gong bench
/// jitter`): plain numbers the thread posts through a ring of its own, so measuring adds three
/// clock reads and a ring push per period — no allocation, no lock — and the arithmetic is done
/// on the control side. All times are CLOCK_MONOTONIC nanoseconds.
public struct PeriodTiming: BitwiseCopyable, Sendable, Equatable {
    /// When the device's wait said a period could be written.
    public var woke: Int64
    /// When the period was rendered and converted, ready to write.
    public var rendered: Int64
    /// When the device had taken the whole period.
    public var written: Int64
    /// Frames handed to the device before this period (less any taken back).
    public var framesBefore: Int64
    /// The device clock's moment for device frame 0 after this period (0 while unknown, and on a
    /// device that takes frames faster than real time).
    public var clockOrigin: Int64
    /// The device's status when it was read this period: the next frame written after
    /// `statusWrittenFrames` is heard `statusDelayFrames` after `statusTimestamp`. All 0 when the
    /// status was not read. (A sound server's first reports come before its sink really plays:
    /// `ClockFit` leaves them out.)
    public var statusTimestamp: Int64
    public var statusDelayFrames: Int64
    public var statusWrittenFrames: Int64

    @_noAllocation @_noLocks
    public init(
        woke: Int64, rendered: Int64, written: Int64, framesBefore: Int64, clockOrigin: Int64 = 0,
        statusTimestamp: Int64 = 0, statusDelayFrames: Int64 = 0, statusWrittenFrames: Int64 = 0
    ) {
        self.woke = woke
        self.rendered = rendered
        self.written = written
        self.framesBefore = framesBefore
        self.clockOrigin = clockOrigin
        self.statusTimestamp = statusTimestamp
        self.statusDelayFrames = statusDelayFrames
        self.statusWrittenFrames = statusWrittenFrames
    }
}
