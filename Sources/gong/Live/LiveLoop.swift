import GongKit
import GongTerminal

/// What the live loop decides, apart from what it acts on: each input the player takes in
/// (an event, keys, a signal, a control line) becomes the actions it carries out on the session,
/// the terminal and the process. Its state is its properties, so a test steps it with inputs and
/// reads the actions, with no terminal, session or clock.
struct LiveLoop {
    enum Action: Equatable {
        /// Start the session (a resumed one marked as resumed first).
        case begin
        /// A command for the session; one it refuses is an `ignored` event, which says why.
        case send(SessionCommand)
        /// Write the event out: a line, a JSON line, or the view's log.
        case show(SessionEvent)
        /// Take the signals that arrived and hand them to `handle(_ signals:)`.
        case takeSignals
        /// Ctrl-Z: pause so the audio fades before the process stops, and hand whether the session
        /// took the pause to `pauseSent(taken:)`.
        case pauseToStop
        /// Stop the process now (the terminal restored meanwhile); it carries on at `fg`.
        case stopProcess
        /// Feed `stopDue` once the fade has had its time, in case the `paused` event never comes.
        case stopWhenFaded
        /// The terminal is gone: play on headless.
        case detach
        /// Say what the history or the snapshot could not keep.
        case sayUnsaid
        /// Answer a control line (nil: one too long to read).
        case reply(to: String?)
        /// The session's events have ended: the loop is over.
        case end
        /// Leave at once with nothing played: the resumed session stays as it was, for later.
        case leave
    }

    /// A resumed session waits for the person (space) before it plays on.
    private(set) var waitingToStart: Bool
    /// Ctrl-Z's pause is fading: the process stops once the `paused` event is out (so whoever
    /// reads the events sees it before the silence), or when `stopDue` comes.
    private(set) var stopping = false
    /// Ctrl-C and SIGTERM so far: the first stops gracefully, any later one at once.
    private(set) var interrupts = 0
    /// The session's report, from its `finished` event.
    private(set) var report: SessionReport?

    init(waitingToStart: Bool) {
        self.waitingToStart = waitingToStart
    }

    mutating func handle(_ input: LivePlayer.Input) -> [Action] {
        switch input {
        case .event(let event):
            if case .finished(let finished) = event.kind { report = finished }
            guard stopping, case .paused = event.kind else { return [.show(event)] }
            return [.show(event)] + stopProcess()
        case .stopDue:
            return stopping ? stopProcess() : []
        case .over:
            return [.end]
        case .keys(let keys) where waitingToStart:
            if keys.contains(.togglePause) { return begin() }
            return keys.contains(.stop) ? [.leave] : []
        case .keys(let keys):
            return keys.map { key in
                switch key {
                case .togglePause: .send(.togglePause)
                case .skip: .send(.skip)
                case .stop: .send(.stop)
                }
            }
        case .terminalGone: return [.detach]
        case .redraw: return []
        case .keepingFailed: return [.sayUnsaid]
        case .control(let line): return [.reply(to: line)]
        case .signalled: return [.takeSignals]
        }
    }

    /// What the signals that arrived (`SignalWatcher.take()`) ask for.
    mutating func handle(_ signals: [SignalEvent]) -> [Action] {
        var actions: [Action] = []
        for signal in signals {
            switch signal {
            case .interrupt where waitingToStart, .terminate where waitingToStart:
                return actions + [.leave]  // left for later, as with q
            case .interrupt(let count):
                interrupts += count
                actions.append(.send(interrupts == 1 ? .stop : .halt))
            case .terminate:
                interrupts += 1
                actions.append(.send(interrupts == 1 ? .stop : .halt))
            case .stopRequested:
                actions.append(.pauseToStop)
            case .hangup:
                actions.append(.detach)
            case .continued, .resized:
                break
            }
        }
        return actions
    }

    /// Ctrl-Z's pause was sent: once it has faded the process stops; if the session did not take it
    /// (paused already, or nothing to pause), the process stops now.
    mutating func pauseSent(taken: Bool) -> [Action] {
        guard taken else { return stopProcess() }
        stopping = true
        return [.stopWhenFaded]
    }

    /// The resumed session plays on.
    mutating func begin() -> [Action] {
        waitingToStart = false
        return [.begin]
    }

    private mutating func stopProcess() -> [Action] {
        stopping = false
        return [.stopProcess]
    }
}
