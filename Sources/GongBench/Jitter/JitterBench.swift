import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

/// `gong bench jitter`: plays a real session — a cue every `cueEverySeconds` — on a device and
/// measures what its timing is made of (see `JitterAnalysis` for each definition), beside
/// `busyThreads` spinning threads if asked.
public struct JitterBench: Sendable {
    public var options: SessionOptions
    public var durationSeconds: Rational
    public var busyThreads: Int
    public var cueEverySeconds: Rational = 2
    public var sound = "woodblock"

    public init(options: SessionOptions, durationSeconds: Rational, busyThreads: Int) {
        self.options = options
        self.durationSeconds = durationSeconds
        self.busyThreads = busyThreads
    }

    /// Where a run stands, for a progress line.
    public struct Progress: Sendable {
        public var elapsedSeconds: Double
        public var plannedSeconds: Double
        public var periods: Int
        public var underruns: Int
    }

    /// The session: `durationSeconds` long, a cue every `cueEverySeconds` from its first frame
    /// (a shorter run is one cue), with the silence left over before the first.
    public var pattern: Pattern {
        let every = min(cueEverySeconds, durationSeconds)
        let cycles = max(1, Int(durationSeconds.doubleValue / every.doubleValue))
        let lead = durationSeconds.subtracting(every.multiplied(by: Rational(Int64(cycles))) ?? .zero) ?? .zero
        return Pattern(
            name: "bench-jitter", summary: "a \(sound) every \(DurationText.format(every))",
            warmUp: lead.isPositive ? lead : .zero, phases: [Phase("tick", length: every, cue: Cue(sound))],
            length: .cycles(cycles))
    }

    /// Runs the session to its end and reports. `progress` is called about ten times a second.
    /// Asked to stop by `interruption`, it stops playing and reports what it measured, as
    /// cyclictest does on Ctrl-C.
    public func run(
        bank: SoundBank, interruption: BenchInterruption = BenchInterruption(), progress: (Progress) -> Void = { _ in }
    ) throws(GongError) -> JitterReport {
        do { try options.validate() } catch { throw .setting(error) }
        let request = options.request
        // The route decides the device, as for any session (`OutputRoute`).
        return try withoutActuallyEscaping(progress) { progress throws(GongError) in
            try OutputRoute(device: request.device).open(
                request, with: Measuring(bench: self, bank: bank, interruption: interruption, progress: progress))
        }
    }

    private struct Measuring: DeviceOpenerUser {
        let bench: JitterBench
        let bank: SoundBank
        let interruption: BenchInterruption
        let progress: (Progress) -> Void

        func use<Device: PCM>(_ open: @escaping @Sendable () throws(AudioDeviceError) -> Device) throws(GongError)
            -> JitterReport
        {
            try bench.measure(bank: bank, interruption: interruption, progress: progress, open: open)
        }
    }

    private func measure<Device: PCM>(
        bank: SoundBank, interruption: BenchInterruption, progress: (Progress) -> Void,
        open: @escaping @Sendable () throws(AudioDeviceError) -> Device
    ) throws(GongError) -> JitterReport {
        let device: Device
        do { device = try open() } catch { throw .device(error) }
        let configuration = device.configuration
        let plan = try SessionPlan(
            pattern: pattern, sampleRate: configuration.rate, channels: configuration.channels, bank: bank)
        // Room for ten seconds of the shortest periods: the control side drains it ten times a
        // second.
        let timing = SPSCRing<PeriodTiming>(minimumCapacity: max(1024, 10 * configuration.rate / 16))
        let engine = PlaybackEngine(
            renderer: plan.makeRenderer(masterGainDB: options.gainDB), device: device, reopen: open, timing: timing)
        var measured = Measured(analysis: JitterAnalysis(rate: configuration.rate, paced: configuration.paced))
        var conditions = MachineConditions.current(busyThreads: busyThreads)
        let load = BusyLoad(threads: busyThreads)
        defer { load.stop() }
        let timer = TimerLatency(priority: ThreadPriority.suited(to: configuration))
        let started = MonotonicTime.now()
        engine.start()
        let stoppedEarly = Self.playToTheEnd(
            engine, timing: timing, into: &measured, interruption: interruption, started: started,
            plannedSeconds: Double(plan.totalFrames) / Double(configuration.rate), progress: progress)
        engine.join()
        measured.drain(timing, engine)
        let elapsed = MonotonicTime.now().seconds - started.seconds
        let timerLatency = timer.stop()
        load.stop()
        conditions.loadAverageAfter = MachineConditions.loadAverage()
        return measured.report(
            conditions: conditions, device: configuration, seconds: elapsed, stoppedEarly: stoppedEarly,
            periodRecordsLost: engine.timingRecordsLost, timerLatency: timerLatency)
    }

    /// Drains the engine's periods and events ten times a second, and tells `progress`, until the
    /// session has played (or been cut short by `interruption`: then true).
    private static func playToTheEnd<Device: PCM>(
        _ engine: PlaybackEngine<Device>, timing: SPSCRing<PeriodTiming>, into measured: inout Measured,
        interruption: BenchInterruption, started: MonotonicTime, plannedSeconds: Double,
        progress: (Progress) -> Void
    ) -> Bool {
        var stoppedEarly = false
        while engine.isRunning {
            if interruption.isRequested && !stoppedEarly {
                // Cut short: what played so far is measured; tails need not ring out.
                stoppedEarly = engine.send(.halt)
            }
            var watch = pollfd(fd: engine.eventsReadyDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&watch, 1, 100)
            engine.clearEventsReady()
            measured.drain(timing, engine)
            progress(
                Progress(
                    elapsedSeconds: MonotonicTime.now().seconds - started.seconds, plannedSeconds: plannedSeconds,
                    periods: measured.analysis.periods.count, underruns: measured.analysis.underruns))
        }
        return stoppedEarly
    }

    /// What the run has measured so far, from the engine's period records and events.
    private struct Measured {
        var analysis: JitterAnalysis
        var priority: GrantedPriority?
        var priorityRefused: String?
        var eventsDropped = 0

        /// Takes in every period record and event the engine has posted.
        mutating func drain<Device: PCM>(_ timing: SPSCRing<PeriodTiming>, _ engine: PlaybackEngine<Device>) {
            while let period = timing.tryPop() {
                analysis.add(period)
                if priority == nil { priority = GrantedPriority.of(thread: engine.audioThreadID) }
            }
            while let event = engine.events.tryPop() { take(event, engine) }
        }

        private mutating func take<Device: PCM>(_ event: EngineEvent, _ engine: PlaybackEngine<Device>) {
            switch event {
            case .render(let event, let audible):
                if case .cueStarted = event.kind {
                    analysis.addCue(
                        sessionFrame: event.sessionFrame, outputFrame: event.outputFrame, audible: audible.nanoseconds)
                }
            case .underrun(let lostFrames, _, let at):
                analysis.addUnderrun(lostFrames: lostFrames, at: at.audible.nanoseconds)
            case .clockStopped(_, _, let at):
                // The server's xrun: no frame lost, but no cue is judged across it.
                analysis.addUnderrun(lostFrames: 0, at: at.audible.nanoseconds)
            case .deviceLost(_, let at):
                analysis.addDeviceLoss(at: at.audible.nanoseconds)
                // The device-loss policy for a headless session (`SessionMachine`): closed
                // and opened again from here, and the measurement carries on by itself
                // once it is back (never paused, so nothing to resume).
                engine.closeLostDevice()
                engine.reopenLostDevice()
            case .priorityRefused(let asked, let code):
                priorityRefused =
                    "\(asked == .realtime ? "SCHED_FIFO \(ThreadPriority.realtimeLevel)" : "nice \(ThreadPriority.raisedNice)") refused: \(String(cString: strerror(code)))"
            case .eventsDropped(let count):
                eventsDropped += Int(count)
            case .heardLate(let from, let to, let frames):
                // A cue already told among them is judged where it was really heard.
                analysis.addHeardLate(fromOutputFrame: from, toOutputFrame: to, frames: frames)
            case .started, .suspendRecovered, .deviceBack, .finished:
                break
            }
        }

        func report(
            conditions: MachineConditions, device configuration: PCMConfiguration, seconds elapsed: Double,
            stoppedEarly: Bool, periodRecordsLost: Int, timerLatency: Distribution
        ) -> JitterReport {
            let fit = analysis.clockFit
            let periodSeconds = Double(configuration.periodFrames) / Double(configuration.rate)
            let render = analysis.renderTime
            return JitterReport(
                conditions: conditions,
                device: JitterReport.DeviceGranted(configuration),
                priority: priority, priorityRefused: priorityRefused,
                seconds: elapsed, stoppedEarly: stoppedEarly, periods: analysis.periods.count,
                periodRecordsLost: periodRecordsLost, eventsDropped: eventsDropped,
                wakeLatency: analysis.wakeLatency, timerLatency: timerLatency, renderTime: render,
                renderP99ShareOfPeriod: render.p99.map { $0 / 1e6 / periodSeconds },
                deviceClock: JitterReport.DeviceClock(
                    reports: fit?.reports ?? 0, settlingReports: fit?.settlingReports ?? 0, driftPPM: fit?.driftPPM,
                    jitter: fit?.jitter ?? Distribution(count: 0)),
                cuesPlayed: analysis.cuesPlayed, cueError: analysis.cueError,
                underruns: analysis.underruns, underrunsPerHour: Double(analysis.underruns) / (elapsed / 3600),
                framesLost: analysis.framesLost, deviceLosses: analysis.deviceLosses,
                series: JitterReport.Series(analysis, fit: fit))
        }
    }
}
