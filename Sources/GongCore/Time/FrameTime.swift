/// Frames and nanoseconds, converted without overflow however long the session.
///
/// `frames * 1_000_000_000` overflows `Int64` past 9.2·10⁹ frames: 53 h of output at 48 kHz,
/// 13 h at 192 kHz, and a trap on the audio thread ends the session without a word. Splitting
/// into whole seconds and the frames (or nanoseconds) left over keeps every product small: the
/// whole-seconds term overflows only after 292 years, the remainder term never. Plain integer
/// arithmetic that neither allocates nor locks, for the audio thread and the control side alike.
/// Both round toward zero, as the single division they replace did.
public enum FrameTime {
    public static let nanosecondsPerSecond: Int64 = 1_000_000_000

    /// How long `frames` last at `rate` frames a second, in nanoseconds.
    @inline(__always) @_noAllocation @_noLocks
    public static func nanoseconds(ofFrames frames: Int64, rate: Int64) -> Int64 {
        (frames / rate) * nanosecondsPerSecond + (frames % rate) * nanosecondsPerSecond / rate
    }

    /// How many frames at `rate` fit in `nanoseconds`.
    @inline(__always) @_noAllocation @_noLocks
    public static func frames(inNanoseconds nanoseconds: Int64, rate: Int64) -> Int64 {
        (nanoseconds / nanosecondsPerSecond) * rate + (nanoseconds % nanosecondsPerSecond) * rate / nanosecondsPerSecond
    }
}
