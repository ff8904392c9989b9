import Foundation
import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongAudio

@Suite(.serialized) struct PlaybackEngineTests {
    /// Cues every quarter second: 8 phases × 3 cycles, with short marker sounds.
    static func timeline(cycles: Int = 3) throws -> Timeline {
        let pattern = Pattern(
            name: "ticks", phases: (0..<8).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("tick")) },
            length: .cycles(cycles), endCue: Cue("tick"))
        return try Timeline(pattern: pattern, sampleRate: 48000)
    }

    static func renderer(_ timeline: Timeline) -> SessionRenderer {
        SessionRenderer(timeline: timeline, sounds: [[Float](repeating: 0.1, count: 400)], channels: 2)
    }

    /// Runs an engine to the end and returns everything it reported.
    static func play(
        _ device: FaultInjectingPCM, renderer: consuming SessionRenderer,
        reopen: @escaping @Sendable () throws(AudioDeviceError) -> FaultInjectingPCM = {
            () throws(AudioDeviceError) -> FaultInjectingPCM in
            throw AudioDeviceError(code: -ENODEV, operation: "test", device: "null", message: "gone")
        },
        commands: [(afterCues: Int, RenderCommand)] = [], stopWhenLost: Bool = false
    ) -> [EngineEvent] {
        let engine = PlaybackEngine(renderer: renderer, device: device, reopen: reopen)
        engine.start()
        var cues = 0
        var pending = commands
        return drive(engine, seconds: 60) { event in
            if case .render(let render, _) = event, case .cueStarted = render.kind { cues += 1 }
            if case .deviceLost = event {
                if stopWhenLost { engine.send(.stop) } else { Self.carryOutLoss(on: engine) }
            }
            while let next = pending.first, cues >= next.afterCues {
                engine.send(next.1)
                pending.removeFirst()
            }
        }
    }

    /// Hands each event a started engine reports to `handle` as it comes, until the engine has
    /// ended and every event is taken, or `seconds` pass (it is halted then); joins it, and
    /// returns every event, those that came after the join included (not handed on).
    ///
    /// The engine's bell is drained before the events are taken, and waited on only while the
    /// engine runs, looked at after the draining: the audio thread's last ring comes after
    /// `isRunning` turns false, so a loop that drained that ring and then waited without looking
    /// slept to its deadline.
    static func drive<Device>(
        _ engine: PlaybackEngine<Device>, seconds: Double, handle: (EngineEvent) -> Void = { _ in }
    ) -> [EngineEvent] {
        var events: [EngineEvent] = []
        let deadline = Date().addingTimeInterval(seconds)
        while engine.isRunning || engine.events.approximateCount > 0, Date() < deadline {
            engine.clearEventsReady()
            while let event = engine.events.tryPop() {
                events.append(event)
                handle(event)
            }
            if engine.isRunning {
                _ = Waiting.readable(engine.eventsReadyDescriptor, seconds: max(0, deadline.timeIntervalSinceNow))
            }
        }
        if engine.isRunning { engine.send(.halt) }
        engine.join()
        while let event = engine.events.tryPop() { events.append(event) }
        return events
    }

    /// What the state machine has the control side do when the device is lost (its
    /// `.sendToAudio(.pause)`, `.closeDevice`, `.reopenDevice`), done by the test in its place.
    static func carryOutLoss(on engine: PlaybackEngine<FaultInjectingPCM>) {
        engine.send(.pause)
        engine.closeLostDevice()
        engine.reopenLostDevice()
    }

    static func renderKinds(_ events: [EngineEvent]) -> [RenderEvent.Kind] {
        events.compactMap { if case .render(let event, _) = $0 { event.kind } else { nil } }
    }

    static func cueFrames(_ events: [EngineEvent]) -> [(session: Int64, scheduled: Int64)] {
        events.compactMap {
            guard case .render(let event, _) = $0, case .cueStarted(_, let scheduled) = event.kind else { return nil }
            return (event.sessionFrame, scheduled)
        }
    }

    /// The compiler-checked entry points the audio thread uses carry elements through intact,
    /// refuse a push to a full ring and find an empty one empty.
    @Test func theAudioThreadsRingCallsCarryCommandsAndEvents() {
        let commands = SPSCRing<RenderCommand>(minimumCapacity: 2)
        #expect(takeCommandOnAudioThread(commands) == nil)
        #expect(commands.tryPush(.advance(frames: 480)))
        #expect(takeCommandOnAudioThread(commands) == .advance(frames: 480))
        let events = SPSCRing<EngineEvent>(minimumCapacity: 1)
        let lost = EngineEvent.eventsDropped(count: 3)
        #expect(postFromAudioThread(lost, to: events))
        #expect(!postFromAudioThread(.eventsDropped(count: 4), to: events))
        #expect(events.tryPop() == lost)
        #expect(events.tryPop() == nil)
    }

    @Test func aWholeSessionPlaysOnTheNullDeviceWithEveryCueOnItsFrame() throws {
        let timeline = try Self.timeline()
        let renderer = Self.renderer(timeline)
        let device = try FaultInjectingPCM()
        let events = Self.play(device, renderer: renderer)
        let cues = Self.cueFrames(events)
        #expect(cues.map(\.scheduled) == timeline.cueOnsets.map(\.frame))
        #expect(cues.allSatisfy { $0.session == $0.scheduled })
        #expect(events.contains { if case .finished = $0 { true } else { false } })
        #expect(Self.renderKinds(events).last == .finished)
        // Every rendered frame reached the device, whole periods at a time.
        #expect(device.framesWritten % 256 == 0 && device.framesWritten >= Int(timeline.plannedEndFrame) + 200)
    }

    @Test func anUnderrunIsRecoveredCountedAndTheClockMovesOn() throws {
        let timeline = try Self.timeline()
        let renderer = Self.renderer(timeline)
        let device = try FaultInjectingPCM(writeFaults: [40: .error(-EPIPE)])
        let events = Self.play(device, renderer: renderer)
        #expect(device.recoveries == [-EPIPE])
        let underruns = events.compactMap { if case .underrun(let lost, _, let at) = $0 { (lost, at) } else { nil } }
        #expect(underruns.map(\.0) == [256], "a device without timestamps loses a period by convention")
        // The 40th write failed; its period was written after the recovery, and the session
        // carries on 256 frames further on.
        let jump = try #require(underruns.first?.1.sessionFrame)
        #expect(jump == 41 * 256)
        let cues = Self.cueFrames(events)
        #expect(cues.count == timeline.cueOnsets.count, "no cue is ever skipped")
        #expect(cues.allSatisfy { $0.session == $0.scheduled }, "the jump crossed no cue, so none is late")
        // Cues after the underrun stay on the session's schedule: the device plays each one 256
        // frames sooner than its session frame, as 256 frames of time went by unheard.
        let renders = events.compactMap {
            if case .render(let event, _) = $0, case .cueStarted = event.kind { event } else { nil }
        }
        #expect(renders.contains { $0.sessionFrame > jump })
        #expect(
            renders.allSatisfy { $0.sessionFrame - $0.outputFrame == ($0.sessionFrame >= jump ? 256 : 0) },
            "\(renders.map { ($0.sessionFrame, $0.outputFrame) })")
        #expect(Self.renderKinds(events).last == .finished)
    }

    /// A device that counts the silence it played (PipeWire's and JACK's callbacks do) tells
    /// what an underrun cost to the frame: the session moves on by exactly that, not a period
    /// and not a measurement.
    @Test func anUnderrunCountedByTheDeviceMovesTheSessionOnByWhatItCounted() throws {
        let timeline = try Self.timeline()
        let device = try FaultInjectingPCM(
            writeFaults: [40: .countedUnderrun(1000), 60: .countedUnderrun(1)], countsSilence: true)
        let events = Self.play(device, renderer: Self.renderer(timeline))
        #expect(device.recoveries == [-EPIPE, -EPIPE])
        let underruns = events.compactMap { if case .underrun(let lost, _, let at) = $0 { (lost, at) } else { nil } }
        #expect(underruns.map(\.0) == [1000, 1], "\(underruns)")
        // The 40th write failed (its period was written after the recovery), and the 60th wrote
        // the 59th period.
        let jumps: [Int64] = [40 * 256 + 1000, 59 * 256 + 1001]
        #expect(underruns.map(\.1.sessionFrame) == jumps)
        let renders = events.compactMap {
            if case .render(let event, _) = $0, case .cueStarted = event.kind { event } else { nil }
        }
        #expect(renders.contains { $0.sessionFrame > jumps[1] })
        let shifts: Set<Int64> = [0, 1000, 1001]
        #expect(
            renders.allSatisfy { shifts.contains($0.sessionFrame - $0.outputFrame) },
            "\(renders.map { ($0.sessionFrame, $0.outputFrame) })")
        #expect(Self.cueFrames(events).allSatisfy { $0.session == $0.scheduled })
        #expect(Self.renderKinds(events).last == .finished)
    }

    @Test func aSuspendIsRecovered() throws {
        let renderer = Self.renderer(try Self.timeline())
        let device = try FaultInjectingPCM(writeFaults: [30: .error(-ESTRPIPE)])
        let events = Self.play(device, renderer: renderer)
        #expect(device.recoveries == [-ESTRPIPE])
        #expect(events.contains { if case .suspendRecovered = $0 { true } else { false } })
        #expect(Self.renderKinds(events).last == .finished)
    }

    @Test func interruptedAndShortWritesLoseNothing() throws {
        let timeline = try Self.timeline()
        let renderer = Self.renderer(timeline)
        let device = try FaultInjectingPCM(
            writeFaults: [10: .error(-EINTR), 20: .shortWrite(100), 21: .error(-EAGAIN), 50: .shortWrite(1)],
            waitFaults: [5: .error(-EINTR)])
        let events = Self.play(device, renderer: renderer)
        #expect(device.recoveries.isEmpty)
        #expect(device.framesWritten % 256 == 0, "a short write is completed, never dropped")
        #expect(Self.cueFrames(events).allSatisfy { $0.session == $0.scheduled })
        #expect(Self.cueFrames(events).count == timeline.cueOnsets.count)
    }

    @Test func aLostDeviceIsClosedRetriedWithBackoffAndTheSessionContinuesPaused() throws {
        let timeline = try Self.timeline()
        let renderer = Self.renderer(timeline)
        let device = try FaultInjectingPCM(writeFaults: [30: .error(-ENODEV)])
        let reopened = Locked<FaultInjectingPCM?>(nil)
        let attempts = Attempts()
        let engine = PlaybackEngine(renderer: renderer, device: device) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in
            // Absent for five attempts (100 + 200 + 400 + 800 + 1600 ms of backoff), then back.
            let attempt = attempts.next()
            if attempt == 6 { attempts.markSucceedingAttempt() }
            if attempt <= 5 {
                throw AudioDeviceError(code: -ENODEV, operation: "snd_pcm_open", device: "null", message: "gone")
            }
            do {
                let device = try FaultInjectingPCM()
                reopened.withLock { $0 = device }
                return device
            } catch {
                throw AudioDeviceError(code: -ENODEV, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
        engine.start()
        var resumed = false
        var lostAt: (cpu: Double?, wall: Date)?
        let events = Self.drive(engine, seconds: 30) { event in
            if case .deviceLost = event {
                lostAt = (CPUTime.thread(engine.audioThreadID), Date())
                Self.carryOutLoss(on: engine)
            }
            if case .deviceBack = event, let lostAt, let succeeding = attempts.succeedingAttempt {
                // Up to the attempt that succeeds, from the test's thread.
                let waited = succeeding.timeIntervalSince(lostAt.wall)
                let cpu = (CPUTime.thread(engine.audioThreadID) ?? .infinity) - (lostAt.cpu ?? 0)
                #expect(lostAt.cpu != nil, "the audio thread is found by its id")
                // Waiting for the device is sleeping, not spinning: the audio thread's own CPU
                // time over the 3 s of backoff (the attempts are the control side's).
                #expect(cpu / waited < 0.01, "cpu \(cpu) s over \(waited) s")
                #expect(waited >= 3, "backoff 100 + 200 + 400 + 800 + 1600 ms")
                engine.send(.resume)
                resumed = true
            }
        }
        let lost = events.compactMap { if case .deviceLost(-ENODEV, let at) = $0 { at } else { nil } }
        let back = events.compactMap { if case .deviceBack(6, let at) = $0 { at } else { nil } }
        #expect(lost.count == 1 && back.count == 1, "\(events)")
        // The lost device was closed when the loss was carried out, the one that came back by
        // `join`: each once, and neither on the audio thread.
        #expect(device.waitUntilClosed(seconds: 10), "the lost device is closed on a thread of its own")
        let closers = [device.closedOnThreads, reopened.withLock { $0?.closedOnThreads } ?? []]
        #expect(
            closers.allSatisfy { $0.count == 1 && !$0.contains(engine.audioThreadID) },
            "\(closers), audio thread \(engine.audioThreadID)")
        // The 30th write failed: 29 periods were played, and the session waits where it broke off.
        #expect(lost.first?.sessionFrame == 30 * 256 && back.first?.sessionFrame == lost.first?.sessionFrame)
        #expect(resumed)
        let kinds = Self.renderKinds(events)
        #expect(kinds.contains(.paused), "a lost device pauses the session")
        #expect(kinds.last == .finished)
        #expect(Self.cueFrames(events).count == timeline.cueOnsets.count)
    }

    @Test func aLostDeviceWhoseCloseNeverReturnsHoldsNothingUp() throws {
        let timeline = try Self.timeline()
        let device = try FaultInjectingPCM(writeFaults: [30: .error(-ENODEV)], closeBlocks: true)
        // Let go after 20 s whatever happens, so an engine that waits for the close fails the
        // test below instead of hanging it.
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) { device.releaseClose() }
        let engine = PlaybackEngine(renderer: Self.renderer(timeline), device: device) {
            () throws(AudioDeviceError) -> FaultInjectingPCM in
            do { return try FaultInjectingPCM() } catch {
                throw AudioDeviceError(code: -ENODEV, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
        engine.start()
        var closedWhenBack: [Int32]?
        let events = Self.drive(engine, seconds: 30) { event in
            // If the close were waited for, this call would not return for 20 s.
            if case .deviceLost = event { Self.carryOutLoss(on: engine) }
            if case .deviceBack = event {
                closedWhenBack = device.closedOnThreads
                engine.send(.resume)
            }
        }
        // The device came back and the session played to its end while the old close was held.
        #expect(closedWhenBack == [], "\(Self.renderKinds(events))")
        #expect(Self.renderKinds(events).last == .finished, "\(events)")
        #expect(Self.cueFrames(events).count == timeline.cueOnsets.count)
        #expect(!device.waitUntilClosed(seconds: 0), "still held")
        device.releaseClose()
        #expect(device.waitUntilClosed(seconds: 10))
        #expect(device.closedOnThreads.count == 1 && !device.closedOnThreads.contains(engine.audioThreadID))
    }

    @Test func aDeviceThatStopsTakingDataIsDeclaredLost() throws {
        let renderer = Self.renderer(try Self.timeline(cycles: 40))
        let device = try FaultInjectingPCM(writeFaults: [20: .endlessAgain])
        let events = Self.play(device, renderer: renderer, stopWhenLost: true)
        #expect(events.contains { if case .deviceLost(-EAGAIN, _) = $0 { true } else { false } })
    }

    @Test func commandsFromTheControlSideReachTheRenderer() throws {
        let timeline = try Self.timeline(cycles: 40)
        let renderer = Self.renderer(timeline)
        let device = try FaultInjectingPCM(realTime: true)
        let events = Self.play(device, renderer: renderer, commands: [(afterCues: 3, .stop)])
        let kinds = Self.renderKinds(events)
        #expect(kinds.contains(.sessionEnded))
        #expect(kinds.contains { if case .skipped = $0 { true } else { false } })
        #expect(Self.cueFrames(events).count < timeline.cueOnsets.count)
    }
}

final class Attempts: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var succeeding: Date?
    func next() -> Int { lock.lock(); defer { lock.unlock() }; count += 1; return count }
    /// Called by the attempt that succeeds (on the control side's reopening thread).
    func markSucceedingAttempt() {
        lock.lock(); defer { lock.unlock() }; succeeding = Date()
    }
    var succeedingAttempt: Date? { lock.lock(); defer { lock.unlock() }; return succeeding }
}

enum CPUTime {
    /// Exact CPU seconds of one thread (this engine's audio thread: other suites run engines
    /// of their own at the same time), from the scheduler's own count in /proc.
    static func thread(_ id: Int32) -> Double? {
        guard id > 0, let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/schedstat", encoding: .utf8),
            let nanoseconds = Double(stat.split(separator: " ").first ?? "")
        else { return nil }
        return nanoseconds / 1e9
    }

    /// User + system CPU seconds of this process.
    static func now() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
            usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
