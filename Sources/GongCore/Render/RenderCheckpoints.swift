/// The renderer's state at points it has passed, so audio rendered but not yet heard can be
/// rendered again differently: a key press taken back into a long device buffer is heard at
/// once, not a buffer later.
///
/// A ring of the newest `capacity` checkpoints, oldest first, allocated once: saving, finding
/// and restoring allocate nothing and take no locks. Each carries a caller's `tag` (the engine
/// keeps there how many events it had been given when the checkpoint was taken, so it knows
/// which events a rewind takes back).
public struct RenderCheckpoints: ~Copyable {
    public let capacity: Int
    private let voiceCapacity: Int
    private let states: UnsafeMutablePointer<SessionRenderer.PlayState>
    private let tags: UnsafeMutablePointer<Int64>
    /// `voiceCapacity` voices per checkpoint; only the active ones are copied.
    private let voices: UnsafeMutablePointer<Voice>
    private var oldest = 0
    public private(set) var count = 0

    /// - Parameters:
    ///   - capacity: how many checkpoints to keep (older ones are dropped).
    ///   - renderer: the renderer they will be taken of.
    public init(capacity: Int, for renderer: borrowing SessionRenderer) {
        precondition(capacity > 0)
        self.capacity = capacity
        voiceCapacity = renderer.voiceCapacity
        states = .allocate(capacity: capacity)
        tags = .allocate(capacity: capacity)
        voices = .allocate(capacity: capacity * renderer.voiceCapacity)
    }

    deinit {
        states.deallocate()
        tags.deallocate()
        voices.deallocate()
    }

    private func slot(_ index: Int) -> Int { (oldest + index) % capacity }

    /// The output frame the `index`th checkpoint (0 the oldest) was taken at.
    @_noAllocation @_noLocks
    public func outputFrame(at index: Int) -> Int64 {
        precondition(index >= 0 && index < count)
        return states[slot(index)].outputFrame
    }

    @_noAllocation @_noLocks
    public func tag(at index: Int) -> Int64 {
        precondition(index >= 0 && index < count)
        return tags[slot(index)]
    }

    /// The oldest checkpoint taken at or after `outputFrame` whose tag is at least `minimumTag`:
    /// the furthest back a rewind may go without taking back more than allowed.
    @_noAllocation @_noLocks
    public func oldest(atOrAfter outputFrame: Int64, minimumTag: Int64) -> Int? {
        var index = 0
        while index < count {
            if states[slot(index)].outputFrame >= outputFrame && tags[slot(index)] >= minimumTag { return index }
            index += 1
        }
        return nil
    }

    /// Forgets every checkpoint: the renderer may not go back before where it is now (after a
    /// command was applied, or the clock moved on after an underrun — going back would undo it).
    @_noAllocation @_noLocks
    public mutating func removeAll() {
        oldest = 0
        count = 0
    }

    @_noAllocation @_noLocks
    mutating func append(
        _ state: SessionRenderer.PlayState, voices source: UnsafeMutableBufferPointer<Voice>, tag: Int64
    ) {
        if count == capacity {
            oldest = (oldest + 1) % capacity
            count -= 1
        }
        let target = slot(count)
        states[target] = state
        tags[target] = tag
        let saved = voices + target * voiceCapacity
        for index in 0..<state.activeVoices { saved[index] = source[index] }
        count += 1
    }

    /// Copies the `index`th checkpoint into `voices`, returns its state, and forgets every later one.
    @_noAllocation @_noLocks
    mutating func take(_ index: Int, voices destination: UnsafeMutableBufferPointer<Voice>) -> SessionRenderer.PlayState
    {
        precondition(index >= 0 && index < count)
        let source = slot(index)
        let state = states[source]
        let saved = voices + source * voiceCapacity
        for voice in 0..<state.activeVoices { destination[voice] = saved[voice] }
        count = index + 1
        return state
    }
}

extension SessionRenderer {
    /// Remembers the renderer's state here (between blocks), with the caller's `tag`.
    @_noAllocation @_noLocks
    public func saveCheckpoint(into checkpoints: inout RenderCheckpoints, tag: Int64) {
        checkpoints.append(state, voices: voices, tag: tag)
    }

    /// Goes back to the `index`th checkpoint: the next block renders again from its output
    /// frame, exactly as it was rendered the first time unless a command is applied first.
    /// Later checkpoints are forgotten (they will be taken again); this one is kept.
    @_noAllocation @_noLocks
    public mutating func restore(checkpoint index: Int, from checkpoints: inout RenderCheckpoints) {
        state = checkpoints.take(index, voices: voices)
    }
}
