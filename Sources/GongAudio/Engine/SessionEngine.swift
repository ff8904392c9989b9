import GongCore

/// What the control side of a live session needs of whichever engine plays it: `PlaybackEngine`
/// (gong's thread pushes to a device) or `PullEngine` (the host's callback pulls frames). Both
/// take commands through the same ring and report the same events through the same ring.
public protocol SessionEngine: AnyObject, Sendable {
    /// Queues a command for the audio side. False when the ring is full.
    @discardableResult
    func send(_ command: RenderCommand) -> Bool
    var pendingCommands: Int { get }
    var commandCapacity: Int { get }
    /// What the audio side reported, oldest first.
    var events: SPSCRing<EngineEvent> { get }
    /// Readable when the audio side has reported something since `clearEventsReady`.
    var eventsReadyDescriptor: Int32 { get }
    func clearEventsReady()
    /// From `start` until the audio side has reported `finished`.
    var isRunning: Bool { get }
    func start()
    /// Waits until the audio side has finished.
    func join()
    /// The session is being let go while it may still play: whatever must happen for the audio
    /// side to end without anyone driving it any more.
    func abandon()
    /// The state machine's `.closeDevice`: close the device the audio side let go of after a loss.
    func closeLostDevice()
    /// The state machine's `.reopenDevice`: open the lost device again, with the machine's
    /// backoff, and hand it to the audio side.
    func reopenLostDevice()
}

extension PlaybackEngine: SessionEngine {
    /// The audio thread finishes by itself once the halt it was sent has faded out.
    public func abandon() {}
}
