import Benchmark
import Foundation
import Glibc
import GongAudio
import GongCore
import GongKit

// The real-time path, measured by package-benchmark against thresholds committed in
// Thresholds/ (`swift package benchmark thresholds check` fails on a regression; `make bench`
// runs it). Every real-time path must allocate nothing: their mallocCountTotal threshold is 0
// with no tolerance. (Names are written without spaces: the threshold files are named after
// them, and package-benchmark 1.38.1 writes a space as `_` but looks for it as a space.) Times
// get generous tolerances: these machines are shared and noisy, and a
// timing bar that only holds on a calm one fails for nothing.

let benchmarks: @Sendable () -> Void = {
    /// No allocation at all, whatever the percentile.
    let noAllocation = BenchmarkThresholds(absolute: [.p0: 0, .p50: 0, .p90: 0, .p99: 0, .p100: 0])
    /// Twice the committed p90 (or worse) is a regression; a shared 2-core machine varies by
    /// tens of percent between runs.
    let generousTime = BenchmarkThresholds(relative: [.p50: 100, .p90: 150])

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal], timeUnits: .nanoseconds, warmupIterations: 2,
        maxDuration: .seconds(3), maxIterations: 1000,
        thresholds: [.wallClock: generousTime, .mallocCountTotal: noAllocation])

    // The rings between the control side and the audio thread: one element in and out, and a
    // thousand at a time (what the engine's event ring holds when the control side is late).
    let ring = SPSCRing<Int64>(minimumCapacity: 1024)
    Benchmark("SPSCRing.pushPop", configuration: .init(scalingFactor: .kilo)) { benchmark in
        for index in benchmark.scaledIterations {
            _ = ring.tryPush(Int64(index))
            blackHole(ring.tryPop())
        }
    }
    Benchmark("SPSCRing.bulk1024") { benchmark in
        for _ in benchmark.scaledIterations {
            for value in 0..<Int64(1024) { _ = ring.tryPush(value) }
            while let value = ring.tryPop() { blackHole(value) }
        }
    }

    // One 256-frame period (5.33 ms at 48 kHz, stereo) of the renderer, with one voice
    // ringing and with 32.
    for voices in [1, 32] {
        let box = RendererBox(voices: voices)
        Benchmark(
            "Renderer.period\(voices)Voice\(voices == 1 ? "" : "s")",
            configuration: .init(maxIterations: RendererBox.periodsMeasured)
        ) { benchmark in
            for _ in benchmark.scaledIterations { box.renderPeriod() }
        }
    }

    // The same period with one voice over a bed (12 s of noise looped under it, past its
    // fade-in, fading out): what a bed costs the audio thread, against Renderer.period1Voice.
    let bedded = RendererBox(voices: 1, bed: true)
    Benchmark("Renderer.period1VoiceOverBed", configuration: .init(maxIterations: RendererBox.periodsMeasured)) {
        benchmark in
        for _ in benchmark.scaledIterations { bedded.renderPeriod() }
    }

    // The host's own callback pulling 256 frames (5.33 ms at 48 kHz, stereo) from a pull
    // engine: take commands, render, post events with when they are heard — one call per
    // iteration, 100 000 of them, a cue ringing every quarter second.
    let pull = PullBox()
    Benchmark(
        "Pull.render256Frames",
        configuration: .init(warmupIterations: 100, maxDuration: .seconds(20), maxIterations: PullBox.callsMeasured)
    ) { benchmark in
        for _ in benchmark.scaledIterations { pull.pullOnce() }
    }

    // The engine playing on a device paced in real time: wait, take commands, render, convert,
    // write, read the status and learn the device clock, post events — one period, measured as
    // the audio thread's own CPU time (its schedstat), and every malloc in the process meanwhile.
    let audioThreadCPU = BenchmarkMetric.custom("audio thread CPU per period (ns)", useScalingFactor: false)
    Benchmark(
        "Engine.periodOnPacedDevice",
        configuration: .init(
            metrics: [audioThreadCPU, .mallocCountTotal], warmupIterations: 1, maxDuration: .seconds(8),
            maxIterations: 12,
            thresholds: [audioThreadCPU: generousTime, .mallocCountTotal: noAllocation])
    ) { benchmark in
        let player = PacedEnginePlayer()
        player.waitForSteadyState()
        let before = player.progress()
        benchmark.startMeasurement()
        player.play(periods: 48)
        benchmark.stopMeasurement()
        let after = player.progress()
        benchmark.measurement(
            audioThreadCPU,
            Int((after.cpuNanoseconds - before.cpuNanoseconds) / Int64(max(1, after.periods - before.periods))))
        player.stop()
    }

    // An hour of two-phase (start gong, 45 min, triple gong, 15 min, end gong, rung out),
    // rendered into memory at 48 kHz stereo in 16384-frame blocks, as `gong render` renders.
    let hour = HourRender()
    Benchmark(
        "Render.hourOfTwoPhase",
        configuration: .init(
            metrics: [.wallClock, .cpuTotal, .mallocCountTotal], timeUnits: .milliseconds, warmupIterations: 1,
            maxDuration: .seconds(20), maxIterations: 5,
            // Not the real-time path: making the renderer allocates its voices and sound pool,
            // a fixed count, once per render.
            thresholds: [
                .wallClock: generousTime, .cpuTotal: generousTime,
                .mallocCountTotal: BenchmarkThresholds(absolute: [.p90: 10])
            ])
    ) { _ in
        hour.render()
    }
}

/// A renderer with `voices` bowls ringing at once for as long as it is measured.
final class RendererBox: @unchecked Sendable {
    static let rate = 48000
    /// 107 s of audio: the bowl rings longer, so every period measured has all its voices.
    static let periodsMeasured = 20_000
    private var renderer: SessionRenderer
    private var events = RenderEventBuffer()
    private let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)

    init(voices: Int, bed: Bool = false) {
        let pattern = Pattern(
            name: "crowd", phases: [Phase("strike", length: Rational(1, 4)!, cue: Cue("bowl", gainDB: -30))],
            length: .cycles(voices), endCue: Cue("bowl", gainDB: -30))
        // Rings for three minutes: every voice still sounds when the measurement ends, and the
        // session, which ends when its last cue has rung out, still plays.
        let bowl = (0..<(RendererBox.rate * 180)).map { index -> Float in
            let t = Double(index) / Double(RendererBox.rate)
            return Float(exp(-t / 200) * (sin(2 * .pi * 262 * t) + 0.5 * sin(2 * .pi * 710 * t)))
        }
        // swiftlint:disable:next force_try
        let timeline = try! Timeline(pattern: pattern, sampleRate: RendererBox.rate)
        // A bed of noise, mono as the bank's is, with a fade-in that is over before the first
        // period measured. The session's end comes after a quarter second (its end cue is what
        // rings on), so the bed is fading out while it is measured: a fade-out longer than the
        // measurement keeps it sounding, at the cost of its most expensive frames (two fades).
        var state: UInt32 = 1
        let noise = (0..<(RendererBox.rate * 12)).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.1
        }
        renderer = SessionRenderer(
            timeline: timeline, sounds: [RenderSound(samples: bowl, channels: 1)], channels: 2,
            bed: bed
                ? RenderBed(
                    sound: RenderSound(samples: noise, channels: 1), gain: 0.125, fadeInFrames: 256,
                    fadeOutFrames: RendererBox.rate * 120) : nil)
        // Until every voice has started.
        for _ in 0..<(voices * RendererBox.rate / 4 / 256 + 2) { renderPeriod() }
        precondition(renderer.activeVoiceCount >= voices, "all \(voices) voices ring")
    }

    func renderPeriod() {
        _ = renderer.render(into: block, events: &events)
        events.removeAll()
    }
}

/// A pull engine on a long session of clicks, pulled 256 frames at a time as a host's
/// callback pulls it, its events drained as the control side drains them.
final class PullBox: @unchecked Sendable {
    static let callsMeasured = 100_000
    private let engine: PullEngine
    private let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)
    private var heard: Int64 = 1_000_000_000

    init() {
        // 8000 s of a click every quarter second: longer than every call measured and warmed up.
        // swiftlint:disable:next force_try
        let timeline = try! Timeline(
            pattern: Pattern(
                name: "ticks", phases: [Phase("tick", length: Rational(1, 4)!, cue: Cue("click"))],
                length: .cycles(32000)), sampleRate: 48000)
        let click = (0..<2400).map { Float(exp(-Double($0) / 200) * sin(Double($0) * 0.3)) }
        engine = PullEngine(
            renderer: SessionRenderer(
                timeline: timeline, sounds: [RenderSound(samples: click, channels: 1)], channels: 2))
        engine.start()
    }

    func pullOnce() {
        let status = engine.render(into: buffer, frames: 256, heardAt: MonotonicTime(nanoseconds: heard))
        precondition(status == .playing, "the session outlasts the benchmark")
        heard += 5_333_333
        while let event = engine.events.tryPop() { blackHole(event) }
    }
}

/// ALSA's `null` device paced in real time by CLOCK_MONOTONIC, with a status as a sound card's:
/// the test device the engine's period is measured on. `null` alone takes frames at once, and
/// the engine never reads the status of a device that does.
final class PacedNullDevice: PCM, @unchecked Sendable {
    let real: AlsaPCM
    let configuration: PCMConfiguration
    private var written: Int64 = 0
    private var startNanoseconds: Int64 = 0

    init() throws {
        real = try AlsaPCM(PCMRequest(device: "null", rate: 48000, channels: 2, format: .float32, periodFrames: 256))
        let granted = real.configuration
        configuration = PCMConfiguration(
            device: "paced null", rate: granted.rate, channels: granted.channels, format: granted.format,
            periodFrames: granted.periodFrames, bufferFrames: 4 * granted.periodFrames, paced: true)
    }

    private var now: Int64 { MonotonicTime.now().nanoseconds }

    private func played(at time: Int64) -> Int64 {
        startNanoseconds == 0 ? 0 : min(written, (time - startNanoseconds) * Int64(configuration.rate) / 1_000_000_000)
    }

    func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        let result = real.writeInterleaved(bytes, frames: frames)
        if result > 0 {
            if startNanoseconds == 0 { startNanoseconds = now }
            written += Int64(result)
        }
        return result
    }

    /// Sleeps until a period of the buffer has been played.
    func wait(timeoutMs: Int32) -> Int32 {
        let room = Int64(configuration.bufferFrames - configuration.periodFrames)
        guard startNanoseconds != 0, written - played(at: now) > room else { return 1 }
        let due = startNanoseconds + (written - room) * 1_000_000_000 / Int64(configuration.rate)
        var wake = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nil) == EINTR {}
        return 1
    }

    func status() -> PCMStatus? {
        let time = now
        let delay = Int(written - played(at: time))
        return PCMStatus(
            state: startNanoseconds == 0 ? .prepared : .running, delayFrames: delay,
            timestamp: MonotonicTime(nanoseconds: time))
    }

    func recover(_ error: Int32) -> Int32 { real.recover(error) }
    func drain() -> Int32 { 0 }
    func close() { real.close() }
}

/// A long session played by the engine on `PacedNullDevice`.
final class PacedEnginePlayer: @unchecked Sendable {
    private let engine: PlaybackEngine<PacedNullDevice>

    init() {
        // swiftlint:disable force_try
        let device = try! PacedNullDevice()
        let box = try! Timeline(
            pattern: Pattern(
                name: "ticks", phases: [Phase("tick", length: Rational(1, 4)!, cue: Cue("click"))],
                length: .cycles(4000)), sampleRate: 48000)
        // swiftlint:enable force_try
        let click = (0..<2400).map { Float(exp(-Double($0) / 200) * sin(Double($0) * 0.3)) }
        engine = PlaybackEngine(
            renderer: SessionRenderer(timeline: box, sounds: [RenderSound(samples: click, channels: 1)], channels: 2),
            device: device,
            reopen: { () throws(AudioDeviceError) -> PacedNullDevice in
                throw AudioDeviceError(code: 0, operation: "", device: "paced null", message: "not reopened")
            })
        engine.start()
    }

    /// Until the device clock is known and the first events are out: a second.
    func waitForSteadyState() {
        while engine.periodsPlayed < 200 { usleep(5_000) }
        while engine.events.tryPop() != nil {}
    }

    /// Periods played so far, and the audio thread's nanoseconds on a CPU (the first field of
    /// its schedstat; reading it allocates, so it is read outside the measurement).
    func progress() -> (periods: Int, cpuNanoseconds: Int64) {
        let path = "/proc/self/task/\(engine.audioThreadID)/schedstat"
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return (engine.periodsPlayed, text.split(separator: " ").first.flatMap { Int64($0) } ?? 0)
    }

    /// Lets `periods` more periods play, draining the events as the control side does.
    func play(periods: Int) {
        let end = engine.periodsPlayed + periods
        while engine.periodsPlayed < end {
            usleep(2_000)
            while engine.events.tryPop() != nil {}
        }
    }

    func stop() {
        engine.send(.halt)
        engine.join()
    }
}

/// An hour of two-phase from the real sound bank, rendered into memory.
final class HourRender: @unchecked Sendable {
    private let plan: SessionPlan
    private let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 16384 * 2)
    private var events = RenderEventBuffer(capacity: 1024)

    init() {
        let pattern = Pattern(
            name: "two-phase", startCue: Cue("gong"),
            phases: [
                Phase("meditation", length: 2700), Phase("reflection", length: 900, cue: Cue("gong-triple"))
            ], length: .cycles(1), endCue: Cue("gong-end"))
        // swiftlint:disable:next force_try
        plan = try! SessionPlan(pattern: pattern, sampleRate: 48000, channels: 2, bank: .standard())
    }

    func render() {
        var renderer = plan.makeRenderer()
        while !renderer.isFinished {
            _ = renderer.render(into: block, events: &events)
            events.removeAll()
        }
    }
}
