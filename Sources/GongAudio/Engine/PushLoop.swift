import Glibc
import GongCore
import Synchronization

/// What the audio thread of a `PlaybackEngine` and its control side share besides the link's
/// rings: counts the control side reads, and whether the audio thread has let go of its device.
final class PushShared: Sendable {
    /// Periods written to a device.
    let periods = Atomic<Int>(0)
    /// Periods whose `PeriodTiming` found the timing ring full.
    let timingLost = Atomic<Int>(0)
    /// Set by the audio thread once it no longer touches a device it found gone (before it
    /// reports the loss); cleared by the control side when it hands over another.
    let deviceLetGo = Atomic<Bool>(false)
}

/// The push engine's audio thread, from its first period to its last: it plays on a device,
/// and when the device is lost, waits for the control side to hand over another.
///
/// Read top-down: `run` plays on each device in turn; `play` is one device's loop — take the
/// commands, wait for room, render, write, read the clock — and every step it calls is a method
/// below, in that order. Each carries `@_noAllocation @_noLocks`, so the compiler checks the
/// whole of it; the device's own calls are vouched for in `DeviceCalls`, the clock's and the
/// bell's where they are made. Everything it uses is allocated in `init`, on the control side.
///
/// Non-generic on purpose: the checker refuses calls into unspecialised generic code (they may
/// allocate metadata), so the device is reached through `DeviceCalls`' existential, which costs a
/// dynamic call per device call — a few a period.
///
/// Access: a step that passes one of the loop's fields `inout` (`&renderEvents`) reads the
/// fields it calls through (`renderer`, `audio`) into locals first: the thread-sanitizer build
/// (`make test`'s) refused the two together as overlapping accesses, though the plain build
/// took them.
struct PushLoop: ~Copyable {
    /// How often the device clock is read once it is known. Through a sound server every read
    /// wakes the server's client thread too, so reading often costs CPU for nothing (bench/
    /// RESULTS.md, "Reading the device's status"). Five a second still follow drift, and confirm
    /// a gap within 0.4 s.
    static var statusIntervalSeconds: Double { 0.2 }
    /// How finely a take-back can land: the renderer's state is kept this often. 10 ms is far
    /// below what a person notices and costs a copy of a few voices per step.
    static var takeBackStepSeconds: Double { 0.010 }

    private let audio: EngineLink.AudioSide
    private let handovers: Unmanaged<SPSCRing<DeviceHandover>>
    private let shared: Unmanaged<PushShared>
    private let timing: Unmanaged<SPSCRing<PeriodTiming>>?
    private let renderer: UnsafeMutablePointer<SessionRenderer>
    /// One converter per sample format (at `SampleFormat.slot`): a device handed over after a
    /// loss may take another format, and nothing is allocated for it then.
    private let converters: UnsafeMutablePointer<SampleConverter>
    /// Where a pause while no device plays is rendered, unheard.
    private let unheardBlock: UnsafeMutableBufferPointer<Float>
    private let commandBell: Int32
    private let rate: Int
    private let channels: Int
    private let periodFrames: Int
    private let stallNanoseconds: Int64
    /// The status is read every this many frames once the clock is known: whole periods.
    private let statusIntervalFrames: Int64
    private let takeBackStepFrames: Int
    private var checkpoints: RenderCheckpoints
    private var held: HeldEvents
    private var renderEvents = RenderEventBuffer(capacity: 256)
    /// The device played on now, and what the loop knows of the frames handed to it.
    private var device: DeviceCalls
    private var stream: DeviceStream

    /// What the loop learns of one device from the moment it begins on it (`begin`).
    private struct DeviceStream {
        /// Frames handed to this device, less those taken back.
        var writtenFrames: Int64 = 0
        /// The renderer's output frame at the device's frame 0.
        var renderedBase: Int64
        /// Since when the device has taken nothing (CLOCK_MONOTONIC nanoseconds).
        var stalledSince: Int64?
        var announcedStart = false
        /// The converter's bytes hold a silent period.
        var convertedSilence = false
        /// The silence the device counted so far, for a device that counts it.
        var silenceCounted: Int64?
        /// The time the device's clock stood still so far, for a device that tells it.
        var clockStopCounted: Int64?
        var clock: DeviceClock
        var nextStatusFrame: Int64 = 0
        let frameBytes: Int
        let bufferNanoseconds: Int64
        let playStart: Int64
        /// Frames between the renderer's checkpoints: a step on a device that takes back, else
        /// the period (none are kept).
        let stepFrames: Int
    }

    private enum Outcome {
        case finished
        case deviceLost(code: Int32, at: SessionMoment)
    }

    private enum Room {
        case ready
        /// Woken by a command, a fault recovered, or a wait timed out short of the stall limit.
        case notYet
        case lost(code: Int32)
    }

    private enum Recovery {
        case retry
        case underrun
        case lost(code: Int32)
    }

    /// On the control side, before the thread starts: everything the loop will use.
    init(
        renderer: consuming SessionRenderer, device: DeviceCalls, periodFrames: Int, link: EngineLink,
        handovers: SPSCRing<DeviceHandover>, shared: PushShared, timing: SPSCRing<PeriodTiming>?
    ) {
        rate = renderer.sampleRate
        channels = renderer.channels
        self.periodFrames = periodFrames
        let stepFrames = max(1, Int(Self.takeBackStepSeconds * Double(rate)))
        takeBackStepFrames = stepFrames
        let statusPeriods = max(1, Int((Self.statusIntervalSeconds * Double(rate) / Double(periodFrames)).rounded()))
        statusIntervalFrames = Int64(statusPeriods * periodFrames)
        // Enough steps to reach back over a whole buffer and the period being written, twice
        // over in case a device opened again after a loss grants a longer one.
        checkpoints = RenderCheckpoints(
            capacity: 2 * (device.bufferFrames + periodFrames) / stepFrames + 4, for: renderer)
        held = HeldEvents(capacity: 4096)
        self.renderer = .allocate(capacity: 1)
        self.renderer.initialize(to: renderer)
        converters = .allocate(capacity: SampleFormat.allCases.count)
        for format in SampleFormat.allCases {
            (converters + format.slot).initialize(
                to: SampleConverter(format: format, capacitySamples: periodFrames * channels))
        }
        unheardBlock = .allocate(capacity: periodFrames * channels)
        audio = link.audioSide
        commandBell = link.commandBell.descriptor
        self.handovers = .passUnretained(handovers)
        self.shared = .passUnretained(shared)
        self.timing = timing.map { .passUnretained($0) }
        stallNanoseconds = Int64(SessionMachine.DeviceLoss.stallSeconds) * 1_000_000_000
        self.device = device
        // A placeholder: `begin` starts the stream on the device before the first period.
        stream = DeviceStream(
            renderedBase: 0, clock: DeviceClock(rate: rate, reportJitterNanoseconds: 0), frameBytes: 0,
            bufferNanoseconds: 0, playStart: 0, stepFrames: periodFrames)
    }

    deinit {
        renderer.deinitialize(count: 1)
        renderer.deallocate()
        converters.deinitialize(count: SampleFormat.allCases.count)
        converters.deallocate()
        unheardBlock.deallocate()
    }

    // MARK: The loop

    /// Plays the session on the first device and on every one handed over after a loss, until
    /// it finishes, or is stopped while no device plays.
    @_noAllocation @_noLocks
    mutating func run() {
        while true {
            switch play() {
            case .finished:
                return
            case .deviceLost(let code, let at):
                // Let go before telling: the control side closes the device once it hears.
                shared._withUnsafeGuaranteedRef { $0.deviceLetGo.store(true, ordering: .releasing) }
                audio.report(.deviceLost(code: code, at: at))
                guard let next = awaitHandover() else { return }
                device = next
            }
        }
    }

    /// One device, until the session finishes or the device is lost.
    @_noAllocation @_noLocks
    private mutating func play() -> Outcome {
        begin()
        while true {
            takeInCountedLoss()
            takeCommands()
            // A halt fades out over a few milliseconds and finishes like any session: the
            // renderer ends, the device drains, `finished` is reported.
            if renderer.pointee.isFinished && renderEvents.count == 0, let outcome = finish() { return outcome }
            switch awaitRoom() {
            case .ready: break
            case .notYet: continue
            case .lost(let code): return lost(code)
            }
            let woke = timing == nil ? 0 : MonotonicTime.now().nanoseconds
            let bytes = renderPeriod()
            let rendered = timing == nil ? 0 : MonotonicTime.now().nanoseconds
            if let code = write(bytes) { return lost(code) }
            periodWritten(woke: woke, rendered: rendered)
        }
    }

    // MARK: The steps, in the order the loop takes them

    /// Starts on `device`: its clock unknown, nothing written, the renderer's checkpoints
    /// dropped (they were of frames another device held), the command bell watched by its wait.
    @_noAllocation @_noLocks
    private mutating func begin() {
        // A device that counts the silence it played in place of ours tells each underrun's
        // cost to the frame; for any other the clock measures it.
        let silenceCounted = device.silenceHeardFrames()
        stream = DeviceStream(
            renderedBase: renderer.pointee.outputFrame, silenceCounted: silenceCounted,
            clockStopCounted: device.clockStoppedNanoseconds(),
            clock: DeviceClock(
                rate: rate, reportJitterNanoseconds: device.reportJitterNanoseconds,
                measuresGaps: silenceCounted == nil, keepsEarliest: silenceCounted == nil || device.reportsNeverEarly),
            frameBytes: channels * device.format.bytesPerSample,
            bufferNanoseconds: FrameTime.nanoseconds(ofFrames: Int64(device.bufferFrames), rate: Int64(rate)),
            playStart: MonotonicTime.now().nanoseconds, stepFrames: device.takesBack ? takeBackStepFrames : periodFrames
        )
        checkpoints.removeAll()
        device.wakeWhenReadable(commandBell)
    }

    /// The silence a counting device played in place of ours since the last look: the session
    /// moves on by exactly that. Known at once, while what was written after it is still in
    /// gong's hands: that is taken back and rendered again further on, so a cue already written
    /// is heard on its time too, not late by the loss. Between periods only, where what the
    /// renderer made is all written.
    @_noAllocation @_noLocks
    private mutating func takeInCountedLoss() {
        if let counted = stream.silenceCounted, let silence = device.silenceHeardFrames(), silence > counted {
            stream.silenceCounted = silence
            takeBack()
            stream.clock.lost(frames: silence - counted)
            reportUnderrun(
                lostFrames: silence - counted,
                heard: stream.clock.audibleNanoseconds(ofDeviceFrame: stream.writtenFrames) ?? 0)
        }
        // A clock that stood still skipped no frame: nothing moves on, and nothing written is
        // taken back. Every frame is heard later by as much, which the device clock learns now
        // rather than over the seconds its reports would take to outvote the earlier ones.
        if let counted = stream.clockStopCounted, let stopped = device.clockStoppedNanoseconds(), stopped > counted {
            stream.clockStopCounted = stopped
            stream.clock.stood(nanoseconds: stopped - counted)
            var silent = true
            if case .playing = renderer.pointee.lifecycle { silent = false }
            let heard = stream.clock.audibleNanoseconds(ofDeviceFrame: stream.writtenFrames) ?? 0
            audio.report(.clockStopped(nanoseconds: stopped - counted, silent: silent, at: moment(heard: heard)))
        }
    }

    /// Applies the control side's commands, after taking back what the device still holds so
    /// that they are heard at once.
    @_noAllocation @_noLocks
    private mutating func takeCommands() {
        guard let command = audio.takeCommand() else { return }
        takeBack()
        let (audio, renderer) = (self.audio, self.renderer)  // see `PushLoop`'s note on access
        audio.apply(startingWith: command, to: &renderer.pointee, events: &renderEvents)
        // What was rendered before the commands would undo them if gone back to.
        checkpoints.removeAll()
        hold()
    }

    /// The session is over: lets the device play out what it has, hands on every event held,
    /// and tells when the last frame was heard. A loss the device counts while it plays out is
    /// taken in as while playing: what it still holds is taken back and rendered again on its
    /// time (nil: back to the loop, to render it), so a last cue still in the ring is not heard
    /// late by it. The events are held until then, or the take-back could not reach before them.
    @_noAllocation @_noLocks
    private mutating func finish() -> Outcome? {
        // Only a device that counts its losses tells one here (ALSA's drain fails with -EPIPE
        // after any underrun, and would do so again and again).
        while device.drain() == -EPIPE, stream.silenceCounted != nil {
            takeInCountedLoss()
            if !renderer.pointee.isFinished { return nil }
        }
        while let event = held.removeFirst() { release(event) }
        audio.report(.finished(lastFrameAudible: device.status()?.timestamp ?? MonotonicTime.now()))
        return .finished
    }

    /// Waits for a period of room, at most 200 ms; recovers what can be recovered.
    @_noAllocation @_noLocks
    private mutating func awaitRoom() -> Room {
        let ready = device.wait(timeoutMs: 200)
        if ready == PCMWait.woken { return .notYet }
        if ready < 0 {
            switch recoverable(ready) {
            case .retry: return .notYet
            case .underrun:
                noteRecoveredUnderrun()
                return .notYet
            case .lost(let code): return .lost(code: code)
            }
        }
        if ready == 0 { return stalledTooLong() ? .lost(code: -EAGAIN) : .notYet }
        return .ready
    }

    /// One period, in steps with the renderer's state kept before each (on a device that takes
    /// back), converted to the device's format: what to write.
    @_noAllocation @_noLocks
    private mutating func renderPeriod() -> UnsafeRawPointer {
        let slot = device.format.slot
        let block = converters[slot].renderBuffer
        let (audio, renderer, eventsHeld) = (self.audio, self.renderer, held.appended)
        let silent = audio.render(
            &renderer.pointee, into: block, frames: periodFrames, stepFrames: stream.stepFrames,
            events: &renderEvents, saving: device.takesBack, checkpoints: &checkpoints, eventsHeld: eventsHeld)
        // Most of a session is silence between gongs: a silent period already converted need
        // not be converted again.
        let bytes =
            silent && stream.convertedSilence
            ? UnsafeRawPointer(converters[slot].bytes) : converters[slot].convert(count: block.count)
        stream.convertedSilence = silent
        return bytes
    }

    /// Hands the whole period to the device: a short write is completed, `-EAGAIN` waited out
    /// up to the stall limit, an underrun or a suspend recovered. The device's code if it is gone.
    @_noAllocation @_noLocks
    private mutating func write(_ bytes: UnsafeRawPointer) -> Int32? {
        var offset = 0
        while offset < periodFrames {
            let written = device.write(bytes + offset * stream.frameBytes, frames: periodFrames - offset)
            if written >= 0 {
                offset += written
                stream.stalledSince = nil
                continue
            }
            if Int32(written) == -EAGAIN {
                if stalledTooLong() { return -EAGAIN }
                _ = device.wait(timeoutMs: 50)
                continue
            }
            switch recoverable(Int32(written)) {
            case .retry: continue
            case .underrun: noteRecoveredUnderrun()
            case .lost(let code): return code
            }
        }
        return nil
    }

    /// A period is written: count it, read the device clock when it is due, record the period's
    /// timing for whoever measures, and hand on the events now out of a take-back's reach.
    @_noAllocation @_noLocks
    private mutating func periodWritten(woke: Int64, rendered: Int64) {
        stream.writtenFrames += Int64(periodFrames)
        shared._withUnsafeGuaranteedRef { _ = $0.periods.add(1, ordering: .relaxed) }
        let written = timing == nil ? 0 : MonotonicTime.now().nanoseconds
        let status = readClock()
        if let timing {
            var record = PeriodTiming(
                woke: woke, rendered: rendered, written: written,
                framesBefore: stream.writtenFrames - Int64(periodFrames),
                clockOrigin: stream.clock.originNanoseconds ?? 0)
            if let status {
                record.statusTimestamp = status.timestamp.nanoseconds
                record.statusDelayFrames = Int64(status.delayFrames)
                record.statusWrittenFrames = stream.writtenFrames
            }
            if !timing._withUnsafeGuaranteedRef({ postTimingFromAudioThread(record, to: $0) }) {
                shared._withUnsafeGuaranteedRef { _ = $0.timingLost.add(1, ordering: .relaxed) }
            }
        }
        hold()
        releaseOutOfReach()
        stream.renderedBase = renderer.pointee.outputFrame - stream.writtenFrames
    }

    /// Reads the device's status when due — every period until the clock is known, then every
    /// `statusIntervalSeconds` — and learns from it: an underrun a server hid, and when the
    /// session's first frame is heard. The status, if one was read and the clock took it (a
    /// report of a stream not playing, or too old, places nothing: whoever measures the clock
    /// from the records must not take it either).
    @_noAllocation @_noLocks
    private mutating func readClock() -> PCMStatus? {
        let written = stream.writtenFrames
        // A device that takes frames faster than real time (ALSA's null) has no clock to learn:
        // its events carry no time.
        let elapsed = MonotonicTime.now().nanoseconds - stream.playStart
        let paced =
            FrameTime.nanoseconds(ofFrames: written, rate: Int64(rate)) <= elapsed + stream.bufferNanoseconds
            + 500_000_000
        // Until the device has consumed a couple of periods beyond its first full buffer it may
        // not really be playing yet (PulseAudio's null sink wakes up to 2 s late), so its
        // timestamps only count from then on.
        let consuming = written >= Int64(device.bufferFrames + 2 * periodFrames)
        // An underrun waiting to be measured is measured as soon as the device can.
        let due =
            written >= stream.nextStatusFrame || stream.clock.originNanoseconds == nil
            || stream.clock.awaitsUnderrunMeasure
        guard paced && consuming && due, let status = device.status() else { return nil }
        stream.nextStatusFrame = written + statusIntervalFrames
        // A report may be a little old (a sound server's is its last timing reply): what it says
        // is still to be heard now must be no more than the buffer could hold.
        let age = MonotonicTime.now().nanoseconds - status.timestamp.nanoseconds
        guard case .running = status.state, status.timestamp.nanoseconds > 0, age >= 0, age < 1_000_000_000,
            status.delayFrames >= 0,
            Int64(status.delayFrames) - FrameTime.frames(inNanoseconds: age, rate: Int64(rate))
                <= Int64(4 * device.bufferFrames + rate / 10)
        else { return nil }
        // What the device plays is heard later by what follows it (a Snapcast server's buffer):
        // the clock is of when a listener hears it.
        if let lostFrames = stream.clock.observe(
            writtenFrames: written, delayFrames: status.delayFrames,
            measuredAt: status.timestamp.nanoseconds + device.heardAfterNanoseconds,
            measuredLoss: status.underrunLostFrames)
        {
            reportUnderrun(
                lostFrames: lostFrames, heard: stream.clock.audibleNanoseconds(ofDeviceFrame: written) ?? 0)
        }
        if !stream.announcedStart, let origin = stream.clock.originNanoseconds {
            stream.announcedStart = true
            audio.report(.started(firstFrameAudible: MonotonicTime(nanoseconds: origin)))
        }
        return status
    }

    // MARK: What the steps share

    /// Underruns and suspends are recovered here; anything else means the device is gone.
    @_noAllocation @_noLocks
    private mutating func recoverable(_ error: Int32) -> Recovery {
        switch -error {
        case EINTR:
            return .retry
        case EPIPE:
            guard device.recover(error) >= 0 else { return .lost(code: error) }
            return .underrun
        case ESTRPIPE:
            guard device.recover(error) >= 0 else { return .lost(code: error) }
            audio.report(.suspendRecovered(at: moment(heard: MonotonicTime.now().nanoseconds)))
            return .retry
        default:
            return .lost(code: error)
        }
    }

    /// Starts the stall clock if it is not running; true once the device has taken nothing for
    /// the policy's stall limit (`SessionMachine.DeviceLoss.stallSeconds`).
    @_noAllocation @_noLocks
    private mutating func stalledTooLong() -> Bool {
        let now = MonotonicTime.now().nanoseconds
        guard let since = stream.stalledSince else {
            stream.stalledSince = now
            return false
        }
        return now - since > stallNanoseconds
    }

    /// What a recovered underrun lost: counted by the device (taken in between periods, by
    /// `takeInCountedLoss`), or shown once it plays again, its frames then heard later than
    /// the clock expected. Devices without timestamps (unpaced ones) lose a period by
    /// convention.
    @_noAllocation @_noLocks
    private mutating func noteRecoveredUnderrun() {
        guard stream.silenceCounted == nil else { return }
        if stream.clock.originNanoseconds == nil {
            reportUnderrun(lostFrames: Int64(periodFrames), heard: 0)
        } else {
            stream.clock.noteReportedUnderrun()
        }
    }

    /// Moves the session clock on by the audio lost; `heard` (nanoseconds, 0 if unknown) is when
    /// the session is heard again.
    @_noAllocation @_noLocks
    private mutating func reportUnderrun(lostFrames: Int64, heard: Int64) {
        var silent = true  // the session was paused: nothing audible was lost
        if case .playing = renderer.pointee.lifecycle { silent = false }
        let renderer = self.renderer
        renderer.pointee.apply(.advance(frames: lostFrames), events: &renderEvents)
        checkpoints.removeAll()  // going back before the advance would undo it
        audio.report(.underrun(lostFrames: lostFrames, silent: silent, at: moment(heard: heard)))
    }

    /// Goes back as far as the device still can (to a step boundary, never before an event
    /// already handed on), so the commands about to be applied are heard at once.
    @_noAllocation @_noLocks
    private mutating func takeBack() {
        guard device.takesBack, checkpoints.count > 0 else { return }
        let reach = Int64(device.rewindableFrames())
        guard reach > 0,
            let index = checkpoints.oldest(
                atOrAfter: stream.renderedBase + stream.writtenFrames - reach, minimumTag: held.released)
        else { return }
        let frames = renderer.pointee.outputFrame - checkpoints.outputFrame(at: index)
        guard frames > 0, device.rewind(frames: Int(frames)) == Int(frames) else { return }
        held.truncate(toNumber: checkpoints.tag(at: index))
        let renderer = self.renderer
        renderer.pointee.restore(checkpoint: index, from: &checkpoints)
        stream.writtenFrames -= frames
    }

    /// Moves the block's events behind those held, handing the oldest on if there is no room.
    @_noAllocation @_noLocks
    private mutating func hold() {
        for index in 0..<renderEvents.count {
            while !held.append(renderEvents[index]) { release(held.removeFirst()) }
        }
        renderEvents.removeAll()
    }

    /// Hands on the held events a take-back could not reach now (all of them on a device that
    /// cannot take back): about when they are heard, a little before.
    @_noAllocation @_noLocks
    private mutating func releaseOutOfReach() {
        let reach = device.takesBack ? Int64(device.rewindableFrames() + stream.stepFrames) : 0
        while let first = held.first, first.outputFrame - stream.renderedBase < stream.writtenFrames - reach {
            release(held.removeFirst())
        }
    }

    /// Tells the control side of an event, heard at the device clock's origin plus the frame's
    /// place in the stream (0 while the clock is unknown).
    @_noAllocation @_noLocks
    private func release(_ event: RenderEvent?) {
        guard let event else { return }
        let audible = stream.clock.audibleNanoseconds(ofDeviceFrame: event.outputFrame - stream.renderedBase) ?? 0
        audio.report(.render(event, audible: MonotonicTime(nanoseconds: audible)))
    }

    /// Where the session stands now, heard at `heard` (CLOCK_MONOTONIC nanoseconds, 0 if unknown).
    @_noAllocation @_noLocks
    private func moment(heard: Int64) -> SessionMoment {
        SessionMoment(sessionFrame: renderer.pointee.sessionFrame, audible: MonotonicTime(nanoseconds: heard))
    }

    // MARK: A lost device

    /// The device is gone: the session will carry on from the renderer's frame, and the silence
    /// begins when what was written to the device runs out. What the renderer did that never
    /// reached a listener (a phase, a cue, the session's end) is still reported, unheard (no
    /// time), so the control side's state follows the renderer's. From here the loop touches
    /// the device no more.
    @_noAllocation @_noLocks
    private mutating func lost(_ code: Int32) -> Outcome {
        hold()
        let now = MonotonicTime.now().nanoseconds
        while let event = held.removeFirst() {
            let audible = stream.clock.audibleNanoseconds(ofDeviceFrame: event.outputFrame - stream.renderedBase) ?? 0
            let heard = audible > 0 && audible <= now
            audio.report(.render(event, audible: MonotonicTime(nanoseconds: heard ? audible : 0)))
        }
        return .deviceLost(
            code: code, at: moment(heard: stream.clock.audibleNanoseconds(ofDeviceFrame: stream.writtenFrames) ?? 0))
    }

    /// No device plays: sleeps on the command bell until the control side hands over another
    /// (it rings the bell) or sends a stop or halt, which ends the session. Commands in between
    /// are applied — the loss's pause fades out unheard, so the device comes back to a paused
    /// session — and what they did is told.
    @_noAllocation @_noLocks
    private mutating func awaitHandover() -> DeviceCalls? {
        let (renderer, unheardBlock) = (self.renderer, self.unheardBlock)
        while true {
            Self.sleep(onBell: commandBell)
            while let command = audio.takeCommand() {
                switch command {
                case .stop, .halt:
                    // Nothing is left to ring out without a device: the session ends here, and
                    // the control side learns it from `finished`.
                    renderer.pointee.apply(.halt, events: &renderEvents)
                    renderEvents.removeAll()
                    audio.report(.finished(lastFrameAudible: MonotonicTime.now()))
                    return nil
                default:
                    renderer.pointee.apply(command, events: &renderEvents)
                }
            }
            var blocks = 0
            while case .pausing = renderer.pointee.lifecycle, blocks < 64 {
                _ = renderer.pointee.render(into: unheardBlock, events: &renderEvents)
                blocks += 1
            }
            let now = MonotonicTime.now()
            for index in 0..<renderEvents.count { audio.report(.render(renderEvents[index], audible: now)) }
            renderEvents.removeAll()
            if let handover = handovers._withUnsafeGuaranteedRef({ takeHandoverOnAudioThread($0) }) {
                audio.report(.deviceBack(attempts: handover.attempts, at: moment(heard: now.nanoseconds)))
                return handover.calls
            }
        }
    }

    /// The one wait of the thread while it has no device: `poll` on the command bell, which a
    /// command and a hand-over ring. At most a second, so a bell that could not be made (no
    /// descriptor) slows the wait rather than ending it. The checker cannot see into libc:
    /// vouched for here.
    @_noAllocation @_noLocks
    private static func sleep(onBell descriptor: Int32) {
        _unsafePerformance {
            var bell = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&bell, 1, 1000)
            Doorbell.drain(descriptor)
        }
    }
}

extension SampleFormat {
    /// Where the push loop keeps this format's converter.
    var slot: Int {
        switch self {
        case .float32: 0
        case .int32: 1
        case .int16: 2
        }
    }
}
