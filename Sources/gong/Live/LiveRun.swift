import FoundationEssentials
import Glibc
import GongCore
import GongKit
import GongPractice
import GongTerminal

/// One live session in the terminal: what `LiveLoop` decides, carried out on the session, the
/// screen and the process. The loop's inputs are taken in order on one task, so the terminal is
/// only ever written from here.
final class LiveRun {
    let pattern: Pattern
    let options: LiveOptions
    let session: GongSession
    let signals: SignalWatcher
    let feed: AsyncStream<LivePlayer.Input>.Continuation
    let resuming: LivePlayer.Resuming?
    /// While there is a terminal there is a screen; `view` is it when it also draws.
    private(set) var screen: TerminalScreen?
    private var view: TerminalScreen? { screen?.drawsView == true ? screen : nil }
    private var loop: LiveLoop
    /// Records and snapshots the session from its own copy of the events (`keep`).
    private var recorder: SessionRecorder?
    /// What could not be kept, said as the loop takes it in; what comes after the loop has ended
    /// (a session shorter than the history's opening) is said after the last write.
    private let unsaid = Locked<[SessionRecorder.Failure]>([])
    private var redraw: Task<Void, Never>?

    init(
        pattern: Pattern, options: LiveOptions, session: GongSession, signals: SignalWatcher,
        feed: AsyncStream<LivePlayer.Input>.Continuation, keyboard: Int32?, resuming: LivePlayer.Resuming?
    ) {
        self.pattern = pattern
        self.options = options
        self.session = session
        self.signals = signals
        self.feed = feed
        self.resuming = resuming
        screen = keyboard.map {
            TerminalScreen(
                input: $0,
                drawsView: TerminalScreen.isTerminal(STDOUT_FILENO) && !options.quiet && !options.json
                    && options.control != .stdin)
        }
        var waiting = false
        if case .whenAsked = resuming { waiting = true }
        loop = LiveLoop(waitingToStart: waiting)
    }

    /// Starts recording and snapshotting, on the recorder's own queue (the history is opened there
    /// too), so neither a slow disk nor a locked file holds up this loop or the audio.
    func keep(parameters: String, boundary: DayBoundary) {
        let standard = SessionRecorder.Keeping.standard
        let unsaid = unsaid
        let feed = feed
        recorder = SessionRecorder(
            of: session,
            keeping: .init(history: options.noHistory ? nil : standard.history, snapshots: standard.snapshots),
            parameters: parameters, device: options.device, resuming: resuming?.snapshot, boundary: boundary
        ) { failure in
            unsaid.withLock { $0.append(failure) }
            feed.yield(.keepingFailed)
        }
    }

    /// Starts the session, or, resuming when asked, says where it stands and waits for the person.
    func offerStart() {
        guard case .whenAsked(let snapshot) = resuming else {
            _ = carryOut(loop.begin())
            return
        }
        let line =
            "\(pattern.name): resuming at \(DurationText.clock(seconds: snapshot.positionSeconds)) of "
            + "\(DurationText.clock(seconds: snapshot.positionSeconds + session.status.plannedSeconds));"
            + " press space to carry on, q to leave it for later"
        if let view { view.log(line) } else { printError(line) }
    }

    /// Takes the inputs until the session's events end; false when the person left the resumed
    /// session for later before it played.
    func run(_ inputs: AsyncStream<LivePlayer.Input>) async -> Bool {
        scheduleRedraw()
        for await input in inputs {
            switch carryOut(loop.handle(input)) {
            case .leave: return false
            case .end: return true
            default: scheduleRedraw()
            }
        }
        return true
    }

    /// The summary, the last write of the history, and the exit status.
    func finish() async -> Int32 {
        redraw?.cancel()
        screen?.finish()
        let ended = loop.report ?? session.waitForReport()
        if !options.json { print(NoticeFormat.summary(ended)) }
        fflush(nil)
        // The last write, so the history has the session before the process ends; a locked file
        // is waited for at most as long as one write waits.
        _ = await recorder?.waitForEnd(timeoutSeconds: SessionHistory.busySeconds + 1)
        sayUnsaid(onScreen: false)
        if let failure = ended.failure {
            printError(failure)
            return ExitStatus.unavailable
        }
        return 0
    }

    /// Carries out the actions in order; the first that ends the loop (`end`, `leave`) is
    /// returned, and those after it are not carried out.
    private func carryOut(_ actions: [LiveLoop.Action]) -> LiveLoop.Action? {
        for action in actions {
            switch action {
            case .begin:
                if let resuming { recorder?.marksResumed(resuming.snapshot) }
                session.start()
            case .send(let command):
                // A refused command is already an `ignored` event, which says why.
                try? session.send(command)
            case .show(let event): show(event)
            case .takeSignals:
                if let last = carryOut(loop.handle(signals.take())) { return last }
            case .pauseToStop:
                // Let the fade finish before the process stops, so the audio goes quiet.
                if let last = carryOut(loop.pauseSent(taken: (try? session.send(.pause)) != nil)) { return last }
            case .stopProcess:
                screen?.suspend()
                SignalWatcher.stopProcess()
                screen?.resume()
            case .stopWhenFaded:
                let feed = feed
                Task {
                    try? await Task.sleep(for: .milliseconds(250))
                    feed.yield(.stopDue)
                }
            case .detach: detachFromTerminal()
            case .sayUnsaid: sayUnsaid()
            case .reply(let line):
                print(
                    line.map { ControlProtocol.reply(to: Substring($0), session: session) }
                        ?? ControlProtocol.tooLongReply)
                fflush(nil)
            case .end, .leave: return action
            }
        }
        return nil
    }

    /// The next moment the view changes, woken for then and no sooner; keys, signals and
    /// events wake the loop anyway, so a session without a view never wakes by itself.
    private func scheduleRedraw() {
        redraw?.cancel()
        guard let view else { return }
        let status = LivePlayer.liveStatus(session.status)
        view.draw(StatusLines.render(status, width: view.width))
        let seconds = max(0.005, min(60, StatusLines.secondsUntilChange(status, width: view.width)))
        let feed = feed
        redraw = Task {
            try? await Task.sleep(for: .seconds(seconds))
            if !Task.isCancelled { feed.yield(.redraw) }
        }
    }

    /// The terminal is gone (an SSH connection dropped, the window closed): the session goes
    /// on to its end — the bell still rings for the person sitting by the speaker — headless,
    /// and writing to a closed pipe no longer ends the process.
    private func detachFromTerminal() {
        guard screen != nil else { return }
        screen = nil
        session.becomeHeadless()
        signal(SIGPIPE, SIG_IGN)
    }

    private func sayUnsaid(onScreen: Bool = true) {
        let failures = unsaid.withLock { list in
            let taken = list
            list = []
            return taken
        }
        for failure in failures {
            if onScreen, let view { view.log("gong: \(failure)") } else { printError("\(failure)") }
        }
    }

    private func show(_ event: SessionEvent) {
        if options.json {
            print(event.jsonLine())
        } else if !options.quiet, let line = NoticeFormat.line(event, pattern: pattern.name) {
            if let view {
                switch event.kind {
                case .phaseBegan, .cue: break  // the view shows phases
                default: view.log(line)
                }
            } else {
                print(line)
            }
        }
        fflush(nil)
    }
}
