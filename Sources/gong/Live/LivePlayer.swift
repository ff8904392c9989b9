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
        var sessionOptions = try options.sessionOptions(volume: volume, interactive: keyboard != nil)
        sessionOptions.startSeconds = resuming?.snapshot.positionSeconds ?? 0
        let session = try GongSession(pattern: pattern, options: sessionOptions, bank: bank)
        // Once the session is sure to play (bad input is its one line alone).
        if resuming == nil, !options.json { mentionUnfinished() }
        let signals = SignalWatcher()
        defer { signals.uninstall() }
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let run = LiveRun(
            pattern: pattern, options: options, session: session, signals: signals, feed: feed, keyboard: keyboard,
            resuming: resuming)
        run.screen?.enter()
        defer { run.screen?.restore() }

        let events = session.events()
        let forwarding = Task {
            for await event in events { feed.yield(.event(event)) }
            feed.yield(.over)
        }
        defer { forwarding.cancel() }
        run.keep(parameters: parameters, boundary: boundary)
        InputThread.start(
            signals: signals.wakeFileDescriptor, keys: keyboard, control: controlOnStdin ? STDIN_FILENO : nil, to: feed)
        let server = options.control == .socket ? try ControlServer(session: session) : nil
        defer { server?.close() }
        run.offerStart()
        if let server, !options.json, !options.quiet { print("\(pattern.name): control socket \(server.path)") }
        // Left for later: nothing played, the snapshot stays as it was.
        guard await run.run(inputs) else { return 0 }
        return await run.finish()
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
