import FoundationEssentials
import Glibc
import GongAudio
import GongCore

/// A person's command the session could not even consider: the command ring was all but full
/// (the audio thread had not yet taken the ones before it). Nothing changed, and no event says
/// so: it is told to whoever sent the command (`CommandRefusal.Reason.busy`).
struct CommandRingFull: Error {}

extension SessionEvent {
    /// What the audio side did, on its session frame and when that frame is heard.
    init(_ kind: Kind, at moment: SessionMoment) {
        self.init(kind, frame: moment.sessionFrame, audible: moment.audibleSeconds)
    }
}

/// Where the session is now, for the live view.
struct LivePosition: Sendable, Equatable {
    var phase: Int
    var cycle: Int
    var phaseElapsedSeconds: Double
    var phaseLengthSeconds: Double
    var sessionElapsedSeconds: Double
    var sessionLengthSeconds: Double
}

/// A session playing live, inside `GongSession` (the facade the CLI and embedding tools drive;
/// this type is GongKit's own): on an audio device (`PlaybackEngine`, whose thread pushes to
/// it), or into a host's own callback (`PullEngine`, which the host pulls frames from).
///
/// The control side calls `send` for the person's commands and `poll` when the engine's doorbell
/// rings to learn what the audio side did; the state machine is fed from both, and its effects are
/// carried out here, in one place. Both answer with the `SessionEvent`s tools see, made here and
/// only passed on by `GongSession.events()`, the CLI and the C ABI. Both engines report the same
/// events through the same ring; a pull engine never reports a lost device, so those paths stay
/// unused there.
///
/// The engine is held as `any SessionEngine`, so the facade holds a session of either kind
/// without a protocol over this type: every call on the engine is on the control side, where a
/// dynamic dispatch costs nothing that matters.
final class LiveSession {
    let plan: SessionPlan
    let configuration: PCMConfiguration
    /// Interactive sessions wait for the person after an interruption; headless ones carry on.
    /// A session whose terminal went away becomes headless.
    var interactive: Bool
    private(set) var machine: SessionMachine
    private(set) var timing: CueTiming
    private(set) var position: LivePosition

    /// The engine the audio side runs (for a pulled session, what the host's calls reach).
    let engine: any SessionEngine
    private var anchor: (sessionFrame: Int64, audible: MonotonicTime)?
    private var clockRunning = false
    private var previousCue: (sessionFrame: Int64, audible: MonotonicTime)?
    /// A cue played before the device clock was known (the start gong on frame 0): placed in
    /// time when the clock's first report comes, since until the first pause, skip or lost audio
    /// session frame f is the device's frame f.
    private var unplacedCueFrame: Int64?
    /// The device clock has been known since the session's first frame.
    private var deviceClockKnown = false
    private var finishedNotified = false
    private var skippedFrames: Int64 = 0
    /// The session frame of the audio side's latest event: where the session stands if the
    /// audio thread ends without its renderer saying so.
    private var latestSessionFrame: Int64 = 0
    /// Cues told lately, which a loss behind them may yet show were heard late (`heardLate`
    /// reaches back at most a buffer and a period from what was written).
    private var toldCues: [ToldCue] = []
    /// Stretches of output heard late by a loss, whose events may still be to come.
    private var lateStretches: [(from: Int64, to: Int64, frames: Int64)] = []
    /// The most any cue was heard late behind a loss (its `cueHeardLate`): the report counts it
    /// with the cues that started late.
    private var mostHeardLate: Int64 = 0

    private struct ToldCue {
        var outputFrame: Int64
        var sessionFrame: Int64
        var sound: Int32
        var lateFrames: Int64
        var audible: MonotonicTime
    }

    /// Every cue's scheduled frame and sound, in order, and the first not yet heard: what may be
    /// announced ahead (`cueAhead`).
    private let cueOnsets: [(frame: Int64, sound: String)]
    private var nextCue = 0
    /// The latest frame the device reported and when it is heard, as reported (`anchor` may
    /// hold a resume at "now" instead, for the position shown): where announcements count from.
    private var lastHeard: (sessionFrame: Int64, audible: MonotonicTime)?
    /// Cues announced and not yet heard: the audible second each was announced for.
    private var announced: [Int64: Double] = [:]
    /// Pauses, resumes and skips sent to the audio side and not yet reported done: until they
    /// are, the clock's place is not known, so nothing is announced. (A move-on is never
    /// reported: a session moved on announces nothing after.)
    private var clockCommandsInFlight = 0
    /// Audio was lost, a device went or came back, a suspend: the device's clock is not where the
    /// last report put it until the next report says where it is.
    private var clockUnsure = false

    /// On a device. - Parameter open: opens the device; called again to reopen it after a loss.
    convenience init<Device: PCM>(
        pattern: Pattern, bank: SoundBank, masterGainDB: Double, interactive: Bool, startSeconds: Double = 0,
        open: @escaping @Sendable () throws(AudioDeviceError) -> Device
    ) throws(GongError) {
        let device: Device
        do {
            device = try open()
        } catch {
            throw .device(error)
        }
        let configuration = device.configuration
        let plan = try SessionPlan(
            pattern: pattern, sampleRate: configuration.rate, channels: configuration.channels, bank: bank,
            startSeconds: startSeconds)
        self.init(
            plan: plan, configuration: configuration, interactive: interactive,
            engine: PlaybackEngine(
                renderer: plan.makeRenderer(masterGainDB: masterGainDB), device: device, reopen: open))
    }

    /// Pulled by a host: `rate` and `channels` are what it pulls. Returns the session and the
    /// engine the host's `render` calls reach.
    static func pulling(
        pattern: Pattern, bank: SoundBank, masterGainDB: Double, interactive: Bool, startSeconds: Double = 0,
        rate: Int, channels: Int
    ) throws(GongError) -> (session: LiveSession, engine: PullEngine) {
        let plan = try SessionPlan(
            pattern: pattern, sampleRate: rate, channels: channels, bank: bank, startSeconds: startSeconds)
        // No device: the host's buffer is the period, whatever size it asks for, and nothing is
        // buffered by gong. The host's `heardAt` is taken as exact as a device clock's report.
        let configuration = PCMConfiguration(
            device: "pull", rate: rate, channels: channels, format: .float32, periodFrames: 0, bufferFrames: 0,
            reportJitterNanoseconds: 2_000_000)
        let engine = PullEngine(renderer: plan.makeRenderer(masterGainDB: masterGainDB))
        return (LiveSession(plan: plan, configuration: configuration, interactive: interactive, engine: engine), engine)
    }

    private init(plan: SessionPlan, configuration: PCMConfiguration, interactive: Bool, engine: any SessionEngine) {
        self.plan = plan
        self.configuration = configuration
        machine = SessionMachine(timeline: plan.timeline)
        timing = CueTiming(
            sampleRate: configuration.rate, reportJitterSeconds: Double(configuration.reportJitterNanoseconds) / 1e9,
            confirmsFrames: configuration.confirmsFrames)
        self.interactive = interactive
        self.engine = engine
        cueOnsets = plan.timeline.cueOnsets.map { ($0.frame, plan.timeline.sounds[Int($0.trigger.sound)]) }
        position = LivePosition(
            phase: 0, cycle: 0, phaseElapsedSeconds: 0, phaseLengthSeconds: 0, sessionElapsedSeconds: 0,
            sessionLengthSeconds: plan.timeline.plannedSeconds)
        updatePosition(now: .now())
    }

    var state: SessionState { machine.state }
    var isOver: Bool {
        switch machine.state {
        case .completed: !engine.isRunning
        case .failed(let failure, _): failure.reason == .fatal && !engine.isRunning
        default: false
        }
    }

    /// Starts playback; the first event reports what the device granted.
    func start() -> [SessionEvent] {
        var events = feed(.prepare, from: .control)
        engine.start()
        events += feed(.start, from: .control)
        clockRunning = true
        events.insert(
            SessionEvent(
                .started(
                    pattern: plan.timeline.pattern.name, device: configuration.device, rate: configuration.rate,
                    channels: configuration.channels, format: configuration.format.rawValue,
                    latencyMs: configuration.latencySeconds * 1000)), at: 0)
        return events
    }

    /// The person's commands: `.pause`, `.resume`, `.skip`, `.stop`. A command the current state
    /// does not accept (resume while playing) changes nothing and comes back as `.ignored`.
    @discardableResult
    func send(_ input: SessionInput) throws(CommandRingFull) -> [SessionEvent] {
        guard hasRoomForCommand else { throw CommandRingFull() }
        let before = machine.state
        var events = feed(input, from: .person)
        if input == .stop, machine.state != before { events.append(SessionEvent(.stopping)) }
        // A cue announced may now never sound, or sound at another time: withdrawn at once,
        // before the audio side has even taken the command (announced again once it reports).
        let taken = !events.contains { if case .ignored = $0.kind { true } else { false } }
        if taken, input == .pause || input == .skip || input == .stop { events += withdrawCuesAhead() }
        return events
    }

    /// Toggles pause: what the space bar does.
    func togglePause() throws(CommandRingFull) -> [SessionEvent] {
        if case .paused = machine.state { return try send(.resume) }
        return try send(.pause)
    }

    /// Stops at once, cutting tails (a second Ctrl-C). A session already ringing out needs no
    /// stop first: the halt cuts its tails and it completes.
    @discardableResult
    func halt() -> [SessionEvent] {
        let events = SessionMachine.accepts(.stop, in: machine.state.kind) ? feed(.stop, from: .person) : []
        engine.send(.halt)
        return events + withdrawCuesAhead()
    }

    /// Sets the master gain; the renderer fades there over `SessionRenderer.rampSeconds` (a
    /// device that takes back plays it at once, any other after what it holds).
    @discardableResult
    func setGain(decibels: Double) -> Bool {
        guard hasRoomForCommand else { return false }
        return engine.send(.setGain(decibelsToGain(decibels)))
    }

    /// Moves the session clock on by `frames` at once, as an underrun does but with nothing lost:
    /// the cues after are heard that much sooner. Only while it plays (the renderer ignores it
    /// otherwise).
    /// Nil when refused; else what to tell (a session moved on announces no cue after: where
    /// the move lands is never reported, so the cues announced are withdrawn).
    func moveOn(frames: Int64) -> [SessionEvent]? {
        guard hasRoomForCommand, frames > 0, engine.send(.advance(frames: frames)) else { return nil }
        clockCommandsInFlight += 1
        return withdrawCuesAhead()
    }

    /// Room kept in the command ring for what the session itself must send (a halt, the resume
    /// that lets a paused session's end ring out): a command the audio thread never gets would
    /// leave the machine and the renderer disagreeing, so a person's command is refused first.
    static var reservedCommands: Int { 8 }

    /// False when commands are sent faster than the audio thread takes them (a tool sending
    /// hundreds at once): a person's command is then refused rather than lost.
    private var hasRoomForCommand: Bool {
        engine.pendingCommands <= engine.commandCapacity - Self.reservedCommands
    }

    /// Brings `position` up to `now` without draining the audio thread's reports: it follows the
    /// frames rendered, not the reports (see `updatePosition`).
    func refreshPosition(now: MonotonicTime = .now()) {
        updatePosition(now: now)
    }

    /// Waits until the audio thread has finished.
    func waitUntilDone() {
        engine.join()
    }

    /// The facade is letting the session go (after `halt`): a pulled session is pulled no more,
    /// and ends here; a device's audio thread ends by itself.
    func abandon() {
        engine.abandon()
    }

    /// Drains the audio thread's events into the state machine; returns what to tell the person.
    func poll(now: MonotonicTime = .now()) -> [SessionEvent] {
        var events: [SessionEvent] = []
        engine.clearEventsReady()
        while let event = engine.events.tryPop() {
            events += handle(event)
        }
        updatePosition(now: now)
        return events + announceCuesAhead(now: now)
    }

    var summary: SessionSummary { counted(machine.summary) }

    /// The machine's summary with the cues heard late behind a loss counted among the late ones:
    /// a cue heard late is never reported on time, in its events or in the verdict.
    private func counted(_ summary: SessionSummary) -> SessionSummary {
        var summary = summary
        summary.maxCueLatenessFrames = max(summary.maxCueLatenessFrames, mostHeardLate)
        return summary
    }

    /// Readable when the audio thread has reported something `poll` has not taken yet: a
    /// control loop sleeps on it rather than guessing when the next report comes. (Reports come
    /// about when they are heard: on a device that takes back, once out of a take-back's reach.)
    var eventsReadyDescriptor: Int32 { engine.eventsReadyDescriptor }

    // MARK: Private

    /// Where an input comes from decides what a rejected one becomes.
    private enum Origin {
        /// The person: a command that does not apply now is ignored, and they are told.
        case person
        /// This session's own sequencing (prepare, start) or the audio side: the machine should
        /// never reject these, and if it does the event says it is a bug.
        case control, audio
    }

    private func feed(_ input: SessionInput, from origin: Origin) -> [SessionEvent] {
        let effects: [SessionEffect]
        do {
            effects = try machine.handle(input)
        } catch {
            // Only the person's commands have a name to be ignored under; any other input the
            // machine refuses is a bug.
            if origin == .person, let command = SessionCommand.Name(error.input) {
                return [SessionEvent(.ignored(command: command, state: error.from))]
            }
            return [SessionEvent(.internalError(input: error.input, state: error.from))]
        }
        var events: [SessionEvent] = []
        for effect in effects {
            switch effect {
            case .sendToAudio(let command):
                if command == .pause || command == .resume || command == .skipPhase { clockCommandsInFlight += 1 }
                engine.send(command)
            case .announce(let state):
                if case .completed(let summary) = state, !finishedNotified {
                    finishedNotified = true
                    events.append(SessionEvent(.finished(SessionReport(summary: counted(summary), timing: timing))))
                }
            case .closeDevice:
                engine.closeLostDevice()
            case .reopenDevice:
                engine.reopenLostDevice()
            }
        }
        return events
    }

    private func handle(_ event: EngineEvent) -> [SessionEvent] {
        switch event {
        case .render(let renderEvent, _): latestSessionFrame = renderEvent.sessionFrame
        case .underrun(_, _, let at), .clockStopped(_, _, let at), .suspendRecovered(let at), .deviceLost(_, let at),
            .deviceBack(_, let at):
            latestSessionFrame = at.sessionFrame
        case .started, .priorityRefused, .finished, .eventsDropped, .heardLate: break
        }
        switch event {
        case .started(let audible): return deviceStarted(audible: audible)
        case .render(let renderEvent, let audible):
            if audible.nanoseconds > 0 {
                anchor = (renderEvent.sessionFrame, audible)
                lastHeard = (renderEvent.sessionFrame, audible)
                clockUnsure = false
            }
            defer {
                // Events come in the order they are heard: none is to come from a stretch behind
                // this one.
                lateStretches.removeAll { $0.to <= renderEvent.outputFrame }
            }
            return handle(renderEvent, audible: audible)
        case .underrun(let lost, let silent, let at):
            breakTimingChain()
            // The cues near the gap move; those after it are placed again from where the device
            // says the first frame after it is heard.
            let withdrawn = withdrawCuesAhead(clockUnsure: at.audible.nanoseconds <= 0)
            if at.audible.nanoseconds > 0 { lastHeard = (at.sessionFrame, at.audible) }
            guard !silent else { return withdrawn }
            return feed(.underrun(lostFrames: lost), from: .audio) + [SessionEvent(.xrun(lostFrames: lost), at: at)]
                + withdrawn
        case .heardLate(let from, let to, let frames): return heardLate(from: from, to: to, frames: frames)
        case .clockStopped(let nanoseconds, let silent, let at):
            // The device lost time, not frames: the cues after it are on their frames, heard
            // later by the stop. An interval across it is not the cues' doing, and not measured;
            // the stop is an xrun of no frames, so the session is not said to be every cue on time.
            breakTimingChain()
            let withdrawn = withdrawCuesAhead(clockUnsure: true)
            guard !silent else { return withdrawn }
            let stopped = Double(nanoseconds) / 1e9
            return feed(.underrun(lostFrames: 0), from: .audio) + [
                SessionEvent(.xrun(lostFrames: 0, clockStoppedSeconds: stopped), at: at)
            ] + withdrawn
        case .suspendRecovered(let at):
            let wasPaused = machine.state.kind == .paused
            let events = feed(.suspended(resume: !interactive), from: .audio)
            return events + [
                SessionEvent(.suspendRecovered(paused: !wasPaused && machine.state.kind == .paused), at: at)
            ] + withdrawCuesAhead(clockUnsure: true)
        case .deviceLost(let code, let at): return deviceLost(code: code, at: at) + withdrawCuesAhead(clockUnsure: true)
        case .deviceBack(_, let at):
            clockUnsure = true
            let events = feed(.deviceReturned(resume: !interactive), from: .audio)
            // The machine decides: a ring-out resumes whoever listens, a pause stays a pause.
            let resumed =
                switch machine.state {
                case .active, .completing, .preparing: true
                default: false
                }
            if resumed { clockRunning = true }
            return events + [SessionEvent(.deviceBack(resumed: resumed), at: at)]
        case .priorityRefused(let priority, let code):
            let asked: SessionEvent.Priority = priority == .realtime ? .realtime : .raised
            return [SessionEvent(.priorityRefused(priority: asked, message: String(cString: strerror(code))))]
        case .finished: return audioFinished()
        case .eventsDropped(let count):
            return [SessionEvent(.eventsLost(count: Int(count)))]
        }
    }

    /// A loss came behind frames the device already held: the cues told among them were heard
    /// `frames` later than said (each is told again, late by as much), and those still to be
    /// told are late by it too.
    private func heardLate(from: Int64, to: Int64, frames: Int64) -> [SessionEvent] {
        guard frames > 0, from < to else { return [] }
        lateStretches.append((from, to, frames))
        var events: [SessionEvent] = []
        let shift = FrameTime.nanoseconds(ofFrames: frames, rate: Int64(configuration.rate))
        for index in toldCues.indices where (from..<to).contains(toldCues[index].outputFrame) {
            toldCues[index].lateFrames += frames
            if toldCues[index].audible.nanoseconds > 0 {
                toldCues[index].audible = MonotonicTime(nanoseconds: toldCues[index].audible.nanoseconds + shift)
            }
            let cue = toldCues[index]
            mostHeardLate = max(mostHeardLate, cue.lateFrames)
            events.append(
                SessionEvent(
                    .cueHeardLate(sound: plan.timeline.sounds[Int(cue.sound)], lateFrames: cue.lateFrames),
                    at: SessionMoment(sessionFrame: cue.sessionFrame, audible: cue.audible)))
        }
        return events
    }

    /// Remembers a cue just told, for a loss behind it to correct; forgets those no loss can
    /// reach any more (more than twice a buffer and a period, and a second, before it).
    private func told(_ cue: ToldCue) {
        let reach = Int64(2 * (configuration.bufferFrames + configuration.periodFrames) + configuration.rate)
        toldCues.removeAll { $0.outputFrame < cue.outputFrame - reach }
        toldCues.append(cue)
    }

    /// The device started: the first time, the session's first frame is heard at `audible`.
    private func deviceStarted(audible: MonotonicTime) -> [SessionEvent] {
        // A device reopened after a loss starts its own clock; the session's first frame
        // was heard long before.
        guard !deviceClockKnown else { return [] }
        deviceClockKnown = true
        if anchor == nil { anchor = (0, audible) }
        if lastHeard == nil { lastHeard = (0, audible) }
        if let frame = unplacedCueFrame, previousCue == nil {
            timing.cuePlaced()
            previousCue = (
                frame,
                MonotonicTime(
                    nanoseconds: audible.nanoseconds
                        + FrameTime.nanoseconds(ofFrames: frame, rate: Int64(configuration.rate)))
            )
        }
        unplacedCueFrame = nil
        return [SessionEvent(.firstFrameAudible, frame: 0, audible: audible.seconds)]
    }

    /// The device went away (`code`, a negative errno): the session waits for it.
    private func deviceLost(code: Int32, at: SessionMoment) -> [SessionEvent] {
        clockRunning = false
        breakTimingChain()
        // The engine's -EAGAIN is its own verdict, not a device's word: nothing was taken
        // for the policy's stall limit (the same whatever the device). strerror would say
        // "Resource temporarily unavailable".
        let reason =
            code == -EAGAIN
            ? "stalled: it took no audio for \(SessionMachine.DeviceLoss.stallSeconds) s"
            : String(cString: strerror(-code))
        let message = "\(configuration.device): \(reason)"
        return feed(.fail(SessionFailure(.deviceLost, message)), from: .audio) + [
            SessionEvent(
                .deviceLost(message: message, reason: AudioDeviceError.Reason(errno: -code), errno: -code), at: at)
        ]
    }

    private func audioFinished() -> [SessionEvent] {
        // The audio thread has ended: the device played its last frame, or a stop ended the
        // wait for a lost device. The renderer's own `finished` has normally completed the
        // session already; if it has not (a stop while the device was gone, or its event lost
        // to a full ring), the session ends here. Anywhere else the audio ended before the
        // session could: it fails, and says so, rather than waiting forever.
        if case .completed = machine.state { return [] }
        if SessionMachine.accepts(.finished, in: machine.state.kind) {
            return feed(.finished(playedFrames: latestSessionFrame - skippedFrames), from: .audio)
        }
        let message = "the audio stopped while the session was \(machine.state.kind.rawValue)"
        return [SessionEvent(.internalError(input: .finished, state: machine.state.kind))]
            + feed(.fail(SessionFailure(.fatal, message)), from: .audio) + [SessionEvent(.failed(message: message))]
    }

    private func handle(_ event: RenderEvent, audible: MonotonicTime) -> [SessionEvent] {
        let timeline = plan.timeline
        let at = SessionMoment(sessionFrame: event.sessionFrame, audible: audible)
        switch event.kind {
        case .phaseBegan(let phase, let cycle):
            let events = feed(event)
            let length = phaseLength(at: event.sessionFrame)
            return events + [
                SessionEvent(
                    .phaseBegan(
                        phase: timeline.pattern.phases[Int(phase)].name, cycle: Int(cycle) + 1,
                        cycles: timeline.cycleCount, seconds: length), at: at)
            ]
        case .cueStarted(let sound, let scheduled):
            // Behind a loss told already, a cue is late by it however its frame was placed.
            let heardLate = lateStretches.reduce(Int64(0)) {
                ($1.from..<$1.to).contains(event.outputFrame) ? $0 + $1.frames : $0
            }
            let late = event.sessionFrame - scheduled + heardLate
            var off: Int64?
            if heardLate > 0 {
                // Late by a loss: no interval is measured to it or from it.
                mostHeardLate = max(mostHeardLate, late)
                breakTimingChain()
            } else {
                off = measureTiming(sessionFrame: event.sessionFrame, audible: audible)
            }
            told(
                ToldCue(
                    outputFrame: event.outputFrame, sessionFrame: event.sessionFrame, sound: sound, lateFrames: late,
                    audible: audible))
            return feed(event) + [
                SessionEvent(.cue(sound: timeline.sounds[Int(sound)], lateFrames: late, offFrames: off), at: at)
            ]
        case .sessionEnded, .finished:
            return feed(event)
        case .paused:
            clockCommandsInFlight = max(0, clockCommandsInFlight - 1)
            clockRunning = false
            breakTimingChain()
            anchor = (event.sessionFrame, audible)
            return [SessionEvent(.paused, at: at)]
        case .resumed:
            // The clock starts again from where it stopped, when the resume is heard (never
            // earlier than now).
            anchor = (event.sessionFrame, max(audible, MonotonicTime.now()))
            clockCommandsInFlight = max(0, clockCommandsInFlight - 1)
            clockRunning = true
            breakTimingChain()
            return [SessionEvent(.resumed, at: at)]
        case .skipped(let frames):
            clockCommandsInFlight = max(0, clockCommandsInFlight - 1)
            skippedFrames += frames
            breakTimingChain()
            return [SessionEvent(.skipped(seconds: Double(frames) / Double(configuration.rate)), at: at)]
        case .voiceStolen:
            return []
        }
    }

    /// Feeds the state machine what a renderer's event means to it (`RenderEvent.sessionInput`;
    /// played time is the session clock less the stretches skipped over).
    private func feed(_ event: RenderEvent) -> [SessionEvent] {
        event.sessionInput(skippedFrames: skippedFrames).map { feed($0, from: .audio) } ?? []
    }

    // MARK: Cues announced ahead

    /// Cues are announced this far past the next one: a cue that follows another closely is
    /// announced well before the one ahead of it is reported.
    static let announceAheadSeconds = 5.0
    /// An announced cue whose estimate moves by more than this (the device's reports jitter, a
    /// better measure of its clock's rate) is announced again.
    static let reannounceSeconds = 0.002

    /// `cueAhead` for each cue not yet heard, up to `announceAheadSeconds` past the next one,
    /// not yet announced for about this time: when it will be heard, from where the device's
    /// latest report places the session's frames, at the device's rate as measured. Only while
    /// the session plays on a clock that nothing in flight is about to move; a pulled session
    /// whose host gives no heard times announces nothing.
    private func announceCuesAhead(now: MonotonicTime) -> [SessionEvent] {
        while nextCue < cueOnsets.count, cueOnsets[nextCue].frame <= latestSessionFrame { nextCue += 1 }
        announced = announced.filter { $0.key > latestSessionFrame }
        guard machine.state.kind == .active, clockRunning, deviceClockKnown, !clockUnsure, clockCommandsInFlight == 0,
            let anchor = lastHeard, anchor.audible.nanoseconds > 0
        else { return [] }
        let ppm = timing.deviceClockPPM.flatMap { abs($0) < CueTiming.plausiblePPM ? $0 : nil } ?? 0
        let rate = Double(configuration.rate) * (1 + ppm / 1_000_000)
        var events: [SessionEvent] = []
        var horizon: Double?
        for cue in cueOnsets[nextCue...] {
            let audible = anchor.audible.seconds + Double(cue.frame - anchor.sessionFrame) / rate
            if let horizon, audible > horizon { break }
            horizon = horizon ?? audible + Self.announceAheadSeconds
            guard audible > now.seconds else { continue }
            if let told = announced[cue.frame], abs(told - audible) <= Self.reannounceSeconds { continue }
            announced[cue.frame] = audible
            events.append(SessionEvent(.cueAhead(sound: cue.sound), frame: cue.frame, audible: audible))
        }
        return events
    }

    /// The cues announced and not yet heard, as they were told: for whoever starts listening
    /// after they were.
    var cuesAhead: [SessionEvent] {
        announced.filter { $0.key > latestSessionFrame }.sorted { $0.key < $1.key }.map { frame, audible in
            let sound = cueOnsets.first { $0.frame == frame }?.sound ?? ""
            return SessionEvent(.cueAhead(sound: sound), frame: frame, audible: audible)
        }
    }

    /// `cuesWithdrawn` when cues were announced that may now not sound when announced (a pause,
    /// skip or stop taken, audio or the device lost): whoever marks them waits for their `cue`
    /// events, or for their announcement again.
    private func withdrawCuesAhead(clockUnsure unsure: Bool = false) -> [SessionEvent] {
        if unsure { clockUnsure = true }
        guard !announced.isEmpty else { return [] }
        announced.removeAll()
        return [SessionEvent(.cuesWithdrawn)]
    }

    /// Audio was lost, paused or skipped: the next cue starts a new chain of intervals.
    private func breakTimingChain() {
        previousCue = nil
        unplacedCueFrame = nil
    }

    /// Records the interval from the previous cue heard in a row; how far off its frame this cue
    /// is heard, when more than the tolerance.
    private func measureTiming(sessionFrame: Int64, audible: MonotonicTime) -> Int64? {
        guard audible.nanoseconds > 0 else {
            if !deviceClockKnown { unplacedCueFrame = sessionFrame }
            return nil
        }
        timing.cuePlaced()
        defer { previousCue = (sessionFrame, audible) }
        guard let previous = previousCue, sessionFrame > previous.sessionFrame else { return nil }
        return timing.record(
            scheduledFrames: sessionFrame - previous.sessionFrame,
            heardSeconds: audible.seconds - previous.audible.seconds)
    }

    /// Seconds from this boundary to the next one (or to the planned end).
    /// The whole length of the phase playing at `frame`, in seconds (a session resumed part way
    /// through a phase still shows the phase's full length).
    private func phaseLength(at frame: Int64) -> Double {
        guard let span = plan.timeline.phaseSpan(containing: frame) else { return 0 }
        return Double(span.count) / Double(configuration.rate)
    }

    /// Where the session stands, from one frame: phase, cycle and their times all follow from it
    /// and the timeline, so they never disagree, and none waits for the audio side's reports
    /// (which a host pulling faster than real time outruns, and which a full ring may drop).
    ///
    /// Pulled, the frame is the one the host has pulled to: the host's frames are the session's
    /// clock, whatever its pace, and its heard times say only when they are heard. On a device,
    /// it is the frame heard now: from the latest report's frame and when it was heard, moved on
    /// by the clock since while the session plays, never past what has been rendered. A device
    /// with no clock (ALSA's null) is taken to hear what it is given, as its events are told.
    private func updatePosition(now: MonotonicTime) {
        let rate = Int64(configuration.rate)
        let rendered = engine.renderedSessionFrame
        var frame = rendered
        if engine.rendersAheadOfHearing, let anchor {
            frame = anchor.sessionFrame
            if clockRunning, now > anchor.audible {
                frame += FrameTime.frames(inNanoseconds: now.nanoseconds - anchor.audible.nanoseconds, rate: rate)
            }
            frame = min(frame, rendered)
        }
        let timeline = plan.timeline
        frame = min(max(0, frame), timeline.plannedEndFrame)
        position.sessionElapsedSeconds = Double(frame) / Double(rate)
        // From the planned end on (the end cue ringing out), the last phase stays, played whole.
        guard let playing = timeline.phase(at: min(frame, timeline.plannedEndFrame - 1)) else {
            // Before the first phase (a start delay): the first, not yet begun.
            (position.phase, position.cycle, position.phaseElapsedSeconds) = (0, 0, 0)
            position.phaseLengthSeconds = 0
            return
        }
        position.phase = playing.phase
        position.cycle = playing.cycle
        position.phaseLengthSeconds = Double(playing.span.count) / Double(rate)
        position.phaseElapsedSeconds = Double(frame - playing.span.lowerBound) / Double(rate)
    }
}
