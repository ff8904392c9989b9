import Foundation
import Glibc
import GongAudio
import GongCore
import GongKit
import GongTerminal

/// Runs a live session in the terminal: the main loop that reads keys and signals, drains the
/// audio thread's events, and draws the view (or prints lines when there is no terminal).
enum LivePlayer {
    static func play(_ pattern: Pattern, options: LiveOptions, bank: SoundBank, volume: Double) throws(GongError) -> Int32 {
        let request = try options.request()
        switch OutputRoute(device: request.device) {
        case .pulseAudio(let sink):
            return try play(pattern, options: options, bank: bank, volume: volume) {
                () throws(AudioDeviceError) -> PulsePCM in try PulsePCM(request, sink: sink)
            }
        case .alsa:
            return try play(pattern, options: options, bank: bank, volume: volume) {
                () throws(AudioDeviceError) -> AlsaPCM in try AlsaPCM(request)
            }
        }
    }

    private static func play<Device: PCM>(_ pattern: Pattern, options: LiveOptions, bank: SoundBank, volume: Double,
                                          open: @escaping @Sendable () throws(AudioDeviceError) -> Device) throws(GongError) -> Int32 {
        // Keys need a terminal on stdin; the view needs one on both ends (its last line offers
        // the keys). Anything else gets one line per event.
        let interactive = TerminalScreen.isTerminal(STDIN_FILENO)
        let session = try LiveSession<Device>(pattern: pattern, bank: bank, masterGainDB: volume, interactive: interactive, open: open)
        let signals = SignalWatcher()
        defer { signals.uninstall() }
        // While there is a terminal there is a screen; `view` is it when it also draws.
        var screen = interactive
            ? TerminalScreen(drawsView: TerminalScreen.isTerminal(STDOUT_FILENO) && !options.quiet && !options.json) : nil
        var view: TerminalScreen? { screen?.drawsView == true ? screen : nil }
        screen?.enter()
        defer { screen?.restore() }
        /// The terminal is gone (an SSH connection dropped, the window closed): the session goes
        /// on to its end — the bell still rings for the person sitting by the speaker — headless,
        /// and writing to a closed pipe no longer ends the process.
        func detachFromTerminal() {
            guard screen != nil else { return }
            screen = nil
            session.interactive = false
            signal(SIGPIPE, SIG_IGN)
        }

        let report = { (notices: [LiveNotice]) in
            for notice in notices {
                if options.json {
                    print(NoticeFormat.json(notice, pattern: pattern.name))
                } else if !options.quiet, let line = NoticeFormat.line(notice, pattern: pattern.name) {
                    if let view {
                        if case .phaseBegan = notice { continue }   // the view shows phases
                        if case .cue = notice { continue }
                        view.log(line)
                    } else {
                        print(line)
                    }
                }
            }
            fflush(nil)
        }

        report(session.start())
        var interrupts = 0
        while !session.isOver {
            var descriptors = [pollfd(fd: signals.wakeFileDescriptor, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: session.eventsReadyDescriptor, events: Int16(POLLIN), revents: 0)]
            if screen != nil { descriptors.append(pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)) }
            _ = poll(&descriptors, nfds_t(descriptors.count), wakeAfterMilliseconds(session, view: view))
            let keys = descriptors.count > 2 ? descriptors[2].revents : 0
            if keys & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                detachFromTerminal()
            } else if keys & Int16(POLLIN) != 0 {
                for key in KeyInput.read() {
                    switch key {
                    case .togglePause: report(session.togglePause())
                    case .skip: report(session.send(.skip))
                    case .stop: report(session.send(.stop))
                    }
                }
            }
            for signal in signals.take() {
                switch signal {
                case .interrupt(let count):
                    interrupts += count
                    if interrupts == 1 {
                        report(session.send(.stop))
                    } else {
                        report(session.halt())
                    }
                case .terminate:
                    interrupts += 1
                    if interrupts == 1 {
                        report(session.send(.stop))
                    } else {
                        report(session.halt())
                    }
                case .stopRequested:
                    report(session.send(.pause))
                    // Let the fade finish before the process stops, so the audio goes quiet.
                    for _ in 0..<20 {
                        usleep(10_000)
                        let notices = session.poll()
                        report(notices)
                        if notices.contains(where: \.isPaused) { break }
                    }
                    screen?.suspend()
                    SignalWatcher.stopProcess()
                    screen?.resume()
                case .hangup:
                    detachFromTerminal()
                case .continued, .resized:
                    break
                }
            }
            report(session.poll())
            if let view { view.draw(StatusLines.render(status(of: session), width: view.width)) }
        }
        session.waitUntilDone()
        report(session.poll())
        screen?.finish()
        if !options.json { print(NoticeFormat.summary(session.summary, timing: session.timing)) }
        if case .failed(let failure, _) = session.state {
            printError(failure.message)
            return ExitStatus.unavailable
        }
        return 0
    }

    /// Sleep until the view shows something new. Keys, signals and the audio thread's reports
    /// (its doorbell) wake the loop at once, so without a view nothing else needs it: it looks
    /// once a minute all the same. Waking costs more CPU than anything done once awake, so a
    /// quiet session wakes rarely.
    static func wakeAfterMilliseconds<Device>(_ session: LiveSession<Device>, view screen: TerminalScreen?) -> Int32 {
        var seconds = 60.0
        if let screen { seconds = min(seconds, StatusLines.secondsUntilChange(status(of: session), width: screen.width)) }
        return Int32(max(5, (seconds * 1000).rounded(.up)))
    }

    static func status<Device>(of session: LiveSession<Device>) -> LiveStatus {
        let pattern = session.plan.timeline.pattern
        let position = session.position
        let phase = pattern.phases[min(position.phase, pattern.phases.count - 1)]
        let previous = pattern.phases[(position.phase + pattern.phases.count - 1) % pattern.phases.count]
        let activity: LiveStatus.Activity = switch session.state {
        case .idle, .preparing: .preparing
        case .active: .playing
        case .paused: .paused
        case .completing, .completed: .completing
        case .failed(let failure, _): .waitingForDevice(message: failure.message)
        }
        return LiveStatus(patternName: pattern.name, phaseName: phase.name, phaseIndex: position.phase, phaseCount: pattern.phases.count,
                          cycle: position.cycle + 1, cycleCount: session.plan.timeline.cycleCount,
                          phaseElapsed: position.phaseElapsedSeconds, phaseLength: position.phaseLengthSeconds,
                          sessionElapsed: position.sessionElapsedSeconds, sessionLength: position.sessionLengthSeconds,
                          motion: phase.motion, previousMotion: previous.motion, activity: activity)
    }
}
