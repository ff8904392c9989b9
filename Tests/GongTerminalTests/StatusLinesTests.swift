import Glibc
import GongCore
import Testing

@testable import GongTerminal

@Suite struct StatusLinesTests {
    static func status(
        motion: BreathMotion = .still, previous: BreathMotion = .still, activity: LiveStatus.Activity = .playing,
        elapsed: Double = 60, length: Double = 240
    ) -> LiveStatus {
        LiveStatus(
            patternName: "two-phase", phaseName: "meditation", phaseIndex: 0, phaseCount: 2, cycle: 1, cycleCount: 1,
            phaseElapsed: elapsed, phaseLength: length, sessionElapsed: elapsed, sessionLength: 1080,
            motion: motion, previousMotion: previous, activity: activity)
    }

    @Test func aMeditationShowsPhaseTimeLeftProgressAndKeys() {
        let lines = StatusLines.render(Self.status(), width: 80)
        #expect(lines[0] == "two-phase  ·  meditation")
        #expect(lines[1] == "3:00 left in meditation  ·  17:00 left in the session")
        #expect(lines[2].hasSuffix("  5%"))
        #expect(lines.last == "space pause · s skip · q stop")
        #expect(lines.count == 4, "no breathing bar for a still phase")
    }

    @Test func theBreathingBarGrowsOnInhaleShrinksOnExhaleAndHoldsWhereTheBreathIs() {
        #expect(StatusLines.breathFraction(Self.status(motion: .inhale, elapsed: 1, length: 4)) == 0.25)
        #expect(StatusLines.breathFraction(Self.status(motion: .exhale, elapsed: 1, length: 4)) == 0.75)
        #expect(StatusLines.breathFraction(Self.status(motion: .hold, previous: .inhale)) == 1)
        #expect(StatusLines.breathFraction(Self.status(motion: .hold, previous: .exhale)) == 0)
        #expect(StatusLines.breathFraction(Self.status(motion: .still)) == nil)
        let lines = StatusLines.render(Self.status(motion: .inhale, elapsed: 2, length: 4), width: 40)
        #expect(lines[3].hasPrefix("in     "))
    }

    /// The view sleeps until the drawing would change: just before that moment it is the same,
    /// just after it differs — unless the wait was capped at a second or floored at 20 ms.
    @Test(arguments: [(BreathMotion.still, 80), (.still, 24), (.inhale, 80), (.exhale, 30), (.hold, 60)])
    func theViewWakesWhenItsDrawingChangesAndNotBefore(motion: BreathMotion, width: Int) {
        var checked = 0
        for step in 0..<400 {
            let elapsed = 0.013 + Double(step) * 0.537
            let length = motion == .still ? 900.0 : 4.7
            var status = LiveStatus(
                patternName: "p", phaseName: "x", phaseIndex: 0, phaseCount: 1, cycle: 1, cycleCount: 1,
                phaseElapsed: elapsed.truncatingRemainder(dividingBy: length), phaseLength: length,
                sessionElapsed: elapsed, sessionLength: 900, motion: motion, previousMotion: .inhale, activity: .playing
            )
            let wait = StatusLines.secondsUntilChange(status, width: width)
            #expect(wait >= 0.02 && wait <= 1.001)
            let now = StatusLines.render(status, width: width)
            func advanced(by seconds: Double) -> [String] {
                var later = status
                later.phaseElapsed += seconds
                later.sessionElapsed += seconds
                return StatusLines.render(later, width: width)
            }
            if wait > 0.02 { #expect(advanced(by: wait - 0.0015) == now, "unchanged before the wake-up at \(elapsed)") }
            if wait < 1 && status.phaseElapsed + wait < length {
                #expect(advanced(by: wait + 0.0005) != now, "changed right after the wake-up at \(elapsed)")
                checked += 1
            }
            status.activity = .paused
            #expect(StatusLines.secondsUntilChange(status, width: width) == 1, "a paused view waits for events")
        }
        #expect(checked > 100)
    }

    @Test func barsAreExactAtTheEndsAndSmoothBetween() {
        #expect(StatusLines.bar(0, width: 4) == "░░░░")
        #expect(StatusLines.bar(1, width: 4) == "████")
        #expect(StatusLines.bar(0.5, width: 4) == "██░░")
        #expect(StatusLines.bar(0.56, width: 4) == "██▏░")
        #expect(StatusLines.bar(.nan, width: 3) == "░░░")
    }

    @Test func pausedCompletingAndAWaitingDeviceSaySo() {
        #expect(
            StatusLines.render(Self.status(activity: .paused), width: 80).last
                == "paused — space to resume · s skip · q stop")
        #expect(
            StatusLines.render(Self.status(activity: .completing), width: 80).last?.hasPrefix("ringing out") == true)
        #expect(
            StatusLines.render(Self.status(activity: .waitingForDevice(message: "pulse: gone")), width: 80).last
                == "waiting for the audio device: pulse: gone")
    }

    @Test(arguments: [20, 40, 80, 200])
    func noLineIsWiderThanTheTerminal(width: Int) {
        for motion in BreathMotion.allCases {
            for line in StatusLines.render(
                Self.status(motion: motion, activity: .waitingForDevice(message: String(repeating: "x", count: 300))),
                width: width)
            {
                #expect(line.count <= width, "\(line)")
            }
        }
    }

    @Test func timeLeftNeverGoesNegative() {
        let lines = StatusLines.render(Self.status(elapsed: 300, length: 240), width: 80)
        #expect(lines[1].hasPrefix("0:00 left in meditation"))
    }

    @Test func redrawRewritesOnlyChangedLines() {
        #expect(StatusLines.redraw(from: [], to: ["a", "b"]) == "\ra\u{1B}[K\n\rb\u{1B}[K\n")
        #expect(StatusLines.redraw(from: ["a", "b"], to: ["a", "c"]) == "\u{1B}[2F\u{1B}[1E\rc\u{1B}[K\n")
        #expect(StatusLines.redraw(from: ["a", "b", "c"], to: ["a"]) == "\u{1B}[3F\u{1B}[1E\u{1B}[J")
    }
}

@Suite struct KeyInputTests {
    @Test func spaceSAndQAreTheCommandsAndEscapeSequencesAreSkippedWhole() {
        #expect(KeyInput.keys(in: Array(" sq".utf8)) == [.togglePause, .skip, .stop])
        #expect(KeyInput.keys(in: Array("SQ".utf8)) == [.skip, .stop])
        // Up arrow (ESC [ A), F5 (ESC [ 1 5 ~), ESC O P: none of their letters count.
        #expect(KeyInput.keys(in: [0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x31, 0x35, 0x7E, 0x1B, 0x4F, 0x50, 0x71]) == [.stop])
        #expect(KeyInput.keys(in: Array("xyz".utf8)).isEmpty)
    }
}

@Suite(.serialized) struct SignalWatcherTests {
    @Test func signalsArriveAsEventsAndCountInterrupts() {
        let watcher = SignalWatcher()
        defer { watcher.uninstall() }
        raise(SIGINT)
        raise(SIGWINCH)
        #expect(watcher.take() == [.interrupt(count: 1), .resized])
        raise(SIGINT)
        raise(SIGINT)
        #expect(watcher.take() == [.interrupt(count: 2)])
        raise(SIGTERM)
        #expect(watcher.take() == [.terminate])
        raise(SIGHUP)
        #expect(watcher.take() == [.hangup], "a dropped terminal is caught, not fatal")
        #expect(watcher.take().isEmpty)
    }
}
