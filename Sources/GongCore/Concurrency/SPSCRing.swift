import Synchronization

/// A bounded, lock-free queue for exactly one producer thread and one consumer thread: how the
/// control side sends commands to the audio thread and the audio thread sends events back.
///
/// After `init` nothing allocates; `tryPush` and `tryPop` never block or spin — a full ring
/// refuses the push, an empty one returns nil. The design is rigtorp's SPSCQueue:
/// - `tail` (written by the producer) and `head` (written by the consumer) live 128 bytes apart,
///   so the two threads never write the same cache line (128, not 64: x86's adjacent-line
///   prefetcher pairs lines, and Apple silicon's lines are 128 bytes);
/// - each side keeps a private copy of the other side's index and reloads the shared one only
///   when the copy says the ring is full (producer) or empty (consumer), so in steady state the
///   threads do not ping-pong a cache line per element.
///
/// Memory ordering: the producer writes the element, then stores `tail` with *release*; the
/// consumer loads `tail` with *acquire* before reading the element, so it sees the element's
/// bytes. Symmetrically the consumer stores `head` with *release* after reading, and the
/// producer loads it with *acquire* before overwriting that slot. Each side loads its own index
/// *relaxed*: only it ever writes it.
///
/// `@unchecked Sendable`: its storage is shared between exactly two threads, and the ordering
/// above is what makes that safe; the compiler cannot see it. One producer and one consumer at a
/// time is the caller's promise (the engine's owner sends under its own lock).
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int
    /// Shared indices: `indices[0]` is head (next slot to read), `indices[16]` is tail (next
    /// slot to write) — 16 × 8 bytes apart.
    @usableFromInline let indices: UnsafeMutablePointer<Atomic<Int>>
    /// Private caches: `caches[0]` is the producer's copy of head, `caches[16]` the consumer's
    /// copy of tail. Each is touched by one thread only.
    @usableFromInline let caches: UnsafeMutablePointer<Int>

    public let capacity: Int

    @usableFromInline static var headSlot: Int { 0 }
    @usableFromInline static var tailSlot: Int { 16 }

    /// - Parameter minimumCapacity: rounded up to a power of two so indices wrap with a mask.
    public init(minimumCapacity: Int) {
        precondition(minimumCapacity > 0 && minimumCapacity <= 1 << 30)
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = .allocate(capacity: size)
        indices = .allocate(capacity: 32)
        for slot in 0..<32 { (indices + slot).initialize(to: Atomic(0)) }
        caches = .allocate(capacity: 32)
        caches.initialize(repeating: 0, count: 32)
    }

    deinit {
        storage.deallocate()
        indices.deinitialize(count: 32)
        indices.deallocate()
        caches.deallocate()
    }

    /// Producer only. False when the ring is full; the element is then not queued.
    @inlinable @inline(__always)
    public func tryPush(_ element: Element) -> Bool {
        let tail = indices[SPSCRing.tailSlot].load(ordering: .relaxed)
        if tail - caches[0] == capacity {
            caches[0] = indices[SPSCRing.headSlot].load(ordering: .acquiring)
            if tail - caches[0] == capacity { return false }
        }
        (storage + (tail & mask)).initialize(to: element)
        indices[SPSCRing.tailSlot].store(tail &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer only. Nil when the ring is empty.
    @inlinable @inline(__always)
    public func tryPop() -> Element? {
        let head = indices[SPSCRing.headSlot].load(ordering: .relaxed)
        if head == caches[SPSCRing.tailSlot] {
            caches[SPSCRing.tailSlot] = indices[SPSCRing.tailSlot].load(ordering: .acquiring)
            if head == caches[SPSCRing.tailSlot] { return nil }
        }
        let element = storage[head & mask]
        indices[SPSCRing.headSlot].store(head &+ 1, ordering: .releasing)
        return element
    }

    /// A snapshot that may be stale by the time it is read; for display and tests only.
    public var approximateCount: Int {
        indices[SPSCRing.tailSlot].load(ordering: .acquiring) - indices[SPSCRing.headSlot].load(ordering: .acquiring)
    }
}

/// The audio thread's side of the rings with the element types fixed, so the compiler checks
/// that pushing an event and popping a command allocate nothing and take no locks.
@_noAllocation @_noLocks
public func pushFromAudioThread(_ event: RenderEvent, to ring: SPSCRing<RenderEvent>) -> Bool {
    ring.tryPush(event)
}

@_noAllocation @_noLocks
public func popOnAudioThread(_ ring: SPSCRing<RenderCommand>) -> RenderCommand? {
    ring.tryPop()
}
