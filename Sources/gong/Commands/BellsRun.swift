import Glibc
import GongAudio
import GongCore
import GongKit
import GongPractice
import GongTerminal

/// `gong bells` running: what `BellsLoop` decides, carried out with the timer, the ringing
/// processes, the control socket and the history. One thread, sleeping on one wall-clock timer
/// between bells (see `BellRinger` for why no Swift task or Dispatch queue may start here).
final class BellsRun {
    let command: BellsCommand
    private var loop: BellsLoop
    let alarm: BellAlarm
    let signals: SignalWatcher
    let control: BellControlSocket
    let ringer: BellRinger
    let history: SessionHistory?

    init(
        command: BellsCommand, loop: BellsLoop, alarm: BellAlarm, signals: SignalWatcher, control: BellControlSocket,
        ringer: BellRinger, history: SessionHistory?
    ) {
        self.command = command
        self.loop = loop
        self.alarm = alarm
        self.signals = signals
        self.control = control
        self.ringer = ringer
        self.history = history
    }

    /// Rings, skips and waits until a stop is asked for (true) or no bell is left (false).
    func run() -> Bool {
        while true {
            switch loop.next(at: BellAlarm.clocks()) {
            case .carryOut(let decision): carryOut(decision)
            case .wait(let wakeAt):
                switch alarm.wait(untilWall: wakeAt, watching: [signals.wakeFileDescriptor, control.descriptor]) {
                case .readable(control.descriptor): serveControl()
                case .readable: _ = loop.handle(signals.take())
                case .due, .clockSet: break
                }
            case .stop: return true
            case .noBellLeft: return false
            }
        }
    }

    /// Rings the bell (or not, when it was skipped), then says and records what became of it.
    private func carryOut(_ decision: BellDecision) {
        var heard: BellRinger.Heard?
        if decision.outcome == .ring {
            // A stop asked for while a bell rings is passed on to its process, and ends the bells
            // after it; `gong ctl` is answered meanwhile.
            let watch = BellRinger.Watch(
                signals: signals.wakeFileDescriptor,
                forward: { self.loop.handle(self.signals.take()) ? SIGTERM : nil },
                control: control.descriptor, serve: serveControl)
            heard = ringer.ring(decision.bell, watch: watch)
        }
        loop.carriedOut(decision, failed: heard?.failure != nil)
        command.report(decision, heard: heard)
        let record: BellRecord =
            switch decision.outcome {
            case .ring:
                BellRecord(
                    decision.bell, outcome: heard?.failure == nil ? "rung" : "failed", reason: heard?.failure,
                    offMs: heard?.offMs)
            case .skipped(let why): BellRecord(decision.bell, outcome: "skipped", reason: why.rawValue)
            }
        do { try history?.save(bell: record) } catch {
            printError("\(error.description); this bell is not recorded")
        }
        // After the history has it, so a subscriber that asks for the day's `plan` sees it.
        control.publish(BellsCommand.bellLine(decision, heard: heard))
    }

    /// A schedule taken from the socket kept in config.toml too, so the bells started again ring
    /// by it; the reply says where (`savedTo`), or why not (`notSaved`), and which of this
    /// process's own flags would still win over the file when it starts again (`flagsWin`).
    private func keep(_ rules: BellRules, in fields: inout [String: AnyJSON]) {
        do {
            fields["savedTo"] = .string(try GongConfig.saveSchedule(rules))
        } catch {
            fields["notSaved"] = .string(error.description)
            printError("bells: the schedule is not kept in config.toml: \(error.description)")
        }
        let flags = (try? command.flagRules().keys) ?? []
        let winning = BellRules.scheduleKeys.filter(flags.contains).map { "--\($0.rawValue)" }
        if !winning.isEmpty { fields["flagsWin"] = .string(winning.joined(separator: " ")) }
    }

    /// Answers one request on the control socket; a change it made is told to the subscribers
    /// after the reply is written to the asker.
    private func serveControl() {
        var change: String?
        control.serveOne { line in
            let (id, parsed) = BellRequest.parse(line)
            let request: BellRequest
            switch parsed {
            case .failure(let failure): return (BellControlSocket.reply(id: id, failure: failure), false)
            case .success(let taken): request = taken
            }
            let now = BellAlarm.clocks().wall / 1_000_000_000
            let answer = loop.answer(request, now: now)
            if let day = answer.planDay {
                let date = String(CivilDate.text(day: day, wallSecond: 0).prefix(10))
                let records = (try? history?.bells(onDay: date)) ?? []
                return (BellControlSocket.reply(id: id, bells: loop.plan(day: day, records: records, now: now)), false)
            }
            if let failure = answer.failure { return (BellControlSocket.reply(id: id, failure: failure), false) }
            if let said = answer.said { command.say(said) }
            var fields = answer.fields
            if case .schedule = request { keep(loop.keeper.plan.rules, in: &fields) }
            // What the bells have cost so far: this process, waiting, and the processes that rang.
            fields["cpuMs"] = .number(BellsCommand.cpuMilliseconds(RUSAGE_SELF))
            fields["ringingCpuMs"] = .number(BellsCommand.cpuMilliseconds(RUSAGE_CHILDREN))
            if answer.changed {
                var event = fields
                event["schema"] = AnyJSON(SessionEvent.schemaVersion)
                event["type"] = "bellsChanged"
                event["request"] = .string(request.name)
                change = AnyJSON.object(event).text()
            }
            return (BellControlSocket.reply(id: id, bells: fields), answer.subscribes)
        }
        if let change { control.publish(change) }
    }
}
