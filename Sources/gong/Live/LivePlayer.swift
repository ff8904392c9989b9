import FoundationEssentials
import Glibc
import GongCore
import GongKit
import GongPractice
import GongTerminal

/// Runs a live session in the terminal, on GongKit's `GongSession`: one loop takes, in order,
/// the session's events, keys, signals, control commands and redraws, so the terminal is only
/// ever written from one place.
enum LivePlayer {
    /// What wakes the loop.
    enum Input: Sendable {
        case event(SessionEvent)
        /// The session's events have ended (after `finished`).
        case over
        case keys([Key])
        /// A signal arrived; `SignalWatcher.take()` says which.
        case signalled
        /// The terminal on standard input went away (an SSH connection dropped).
        case terminalGone
        /// The live view has something new to show.
        case redraw
        /// A line on the control channel (`--control stdin`); `nil`: one longer than
        /// `ControlProtocol.maxLineBytes`, skipped.
        case control(String?)
        /// Ctrl-Z's pause has had its time to fade: stop the process now, paused or not.
        case stopDue
        /// The history or the snapshot cannot be written: said once, and the session plays on.
        /// What failed waits in the player's `unsaid` list, so the loop's end cannot lose it.
        case keepingFailed
    }

    /// How a resumed session begins.
    enum Resuming {
        /// Paused until the person presses space (or leaves it for later with q).
        case whenAsked(SessionSnapshot)
        /// At once (`gong resume --now`, for headless use).
        case now(SessionSnapshot)

        var snapshot: SessionSnapshot {
            switch self {
            case .whenAsked(let snapshot), .now(let snapshot): snapshot
            }
        }
    }

    /// - Parameters:
    ///   - parameters: the overrides as given, for the history.
    ///   - resuming: the snapshot a resumed session carries on from.
    static func play(
        _ pattern: Pattern, options: LiveOptions, bank: SoundBank, volume: Double, parameters: String,
        boundary: DayBoundary, resuming: Resuming? = nil
    ) async throws -> Int32 {
        // Keys need a terminal on stdin (or, when stdin is the control channel, the process's
        // terminal); the view needs one on both ends (its last line offers the keys). Anything
        // else gets one line per event.
        let controlOnStdin = options.control == .stdin
        let keyboard =
            controlOnStdin ? Self.openTerminal() : (TerminalScreen.isTerminal(STDIN_FILENO) ? STDIN_FILENO : nil)
        defer { if controlOnStdin, let keyboard { close(keyboard) } }
        let interactive = keyboard != nil
        var sessionOptions = try options.sessionOptions(volume: volume, interactive: interactive)
        sessionOptions.startSeconds = resuming?.snapshot.positionSeconds ?? 0
        let session = try GongSession(pattern: pattern, options: sessionOptions, bank: bank)
        // Once the session is sure to play (bad input is its one line alone).
        if resuming == nil, !options.json { mentionUnfinished() }
        let signals = SignalWatcher()
        defer { signals.uninstall() }
        // While there is a terminal there is a screen; `view` is it when it also draws.
        var screen = keyboard.map {
            TerminalScreen(
                input: $0,
                drawsView: TerminalScreen.isTerminal(STDOUT_FILENO) && !options.quiet && !options.json
                    && !controlOnStdin)
        }
        var view: TerminalScreen? { screen?.drawsView == true ? screen : nil }
        screen?.enter()
        defer { screen?.restore() }

        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let events = session.events()
        let forwarding = Task {
            for await event in events { feed.yield(.event(event)) }
            feed.yield(.over)
        }
        defer { forwarding.cancel() }
        // Recorded and snapshotted from its own copy of the events, on its own queue (the history
        // is opened there too), so neither a slow disk nor a locked file holds up this loop or
        // the audio.
        let standard = SessionRecorder.Keeping.standard
        // What could not be kept, said as the loop takes it in; what comes after the loop has
        // ended (a session shorter than the history's opening) is said after the last write.
        let unsaid = Locked<[SessionRecorder.Failure]>([])
        func sayUnsaid(onScreen: Bool = true) {
            let failures = unsaid.withLock { list in
                let taken = list
                list = []
                return taken
            }
            for failure in failures {
                if onScreen, let view { view.log("gong: \(failure)") } else { printError("\(failure)") }
            }
        }
        let recorder = SessionRecorder(
            of: session,
            keeping: .init(history: options.noHistory ? nil : standard.history, snapshots: standard.snapshots),
            parameters: parameters, device: options.device, resuming: resuming?.snapshot, boundary: boundary
        ) { failure in
            unsaid.withLock { $0.append(failure) }
            feed.yield(.keepingFailed)
        }
        InputThread.start(
            signals: signals.wakeFileDescriptor, keys: keyboard, control: controlOnStdin ? STDIN_FILENO : nil, to: feed)
        let server = options.control == .socket ? try ControlServer(session: session) : nil
        defer { server?.close() }
        /// Waiting for the person before a resumed session plays on.
        var waitingToStart = false
        func begin() {
            waitingToStart = false
            if let resuming { recorder.marksResumed(resuming.snapshot) }
            session.start()
        }
        if case .whenAsked(let snapshot) = resuming {
            waitingToStart = true
            let line =
                "\(pattern.name): resuming at \(DurationText.clock(seconds: snapshot.positionSeconds)) of "
                + "\(DurationText.clock(seconds: snapshot.positionSeconds + session.status.plannedSeconds));"
                + " press space to carry on, q to leave it for later"
            if let view { view.log(line) } else { printError(line) }
        } else {
            begin()
        }
        if let server, !options.json, !options.quiet { print("\(pattern.name): control socket \(server.path)") }

        var redraw: Task<Void, Never>?
        /// The next moment the view changes, woken for then and no sooner; keys, signals and
        /// events wake the loop anyway, so a session without a view never wakes by itself.
        func scheduleRedraw() {
            redraw?.cancel()
            guard let view else { return }
            let status = liveStatus(session.status)
            view.draw(StatusLines.render(status, width: view.width))
            let seconds = max(0.005, min(60, StatusLines.secondsUntilChange(status, width: view.width)))
            redraw = Task {
                try? await Task.sleep(for: .seconds(seconds))
                if !Task.isCancelled { feed.yield(.redraw) }
            }
        }
        /// The terminal is gone (an SSH connection dropped, the window closed): the session goes
        /// on to its end — the bell still rings for the person sitting by the speaker — headless,
        /// and writing to a closed pipe no longer ends the process.
        func detachFromTerminal() {
            guard screen != nil else { return }
            screen = nil
            session.becomeHeadless()
            signal(SIGPIPE, SIG_IGN)
        }
        func command(_ command: SessionCommand) {
            // A refused command is already an `ignored` event, which says why.
            try? session.send(command)
        }

        var interrupts = 0
        var report: SessionReport?
        /// Ctrl-Z was pressed and its pause is fading: the process stops once the `paused` event
        /// is out (so whoever reads the events sees it before the silence), or after 250 ms.
        var stopping = false
        func stopProcess() {
            stopping = false
            screen?.suspend()
            SignalWatcher.stopProcess()
            screen?.resume()
        }
        scheduleRedraw()
        loop: for await input in inputs {
            switch input {
            case .event(let event):
                if case .finished(let finished) = event.kind { report = finished }
                write(event, pattern: pattern.name, options: options, view: view)
                if stopping, case .paused = event.kind { stopProcess() }
            case .stopDue:
                if stopping { stopProcess() }
            case .over:
                break loop
            case .keys(let keys) where waitingToStart:
                if keys.contains(.togglePause) {
                    begin()
                } else if keys.contains(.stop) {
                    // Left for later: nothing played, the snapshot stays as it was.
                    return 0
                }
            case .keys(let keys):
                for key in keys {
                    switch key {
                    case .togglePause: command(.togglePause)
                    case .skip: command(.skip)
                    case .stop: command(.stop)
                    }
                }
            case .terminalGone:
                detachFromTerminal()
            case .redraw:
                break
            case .keepingFailed:
                sayUnsaid()
            case .control(let line):
                print(
                    line.map { ControlProtocol.reply(to: Substring($0), session: session) }
                        ?? ControlProtocol.tooLongReply)
                fflush(nil)
            case .signalled:
                for signal in signals.take() {
                    switch signal {
                    case .interrupt where waitingToStart, .terminate where waitingToStart:
                        return 0  // left for later, as with q
                    case .interrupt(let count):
                        interrupts += count
                        command(interrupts == 1 ? .stop : .halt)
                    case .terminate:
                        interrupts += 1
                        command(interrupts == 1 ? .stop : .halt)
                    case .stopRequested:
                        // Let the fade finish before the process stops, so the audio goes quiet.
                        guard (try? session.send(.pause)) != nil else {
                            stopProcess()  // paused already, or nothing to pause
                            break
                        }
                        stopping = true
                        Task {
                            try? await Task.sleep(for: .milliseconds(250))
                            feed.yield(.stopDue)
                        }
                    case .hangup:
                        detachFromTerminal()
                    case .continued, .resized:
                        break
                    }
                }
            }
            scheduleRedraw()
        }
        redraw?.cancel()
        screen?.finish()
        let ended = report ?? session.waitForReport()
        if !options.json { print(NoticeFormat.summary(ended)) }
        fflush(nil)
        // The last write, so the history has the session before the process ends; a locked file
        // is waited for at most as long as one write waits.
        _ = await recorder.waitForEnd(timeoutSeconds: SessionHistory.busySeconds + 1)
        sayUnsaid(onScreen: false)
        if let failure = ended.failure {
            printError(failure)
            return ExitStatus.unavailable
        }
        return 0
    }

    /// Says so when sessions whose process died can be resumed, and names any snapshot that
    /// could not be read (it has been moved aside).
    static func mentionUnfinished(_ store: SnapshotStore = SnapshotStore()) {
        let (unfinished, setAside) = store.unfinished()
        for aside in setAside { printError(aside.description) }
        guard let newest = unfinished.first else { return }
        let more = unfinished.count > 1 ? " (and \(unfinished.count - 1) more)" : ""
        printError(
            "an unfinished \(newest.pattern.name) from \(newest.localWrittenText), stopped at "
                + "\(DurationText.clock(seconds: newest.positionSeconds))\(more); 'gong resume' carries on with it")
    }

    /// The process's terminal, for keys while standard input carries commands.
    private static func openTerminal() -> Int32? {
        let descriptor = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        guard TerminalScreen.isTerminal(descriptor) else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    private static func write(_ event: SessionEvent, pattern: String, options: LiveOptions, view: TerminalScreen?) {
        if options.json {
            print(event.jsonLine())
        } else if !options.quiet, let line = NoticeFormat.line(event, pattern: pattern) {
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

    static func liveStatus(_ status: SessionStatus) -> LiveStatus {
        let activity: LiveStatus.Activity =
            switch status.state {
            case .idle, .preparing: .preparing
            case .active: .playing
            case .paused: .paused
            case .completing, .completed: .completing
            case .failed: .waitingForDevice(message: status.waitingFor ?? "")
            }
        var live = LiveStatus(
            patternName: status.pattern, phaseName: status.phase, phaseIndex: status.phaseIndex,
            phaseCount: status.phaseCount,
            cycle: status.cycle, cycleCount: status.cycles, phaseElapsed: status.phaseElapsedSeconds,
            phaseLength: status.phaseSeconds, sessionElapsed: status.elapsedSeconds,
            sessionLength: status.plannedSeconds,
            motion: status.motion, previousMotion: status.previousMotion, activity: activity)
        live.isOpen = status.open == true
        // The delay is counted down, then left out: the clocks show the sit itself.
        if let delay = status.startDelaySeconds {
            if status.elapsedSeconds < delay, activity != .completing { live.startsIn = delay - status.elapsedSeconds }
            live.sessionElapsed = max(0, status.elapsedSeconds - delay)
            live.sessionLength = max(0, status.plannedSeconds - delay)
        }
        return live
    }
}

/// The thread that sleeps on the terminal and the signal pipe, and hands what arrives to the
/// main loop. It blocks in `poll` with no timeout: it costs nothing while nothing happens.
enum InputThread {
    static func start(
        signals: Int32, keys: Int32?, control: Int32?, to feed: AsyncStream<LivePlayer.Input>.Continuation
    ) {
        DetachedThread.start(name: "gong input") {
            var watchKeys = keys
            var watchControl = control
            var line = ControlLines()
            while true {
                var descriptors = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
                if let watchKeys { descriptors.append(pollfd(fd: watchKeys, events: Int16(POLLIN), revents: 0)) }
                if let watchControl { descriptors.append(pollfd(fd: watchControl, events: Int16(POLLIN), revents: 0)) }
                guard poll(&descriptors, nfds_t(descriptors.count), -1) >= 0 || errno == EINTR else { return }
                if descriptors[0].revents != 0 {
                    var drained = [UInt8](repeating: 0, count: 64)
                    while read(signals, &drained, 64) > 0 {}
                    feed.yield(.signalled)
                }
                var next = 1
                if let descriptor = watchKeys {
                    let events = descriptors[next].revents
                    next += 1
                    if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                        watchKeys = nil
                        feed.yield(.terminalGone)
                    } else if events & Int16(POLLIN) != 0 {
                        let keys = KeyInput.read(from: descriptor)
                        if !keys.isEmpty { feed.yield(.keys(keys)) }
                    }
                }
                if let descriptor = watchControl, descriptors[next].revents != 0 {
                    // The end of the channel ends the commands, not the session.
                    guard line.read(from: descriptor, into: feed) else {
                        watchControl = nil
                        continue
                    }
                }
            }
        }
    }
}

/// Splits the control channel into lines, refusing any longer than
/// `ControlProtocol.maxLineBytes` without holding more than that.
struct ControlLines {
    private var splitter = ControlLineSplitter()

    /// Reads what is there and hands on each whole line (nil for one that was too long); false
    /// at the end of the input.
    mutating func read(from descriptor: Int32, into feed: AsyncStream<LivePlayer.Input>.Continuation) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        if count < 0 { return errno == EAGAIN || errno == EINTR }
        if count == 0 { return false }
        splitter.feed(buffer[0..<count]) { piece in
            switch piece {
            case .line(let line): feed.yield(.control(line))
            case .tooLong: feed.yield(.control(nil))
            }
        }
        return true
    }
}
