import GongKit
import GongTerminal
import Testing

@testable import gong

/// The live loop's steps, with no terminal, session or clock: each input and the actions it asks
/// the player to carry out.
@Suite struct LiveLoopTests {
    @Test func keysCommandTheSessionInTheirOrder() {
        var loop = LiveLoop(waitingToStart: false)
        let actions = loop.handle(.keys([.togglePause, .skip, .stop]))
        #expect(actions == [.send(.togglePause), .send(.skip), .send(.stop)])
    }

    @Test func aResumedSessionWaitsForSpaceOrIsLeftForLater() {
        var waiting = LiveLoop(waitingToStart: true)
        let actions = waiting.handle(.keys([.skip]))
        #expect(actions == [])
        let actions2 = waiting.handle(.keys([.togglePause]))
        #expect(actions2 == [.begin])
        #expect(!waiting.waitingToStart)
        let actions3 = waiting.handle(.keys([.togglePause]))
        #expect(actions3 == [.send(.togglePause)])

        var leaving = LiveLoop(waitingToStart: true)
        let actions4 = leaving.handle(.keys([.stop]))
        #expect(actions4 == [.leave])
        var interrupted = LiveLoop(waitingToStart: true)
        let actions5 = interrupted.handle([.resized, .terminate])
        #expect(actions5 == [.leave])
    }

    @Test func theFirstInterruptStopsAndAnyLaterOneHalts() {
        var loop = LiveLoop(waitingToStart: false)
        let actions = loop.handle(.signalled)
        #expect(actions == [.takeSignals])
        let actions2 = loop.handle([.interrupt(count: 1)])
        #expect(actions2 == [.send(.stop)])
        let actions3 = loop.handle([.terminate])
        #expect(actions3 == [.send(.halt)])
        #expect(loop.interrupts == 2)

        var twice = LiveLoop(waitingToStart: false)
        let actions4 = twice.handle([.interrupt(count: 2)])
        #expect(actions4 == [.send(.halt)])
    }

    /// Ctrl-Z: the pause fades, and the process stops once the `paused` event is out, or when the
    /// fade's time is up, whichever comes first, and only once.
    @Test func ctrlZStopsTheProcessOnceThePauseIsOut() {
        var loop = LiveLoop(waitingToStart: false)
        let actions = loop.handle([.stopRequested])
        #expect(actions == [.pauseToStop])
        let actions2 = loop.pauseSent(taken: true)
        #expect(actions2 == [.stopWhenFaded])
        #expect(loop.stopping)
        let paused = SessionEvent(.paused, frame: 48_000)
        let actions3 = loop.handle(.event(paused))
        #expect(actions3 == [.show(paused), .stopProcess])
        #expect(!loop.stopping)
        let actions4 = loop.handle(.stopDue)
        #expect(actions4 == [])
        let actions5 = loop.handle(.event(paused))
        #expect(actions5 == [.show(paused)])
    }

    @Test func ctrlZStopsAtTheFadesTimeWhenNoPauseEventCame() {
        var loop = LiveLoop(waitingToStart: false)
        _ = loop.pauseSent(taken: true)
        let actions = loop.handle(.event(SessionEvent(.resumed)))
        #expect(actions == [.show(SessionEvent(.resumed))])
        let actions2 = loop.handle(.stopDue)
        #expect(actions2 == [.stopProcess])
        let actions3 = loop.handle(.stopDue)
        #expect(actions3 == [])
    }

    @Test func ctrlZStopsAtOnceWhenThereIsNothingToPause() {
        var loop = LiveLoop(waitingToStart: false)
        let actions = loop.pauseSent(taken: false)
        #expect(actions == [.stopProcess])
        #expect(!loop.stopping)
    }

    @Test func theRestOfTheInputsEachHaveTheirAction() {
        var loop = LiveLoop(waitingToStart: false)
        let actions = loop.handle(.terminalGone)
        #expect(actions == [.detach])
        let actions2 = loop.handle([.hangup, .continued])
        #expect(actions2 == [.detach])
        let actions3 = loop.handle(.keepingFailed)
        #expect(actions3 == [.sayUnsaid])
        let line = #"{"command": "status"}"#
        let actions4 = loop.handle(.control(line))
        #expect(actions4 == [.reply(to: line)])
        let actions5 = loop.handle(.control(nil))
        #expect(actions5 == [.reply(to: nil)])
        let actions6 = loop.handle(.redraw)
        #expect(actions6 == [])
        let actions7 = loop.handle(.over)
        #expect(actions7 == [.end])
        #expect(loop.report == nil)
    }
}
