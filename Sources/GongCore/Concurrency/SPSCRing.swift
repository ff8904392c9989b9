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
    /// slot to write) — 16 × 8 bytes apart. (Written as literals where they are used: a named
    /// constant would be a global or a static, which a real-time caller in another module reaches
    /// through a lazy initialiser or the class's metadata.)
    @usableFromInline let indices: UnsafeMutablePointer<Atomic<Int>>
    /// Private caches: `caches[0]` is the producer's copy of head, `caches[16]` the consumer's
    /// copy of tail. Each is touched by one thread only.
    @usableFromInline let caches: UnsafeMutablePointer<Int>

    public let capacity: Int

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
    public func tryPush(_ element: Element) -> Bool { ringPush(element, to: self) }

    /// Consumer only. Nil when the ring is empty.
    @inlinable @inline(__always)
    public func tryPop() -> Element? { ringPop(self) }

    /// A snapshot that may be stale by the time it is read; for display and tests only.
    public var approximateCount: Int {
        indices[16].load(ordering: .acquiring) - indices[0].load(ordering: .acquiring)
    }
}

/// `tryPush`'s body. Transparent so that it is inlined into the caller even in a debug build and
/// from another module: a real-time entry point there with the element type fixed
/// (`@_noAllocation @_noLocks`) is then checked by the compiler down to these loads and stores,
/// rather than stopping at a generic call it cannot see into.
@_transparent
public func ringPush<Element>(_ element: Element, to ring: SPSCRing<Element>) -> Bool {
    let tail = ring.indices[16].load(ordering: .relaxed)
    if tail - ring.caches[0] == ring.capacity {
        ring.caches[0] = ring.indices[0].load(ordering: .acquiring)
        if tail - ring.caches[0] == ring.capacity { return false }
    }
    (ring.storage + (tail & ring.mask)).initialize(to: element)
    ring.indices[16].store(tail &+ 1, ordering: .releasing)
    return true
}

/// `tryPop`'s body, transparent for the same reason as `ringPush`.
@_transparent
public func ringPop<Element>(_ ring: SPSCRing<Element>) -> Element? {
    let head = ring.indices[0].load(ordering: .relaxed)
    if head == ring.caches[16] {
        ring.caches[16] = ring.indices[16].load(ordering: .acquiring)
        if head == ring.caches[16] { return nil }
    }
    let element = ring.storage[head & ring.mask]
    ring.indices[0].store(head &+ 1, ordering: .releasing)
    return element
}
