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
    /// The session frame the audio side has rendered to, as of its latest block: read at any
    /// moment without waiting for the audio side or its reports.
    var renderedSessionFrame: Int64 { get }
    /// True when what is rendered is heard only later (a device's buffer holds it), so where the
    /// session stands is what is heard by now; false when the frames rendered are the session's
    /// clock (a host's pull, whatever its pace).
    var rendersAheadOfHearing: Bool { get }
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
    /// A device plays what the audio thread rendered a buffer later.
    public var rendersAheadOfHearing: Bool { true }
}
