import Dispatch
import Foundation
import Glibc
import GongCore
import Synchronization

/// Plays a session on a device from one real-time thread.
///
/// The thread owns the renderer and the device. Each period it takes the control side's
/// commands from a lock-free ring, renders one period into a buffer allocated up front, converts
/// it to the device's format, writes it, and reports what happened — with the CLOCK_MONOTONIC
/// time each event is heard, from the device's status — through a second ring. In steady state
/// it allocates nothing and takes no locks; its system calls are the device's and the doorbells'.
///
/// Faults: an underrun (`-EPIPE`, or a gap seen in the device's timestamps) is recovered and the
/// session clock moved on by the frames lost, so later cues stay on schedule; a suspend is
/// recovered; a device that is gone (`-ENODEV`, `-EIO`, endless `-EAGAIN` or timeouts) pauses the
/// session, closes the device and retries opening it with backoff — sleeping, never spinning.
/// What follows (resume, wait for the person, ring out) is the session state machine's to
/// decide: it sends the commands.
///
/// Taking back: on a device that can replace what it has not played yet (gong's PulseAudio
/// client), the buffer is long — few wake-ups, a busy machine survived — and a command is not
/// made to wait behind it. The renderer's state is kept at every step of `takeBackStepSeconds`;
/// a command rings the audio thread awake, which takes back what is still out of the device's
/// reach, goes back to the checkpoint there, applies the command, and renders again. The
/// renderer's events are held until they are out of reach too, so the control side never hears
/// of a cue that was taken back.
///
/// What the audio thread must never call once it plays (reopening a lost device, where the
/// session is silent anyway, is the one exception):
/// - `malloc`, `free`, or anything that may: Swift arrays, strings, classes, closures that
///   capture, `print`, string interpolation, `Data`, Foundation;
/// - a lock: `Mutex`, `NSLock`, `DispatchQueue.sync`, a semaphore's `wait`, `pthread_mutex_*`;
/// - the file system, the network, logging, or `poll` on anything but the device and the
///   command doorbell;
/// - the Swift runtime's slow paths: `as?` to an existential, a generic not specialised,
///   `Task`, actors, `await`;
/// - anything without a bound on how long it takes: unbounded loops, sleeps other than the
///   device's wait.
/// It talks to the control side only through the two lock-free rings and the doorbells, and the
/// render path is compiled with `@_noAllocation @_noLocks`, which makes the compiler refuse most
/// of the above there.
///
/// `@unchecked Sendable`: the renderer and the device belong to the audio thread alone once it
/// runs (the control side touches them only before `start` and after `join`); everything the
/// two sides share is a lock-free ring, a doorbell or an atomic.
public final class PlaybackEngine<Device: PCM>: @unchecked Sendable {
    public typealias DeviceOpener = @Sendable () throws(AudioDeviceError) -> Device

    /// The command ring (sent with `send`, which also wakes the audio thread, whose device wait
    /// watches the command bell), the event ring and its bell, and the steps of the real-time
    /// path `PullEngine` takes too.
    private let link = EngineLink()
    /// The audio thread's side of the link: take commands, apply, render, report.
    private let audio: EngineLink.AudioSide
    private var commands: SPSCRing<RenderCommand> { link.commands }
    /// Audio → control; `eventsReadyDescriptor` turns readable when something was put here.
    public var events: SPSCRing<EngineEvent> { link.events }
    private var commandBell: Doorbell { link.commandBell }
    private var eventBell: Doorbell { link.eventBell }

    private let renderer: UnsafeMutablePointer<SessionRenderer>
    private var checkpoints: RenderCheckpoints
    private var held: HeldEvents
    private var device: Device?
    private let reopen: DeviceOpener
    private let channels: Int
    private let rate: Int
    private let periodFrames: Int
    /// Where the fade after a device loss is rendered, unheard.
    private let unheardBlock: UnsafeMutableBufferPointer<Float>
    private let done = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let periods = Atomic<Int>(0)
    private let threadID = Atomic<Int32>(0)
    /// Where each period's timing goes when someone measures it (see `PeriodTiming`).
    private let timing: SPSCRing<PeriodTiming>?
    private let timingLost = Atomic<Int>(0)

    /// How long writes may keep failing with `-EAGAIN` or waits time out before the device is
    /// considered gone.
    public static var stallSeconds: Double { 2 }
    /// Backoff between attempts to reopen a lost device: 100 ms doubling to 5 s.
    public static var firstRetryMilliseconds: Int { 100 }
    public static var maxRetryMilliseconds: Int { 5000 }
    /// How often the device clock is read once it is known. Through a sound server every read
    /// wakes the server's client thread too: read every 40 ms, it cost a tenth of the CPU of a
    /// 10 ms session (measured against aplay). Five a second still follow drift, and confirm a gap
    /// within 0.4 s.
    static var statusIntervalSeconds: Double { 0.2 }
    /// How finely a take-back can land: the renderer's state is kept this often. 10 ms is far
    /// below what a person notices and costs a copy of a few voices per step.
    static var takeBackStepSeconds: Double { 0.010 }

    /// - Parameters:
    ///   - renderer: the session; must be at the device's rate and channel count.
    ///   - device: an open device.
    ///   - reopen: opens the same device again after it was lost.
    ///   - timing: a ring that takes a `PeriodTiming` for every period played, for a measurement;
    ///     a full ring loses the period's record (counted in `timingRecordsLost`), never waits.
    public init(
        renderer: consuming SessionRenderer, device: Device, reopen: @escaping DeviceOpener,
        timing: SPSCRing<PeriodTiming>? = nil
    ) {
        let configuration = device.configuration
        precondition(
            configuration.rate == renderer.sampleRate && configuration.channels == renderer.channels,
            "the renderer must be prepared at the device's rate and channel count")
        let stepFrames = max(1, Int(PlaybackEngine.takeBackStepSeconds * Double(configuration.rate)))
        // Enough steps to reach back over a whole buffer and the period being written, twice
        // over in case a device reopened after a loss grants a longer one.
        checkpoints = RenderCheckpoints(
            capacity: 2 * (configuration.bufferFrames + configuration.periodFrames) / stepFrames + 4, for: renderer)
        held = HeldEvents(capacity: 4096)
        self.renderer = .allocate(capacity: 1)
        self.renderer.initialize(to: renderer)
        audio = link.audioSide
        self.device = device
        self.reopen = reopen
        self.timing = timing
        channels = configuration.channels
        rate = configuration.rate
        periodFrames = configuration.periodFrames
        unheardBlock = .allocate(capacity: configuration.periodFrames * configuration.channels)
    }

    deinit {
        renderer.deinitialize(count: 1)
        renderer.deallocate()
        unheardBlock.deallocate()
    }

    /// Sends a command to the audio thread and wakes it. False when the ring is full (the
    /// audio thread is not taking commands).
    @discardableResult
    public func send(_ command: RenderCommand) -> Bool {
        link.send(command)
    }

    /// Commands sent and not yet taken by the audio thread (at most this many; it takes them
    /// once a period), of `commandCapacity`. Read by the sender, the ring's one producer.
    public var pendingCommands: Int { commands.approximateCount }
    public var commandCapacity: Int { commands.capacity }

    /// Readable when the audio thread has reported something since `clearEventsReady`.
    public var eventsReadyDescriptor: Int32 { eventBell.descriptor }

    /// Call before taking the events a wake-up announced.
    public func clearEventsReady() { eventBell.drain() }

    public var isRunning: Bool { running.load(ordering: .acquiring) }
    /// Periods written to the device so far (for monitoring and benchmarks).
    public var periodsPlayed: Int { periods.load(ordering: .relaxed) }
    /// The audio thread's kernel thread id once it runs (0 before): where /proc keeps its CPU
    /// time and scheduling, for monitoring and tests.
    public var audioThreadID: Int32 { threadID.load(ordering: .acquiring) }
    /// Periods whose `PeriodTiming` found the timing ring full.
    public var timingRecordsLost: Int { timingLost.load(ordering: .relaxed) }

    /// Starts the audio thread.
    public func start() {
        running.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            audioThread()
            done.signal()
        }
        // Named by the thread itself, once its priority is set (see `audioThread`).
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Waits for the audio thread to finish.
    public func join() {
        done.wait()
        done.signal()  // later joins return at once
    }

    // MARK: The audio thread

    private func audioThread() {
        // The bell rings once more when the thread has ended, so a control side that sleeps on
        // it learns that `isRunning` turned false without looking again later.
        defer {
            running.store(false, ordering: .releasing)
            eventBell.ring()
        }
        // Signals are the control side's business: keep them off this thread, whose every
        // system call is the device's.
        var blocked = sigset_t()
        sigfillset(&blocked)
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        // Its priority first: whoever finds the thread by its name finds it at that priority.
        if let device { requestPriority(for: device.configuration) }
        // Named for `top -H`; its id (the last part of /proc/thread-self) for whoever watches it.
        let comm = open("/proc/thread-self/comm", O_WRONLY)
        if comm >= 0 {
            _ = write(comm, "gong audio", 10)
            close(comm)
        }
        var link = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &link, link.count - 1)
        let path = String(decoding: link.prefix(max(0, length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let id = path.split(separator: "/").last.flatMap({ Int32($0) }) { threadID.store(id, ordering: .releasing) }
        let converterCapacity = periodFrames * channels
        while let device {
            let outcome = play(
                on: device,
                converter: SampleConverter(format: device.configuration.format, capacitySamples: converterCapacity))
            switch outcome {
            case .finished:
                return
            case .deviceLost(let code, let at):
                device.close()
                self.device = nil
                report(.deviceLost(code: code, at: at))
                silenceAfterLoss()
                guard let replacement = reopenWithBackoff() else { return }
                self.device = replacement
            }
        }
    }

    private enum Outcome {
        case finished
        case deviceLost(code: Int32, at: SessionMoment)
    }

    /// The steady-state loop: wait for room, apply commands, render, convert, write, report.
    private func play(on device: Device, converter: borrowing SampleConverter) -> Outcome {
        var renderEvents = RenderEventBuffer(capacity: 256)
        var writtenFrames: Int64 = 0  // frames handed to this device (less those taken back)
        var renderedBase: Int64 = renderer.pointee.outputFrame  // renderer's frame at device frame 0
        var stalledSince: MonotonicTime?
        var announcedStart = false
        var convertedSilence = false  // the converter's bytes hold a silent period
        let configuration = device.configuration
        // A device that counts the silence it played in place of ours tells each underrun's cost
        // to the frame; for any other the clock measures it.
        var silenceCounted = device.silenceHeardFrames()
        var clock = DeviceClock(
            rate: rate, reportJitterNanoseconds: configuration.reportJitterNanoseconds,
            measuresGaps: silenceCounted == nil)
        let frameBytes = channels * configuration.format.bytesPerSample
        let bufferNanoseconds = FrameTime.nanoseconds(ofFrames: Int64(configuration.bufferFrames), rate: Int64(rate))
        let playStart = MonotonicTime.now()
        let block = converter.renderBuffer
        let statusPeriods = max(
            1, Int((PlaybackEngine.statusIntervalSeconds * Double(rate) / Double(periodFrames)).rounded()))
        let statusInterval = Int64(statusPeriods * periodFrames)
        var nextStatusFrame: Int64 = 0
        // A device that can take back keeps the renderer's state every step, and its events
        // until a take-back can no longer reach them; one that cannot hands them on at once.
        let takesBack = configuration.takesBack
        let stepFrames = takesBack ? max(1, Int(PlaybackEngine.takeBackStepSeconds * Double(rate))) : periodFrames
        checkpoints.removeAll()
        device.wakeWhenReadable(commandBell.descriptor)

        /// What an underrun lost: counted by the device (taken in between periods, by
        /// `takeInCountedLoss`), or shown once it plays again, its frames then heard later than
        /// the clock expected. Devices without timestamps (unpaced ones) lose a period by
        /// convention.
        func noteRecoveredUnderrun(_ renderEvents: inout RenderEventBuffer) {
            guard silenceCounted == nil else { return }
            if clock.originNanoseconds == nil {
                reportUnderrun(lostFrames: Int64(periodFrames), heard: 0, renderEvents: &renderEvents)
            } else {
                clock.noteReportedUnderrun()
            }
        }
        /// The silence a counting device played in place of ours since the last look: the
        /// session moves on by exactly that. Known at once, while what was written after it is
        /// still in gong's hands: that is taken back and rendered again further on, so a cue
        /// already written is heard on its time too, not late by the loss. Between periods only,
        /// where what the renderer made is all written.
        func takeInCountedLoss(_ renderEvents: inout RenderEventBuffer) {
            guard let counted = silenceCounted, let silence = device.silenceHeardFrames(), silence > counted else {
                return
            }
            silenceCounted = silence
            takeBack()
            clock.lost(frames: silence - counted)
            reportUnderrun(
                lostFrames: silence - counted, heard: clock.audibleNanoseconds(ofDeviceFrame: writtenFrames) ?? 0,
                renderEvents: &renderEvents)
        }
        /// Moves the block's events behind those held, handing the oldest on if there is no room.
        func hold(_ renderEvents: inout RenderEventBuffer) {
            for index in 0..<renderEvents.count {
                while !held.append(renderEvents[index]) { release(held.removeFirst()) }
            }
            renderEvents.removeAll()
        }
        /// Tells the control side of an event, heard at the device clock's origin plus the
        /// frame's place in the stream (0 while the clock is unknown).
        func release(_ event: RenderEvent?) {
            guard let event else { return }
            let audible = clock.audibleNanoseconds(ofDeviceFrame: event.outputFrame - renderedBase) ?? 0
            report(.render(event, audible: MonotonicTime(nanoseconds: audible)))
        }
        /// Hands on the held events a take-back could not reach now (all of them on a device
        /// that cannot take back): about when they are heard, a little before.
        func releaseOutOfReach() {
            let reach = takesBack ? Int64(device.rewindableFrames() + stepFrames) : 0
            while let first = held.first, first.outputFrame - renderedBase < writtenFrames - reach {
                release(held.removeFirst())
            }
        }
        /// Goes back as far as the device still can (to a step boundary, never before an event
        /// already handed on), so the commands about to be applied are heard at once.
        func takeBack() {
            guard takesBack, checkpoints.count > 0 else { return }
            let reach = Int64(device.rewindableFrames())
            guard reach > 0,
                let index = checkpoints.oldest(
                    atOrAfter: renderedBase + writtenFrames - reach, minimumTag: held.released)
            else { return }
            let frames = renderer.pointee.outputFrame - checkpoints.outputFrame(at: index)
            guard frames > 0, device.rewind(frames: Int(frames)) == Int(frames) else { return }
            held.truncate(toNumber: checkpoints.tag(at: index))
            renderer.pointee.restore(checkpoint: index, from: &checkpoints)
            writtenFrames -= frames
        }
        /// The device is gone: the session will carry on from the renderer's frame, and the
        /// silence begins when what was written to the device runs out. What the renderer did
        /// that never reached a listener (a phase, a cue, the session's end) is still reported,
        /// unheard (no time), so the control side's state follows the renderer's.
        func lost(_ code: Int32, _ renderEvents: inout RenderEventBuffer) -> Outcome {
            hold(&renderEvents)
            let now = MonotonicTime.now().nanoseconds
            while let event = held.removeFirst() {
                let audible = clock.audibleNanoseconds(ofDeviceFrame: event.outputFrame - renderedBase) ?? 0
                let heard = audible > 0 && audible <= now
                report(.render(event, audible: MonotonicTime(nanoseconds: heard ? audible : 0)))
            }
            return .deviceLost(
                code: code, at: moment(heard: clock.audibleNanoseconds(ofDeviceFrame: writtenFrames) ?? 0))
        }

        while true {
            takeInCountedLoss(&renderEvents)
            // A halt fades out over a few milliseconds and finishes like any session: the
            // renderer ends, the device drains, `finished` is reported.
            if let command = audio.takeCommand() {
                takeBack()
                audio.apply(startingWith: command, to: &renderer.pointee, events: &renderEvents)
                // What was rendered before the commands would undo them if gone back to.
                checkpoints.removeAll()
                hold(&renderEvents)
            }
            if renderer.pointee.isFinished && renderEvents.count == 0 {
                while let event = held.removeFirst() { release(event) }
                _ = device.drain()
                let finishedAt = device.status()?.timestamp ?? .now()
                report(.finished(lastFrameAudible: finishedAt))
                return .finished
            }

            let ready = device.wait(timeoutMs: 200)
            if ready == PCMWait.woken { continue }
            if ready < 0 {
                switch recoverable(ready, device: device, renderEvents: &renderEvents) {
                case .retry: continue
                case .underrun:
                    noteRecoveredUnderrun(&renderEvents)
                    continue
                case .lost(let code): return lost(code, &renderEvents)
                }
            }
            if ready == 0 {
                if let since = stalledSince, MonotonicTime.now().seconds - since.seconds > PlaybackEngine.stallSeconds {
                    return lost(-EAGAIN, &renderEvents)
                }
                if stalledSince == nil { stalledSince = .now() }
                continue
            }

            let woke = timing == nil ? 0 : MonotonicTime.now().nanoseconds
            // One period, in steps with the renderer's state kept before each.
            let silent = audio.render(
                &renderer.pointee, into: block, frames: periodFrames, stepFrames: stepFrames, events: &renderEvents,
                saving: takesBack, checkpoints: &checkpoints, eventsHeld: held.appended)
            // Most of a session is silence between gongs: a silent period already converted
            // need not be converted again.
            let bytes =
                silent && convertedSilence ? UnsafeRawPointer(converter.bytes) : converter.convert(count: block.count)
            convertedSilence = silent
            let rendered = timing == nil ? 0 : MonotonicTime.now().nanoseconds
            var offset = 0
            while offset < periodFrames {
                let written = device.writeInterleaved(bytes + offset * frameBytes, frames: periodFrames - offset)
                if written >= 0 {
                    offset += written
                    stalledSince = nil
                    continue
                }
                if Int32(written) == -EAGAIN {
                    if stalledSince == nil { stalledSince = .now() }
                    if let since = stalledSince,
                        MonotonicTime.now().seconds - since.seconds > PlaybackEngine.stallSeconds
                    {
                        return lost(-EAGAIN, &renderEvents)
                    }
                    _ = device.wait(timeoutMs: 50)
                    continue
                }
                switch recoverable(Int32(written), device: device, renderEvents: &renderEvents) {
                case .retry:
                    continue
                case .underrun:
                    noteRecoveredUnderrun(&renderEvents)
                    continue
                case .lost(let code): return lost(code, &renderEvents)
                }
            }
            writtenFrames += Int64(periodFrames)
            periods.add(1, ordering: .relaxed)
            let periodWritten = timing == nil ? 0 : MonotonicTime.now().nanoseconds

            // A device that takes frames faster than real time (ALSA's null) has no clock to
            // learn: its events carry no time.
            let elapsed = MonotonicTime.now().nanoseconds - playStart.nanoseconds
            let paced =
                FrameTime.nanoseconds(ofFrames: writtenFrames, rate: Int64(rate)) <= elapsed + bufferNanoseconds
                + 500_000_000
            // Until the device has consumed a couple of periods beyond its first full buffer it
            // may not really be playing yet (PulseAudio's null sink wakes up to 2 s late), so
            // its timestamps only count from then on.
            let consuming = writtenFrames >= Int64(configuration.bufferFrames + 2 * periodFrames)
            // The device clock is read every period until it is known, then every 0.2 s.
            let statusDue = writtenFrames >= nextStatusFrame || clock.originNanoseconds == nil
            // A report may be a little old (a sound server's is its last timing reply): what it
            // says is still to be heard now must be no more than the buffer could hold.
            let status = paced && consuming && statusDue ? device.status() : nil
            if status != nil { nextStatusFrame = writtenFrames + statusInterval }
            if let status, status.state == .running, status.timestamp.nanoseconds > 0,
                case let age = MonotonicTime.now().nanoseconds - status.timestamp.nanoseconds, age >= 0,
                age < 1_000_000_000,
                status.delayFrames >= 0,
                Int64(status.delayFrames) - FrameTime.frames(inNanoseconds: age, rate: Int64(rate))
                    <= Int64(4 * configuration.bufferFrames + rate / 10)
            {
                if let lostFrames = clock.observe(
                    writtenFrames: writtenFrames, delayFrames: status.delayFrames,
                    measuredAt: status.timestamp.nanoseconds)
                {
                    reportUnderrun(
                        lostFrames: lostFrames, heard: clock.audibleNanoseconds(ofDeviceFrame: writtenFrames) ?? 0,
                        renderEvents: &renderEvents)
                }
                if !announcedStart, let origin = clock.originNanoseconds {
                    announcedStart = true
                    report(.started(firstFrameAudible: MonotonicTime(nanoseconds: origin)))
                }
            }
            if let timing {
                var record = PeriodTiming(
                    woke: woke, rendered: rendered, written: periodWritten,
                    framesBefore: writtenFrames - Int64(periodFrames), clockOrigin: clock.originNanoseconds ?? 0)
                if let status {
                    record.statusTimestamp = status.timestamp.nanoseconds
                    record.statusDelayFrames = Int64(status.delayFrames)
                    record.statusWrittenFrames = writtenFrames
                }
                if !postTimingFromAudioThread(record, to: timing) { timingLost.add(1, ordering: .relaxed) }
            }
            hold(&renderEvents)
            releaseOutOfReach()
            renderedBase = renderer.pointee.outputFrame - writtenFrames
        }
    }

    /// Tells the control side, and rings for it. A full ring loses the event (the control side
    /// stopped taking them) and says so when there is room again.
    private func report(_ event: EngineEvent) {
        audio.report(event)
    }

    private enum Recovery {
        case retry
        case underrun
        case lost(code: Int32)
    }

    /// Underruns and suspends are recovered here; anything else means the device is gone.
    private func recoverable(_ error: Int32, device: Device, renderEvents: inout RenderEventBuffer) -> Recovery {
        switch -error {
        case EINTR:
            return .retry
        case EPIPE:
            guard device.recover(error) >= 0 else { return .lost(code: error) }
            return .underrun
        case ESTRPIPE:
            guard device.recover(error) >= 0 else { return .lost(code: error) }
            report(.suspendRecovered(at: moment(heard: MonotonicTime.now().nanoseconds)))
            return .retry
        default:
            return .lost(code: error)
        }
    }

    /// Moves the session clock on by the audio lost; `heard` (nanoseconds, 0 if unknown) is when
    /// the session is heard again.
    private func reportUnderrun(lostFrames: Int64, heard: Int64, renderEvents: inout RenderEventBuffer) {
        let silent = renderer.pointee.lifecycle != .playing
        renderer.pointee.apply(.advance(frames: lostFrames), events: &renderEvents)
        checkpoints.removeAll()  // going back before the advance would undo it
        report(.underrun(lostFrames: lostFrames, silent: silent, at: moment(heard: heard)))
    }

    /// Where the session stands now, heard at `heard` (CLOCK_MONOTONIC nanoseconds, 0 if unknown).
    private func moment(heard: Int64) -> SessionMoment {
        SessionMoment(sessionFrame: renderer.pointee.sessionFrame, audible: MonotonicTime(nanoseconds: heard))
    }

    /// A lost device pauses the session where it is: complete the short fade-out unheard, so
    /// that when the device returns the session is paused, not mid-fade.
    private func silenceAfterLoss() {
        var renderEvents = RenderEventBuffer(capacity: 64)
        renderer.pointee.apply(.pause, events: &renderEvents)
        var guardBlocks = 0
        while renderer.pointee.lifecycle == .pausing && guardBlocks < 64 {
            _ = renderer.pointee.render(into: unheardBlock, events: &renderEvents)
            guardBlocks += 1
        }
        for index in 0..<renderEvents.count {
            report(.render(renderEvents[index], audible: .now()))
        }
    }

    /// Tries to open the device again, sleeping 100 ms, 200 ms, … up to 5 s between attempts.
    /// A stop or halt while waiting ends the session.
    private func reopenWithBackoff() -> Device? {
        var delay = PlaybackEngine.firstRetryMilliseconds
        var attempts: Int32 = 0
        while true {
            var slept = 0
            while slept < delay {
                usleep(20_000)
                slept += 20
                var ignored = RenderEventBuffer(capacity: 16)
                while let command = audio.takeCommand() {
                    if command == .halt || command == .stop {
                        renderer.pointee.apply(.halt, events: &ignored)
                        report(.finished(lastFrameAudible: .now()))
                        return nil
                    }
                    renderer.pointee.apply(command, events: &ignored)
                }
            }
            attempts += 1
            if let device = try? reopen(), device.configuration.rate == rate, device.configuration.channels == channels
            {
                report(.deviceBack(attempts: attempts, at: moment(heard: MonotonicTime.now().nanoseconds)))
                return device
            }
            delay = min(PlaybackEngine.maxRetryMilliseconds, delay * 2)
        }
    }

    /// Asks once, for the first device, and says so if refused.
    private func requestPriority(for configuration: PCMConfiguration) {
        guard let priority = ThreadPriority.suited(to: configuration) else { return }
        let refusal = priority.apply()
        if refusal != 0 { report(.priorityRefused(priority, code: refusal)) }
    }
}
