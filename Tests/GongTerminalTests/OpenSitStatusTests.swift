import GongCore
import Testing

@testable import GongTerminal

@Suite struct OpenSitStatusTests {
    /// An open sit counts what was sat, with no time left or bar towards a length it does not have.
    @Test func anOpenSitShowsTheTimeSatAndHowToEndIt() {
        var status = StatusLinesTests.status(elapsed: 450.4, length: 86400)
        status.isOpen = true
        let lines = StatusLines.render(status, width: 80)
        #expect(lines[1] == "7:30 sat  ·  open-ended: q ends it with the end cue")
        #expect(lines.count == 3, "no progress bar")
        let wait = StatusLines.secondsUntilChange(status, width: 80)
        #expect(abs(wait - 0.601) < 1e-9, "wakes as the clock crosses 7:31")
        status.sessionElapsed += wait
        #expect(StatusLines.render(status, width: 80)[1].hasPrefix("7:31 sat"))
    }
}

@Suite struct StartDelayStatusTests {
    /// While a start delay runs, the view counts down to the start cue and wakes each second.
    @Test func aStartDelayCountsDownToTheStartCue() {
        var status = StatusLinesTests.status(elapsed: 0, length: 900)
        status.startsIn = 27.25
        let lines = StatusLines.render(status, width: 80)
        #expect(lines[1] == "starting in 0:28  ·  the start cue then")
        #expect(lines.count == 3, "no progress bar before the sit")
        let wait = StatusLines.secondsUntilChange(status, width: 80)
        #expect(abs(wait - 0.251) < 1e-9)
        status.startsIn = 27.25 - wait
        #expect(StatusLines.render(status, width: 80)[1].hasPrefix("starting in 0:27"))
    }
}
