/// A sound's samples, in memory of their own that never moves and is never copied.
///
/// The renderer reads sounds by pointer on the audio thread, so their memory must stay where it
/// is for as long as a session plays. And a bank of long gongs is tens of megabytes: a session
/// reads them from the prepared-sound cache once, straight into this memory, and plays them from
/// there: a second copy into memory of the renderer's own would double the copying and the page
/// faults at every start (bench/RESULTS.md has what it cost).
///
/// Immutable once made, so it is shared freely between threads and sessions.
public final class SoundSamples: @unchecked Sendable {
    private let base: UnsafeMutablePointer<Float>
    public let count: Int

    /// New storage for `count` samples, filled by `fill`, which must set every one of them and
    /// says whether it could; nil when it could not (a read failed, a checksum did not match).
    public init?(count: Int, fill: (UnsafeMutableBufferPointer<Float>) -> Bool) {
        precondition(count >= 0)
        let storage = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(1, count))
        guard fill(UnsafeMutableBufferPointer(start: storage, count: count)) else {
            storage.deallocate()
            return nil
        }
        base = storage
        self.count = count
    }

    /// A copy of `samples`.
    public init(_ samples: [Float]) {
        base = .allocate(capacity: Swift.max(1, samples.count))
        count = samples.count
        samples.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
        }
    }

    deinit { base.deallocate() }

    /// The samples, valid for as long as this object lives.
    public var buffer: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: base, count: count) }
}

extension SoundSamples: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> Float {
        precondition(position >= 0 && position < count, "sample index out of range")
        return base[position]
    }
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R? {
        try body(buffer)
    }
}

extension SoundSamples: Equatable {
    public static func == (left: SoundSamples, right: SoundSamples) -> Bool {
        left === right || left.elementsEqual(right)
    }
}
