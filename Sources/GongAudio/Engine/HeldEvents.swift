import GongCore

/// The renderer's events the audio thread holds back until they can no longer be taken back:
/// on a device that can rewind, an event rendered into the buffer may yet be rendered again
/// differently (a key press taken back before it), so the control side hears of it only once it
/// is out of reach — about when it is heard.
///
/// A ring allocated once, oldest first. Every event ever appended has a number (`appended`
/// counts them); the renderer's checkpoints carry the number reached when they were taken, so
/// going back to one drops exactly the events rendered since.
struct HeldEvents: ~Copyable {
    private let storage: UnsafeMutablePointer<RenderEvent>
    let capacity: Int
    private var oldest = 0
    private(set) var count = 0
    /// Events appended since the start.
    private(set) var appended: Int64 = 0
    /// Events handed on since the start: no take-back may go before the last of them.
    var released: Int64 {
        @_noAllocation @_noLocks get { appended - Int64(count) }
    }

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    var first: RenderEvent? {
        @_noAllocation @_noLocks get { count > 0 ? storage[oldest] : nil }
    }

    /// Appends, or refuses when full (the caller then releases the oldest first).
    @_noAllocation @_noLocks
    mutating func append(_ event: RenderEvent) -> Bool {
        guard count < capacity else { return false }
        storage[(oldest + count) % capacity] = event
        count += 1
        appended += 1
        return true
    }

    @_noAllocation @_noLocks
    mutating func removeFirst() -> RenderEvent? {
        guard count > 0 else { return nil }
        let event = storage[oldest]
        oldest = (oldest + 1) % capacity
        count -= 1
        return event
    }

    /// Drops every event numbered `number` or later (they are being rendered again).
    @_noAllocation @_noLocks
    mutating func truncate(toNumber number: Int64) {
        precondition(number >= released, "a take-back may not reach events already handed on")
        let drop = Int(appended - number)
        guard drop > 0 else { return }
        count -= drop
        appended = number
    }
}
