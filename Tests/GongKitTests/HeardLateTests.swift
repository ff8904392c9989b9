import CGongStreams
import Foundation
import GongCore
import Synchronization
import Testing

@testable import GongAudio
@testable import GongKit

/// A loss behind frames the device already holds out of a take-back's reach (the cycle it plays,
/// the take-back's guard, or frames its callback claimed before gong woke): a cue among them is
/// heard late by the loss, and gong says so — never that it was on time (issue 38).
@Suite(.serialized) struct HeardLateTests {
    static let pattern = Pattern(
        name: "ticks", phases: [Phase("tick", length: .one, cue: Cue("woodblock"))], length: .cycles(4),
        endCue: Cue("click"))

    static func cue(_ frame: Int64, output: Int64) -> EngineEvent {
        .render(
            RenderEvent(kind: .cueStarted(sound: 0, scheduledFrame: frame), sessionFrame: frame, outputFrame: output),
            audible: MonotonicTime(nanoseconds: 5_000_000_000 + frame * 1_000_000_000 / 48000))
    }

    /// What the push loop tells, fed to the session as it would be: a cue told on time, then a
    /// loss that moved the frames it was in; a cue told after the loss from those frames; one
    /// past them.
    @Test func aCueToldBeforeALossBehindItIsToldAgainLateAndOnesToldAfterAreLateToo() throws {
        let session = try LiveSession.pulling(
            pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: false, rate: 48000, channels: 1
        ).session
        _ = session.start()
        let ring = session.engine.events
        let sound = session.plan.timeline.sounds[0]
        #expect(ring.tryPush(Self.cue(48000, output: 48000)))
        var events = session.poll()
        #expect(events.contains { $0.kind == .cue(sound: sound, lateFrames: 0, offFrames: nil) }, "\(events)")
        let moment = SessionMoment(sessionFrame: 50000, audible: MonotonicTime(nanoseconds: 6_000_000_000))
        #expect(ring.tryPush(.underrun(lostFrames: 256, silent: false, at: moment)))
        #expect(ring.tryPush(.heardLate(fromOutputFrame: 47_900, toOutputFrame: 60_000, frames: 256)))
        events = session.poll()
        let corrected = events.filter { if case .cueHeardLate = $0.kind { true } else { false } }
        let audible = 5 + 1 + 256.0 / 48000
        #expect(
            corrected.count == 1 && corrected[0].kind == .cueHeardLate(sound: sound, lateFrames: 256)
                && corrected[0].frame == 48000 && abs((corrected[0].audible ?? 0) - audible) < 1e-6,
            "\(events)")
        // A cue in the same frames, told after the loss: late by it; one past them: on time.
        #expect(ring.tryPush(Self.cue(52000, output: 52000)))
        #expect(ring.tryPush(Self.cue(96256, output: 96000)))
        events = session.poll()
        let late = events.compactMap { event -> Int64? in
            if case .cue(_, let late, _) = event.kind { late } else { nil }
        }
        #expect(late == [256, 0], "\(events)")
        #expect(session.summary.maxCueLatenessFrames == 256)
        #expect(HeardVerdict(summary: session.summary, timing: session.timing).isAudioLost)
        session.abandon()
    }

    /// The whole way, on gong's own ring hand-off (the one JACK's and PipeWire's callbacks take
    /// from), with a thread of the test's as the server's callback: it runs a 256-frame cycle
    /// every 5.33 ms and, just after claiming the third woodblock's onset, makes the server run
    /// a cycle without it, told as JACK tells it (a cycle after the jump, landing before the
    /// cycle that saw it). That woodblock is out of gong's reach and heard 256 frames late: gong
    /// must say so, and every cue after stays on its frame.
    @Test func aCueClaimedBeforeALossIsSaidLateByIt() throws {
        let device = try HandoffCallbackPCM(lossAfterOnset: 3)
        let session = try LiveSession(pattern: Self.pattern, bank: shippedBank, masterGainDB: 0, interactive: false) {
            () throws(AudioDeviceError) -> HandoffCallbackPCM in device
        }
        var events = session.start()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !session.isOver {
            events += session.poll()
            usleep(5000)
        }
        events += session.poll()
        session.waitUntilDone()
        device.close()
        let lossAt = device.lossAt
        #expect(lossAt > 0, "the callback injected its loss")
        let xruns = events.compactMap { event -> Int64? in
            if case .xrun(let lost, _) = event.kind { lost } else { nil }
        }
        #expect(xruns == [256], "\(events)")
        // Each cue's lateness as gong finally tells it: its own line, or the correction after.
        var late: [Int64: Int64] = [:]
        for event in events {
            switch event.kind {
            case .cue(_, let frames, _), .cueHeardLate(_, let frames): late[event.frame ?? -1] = frames
            default: break
            }
        }
        let cues = late.keys.sorted()
        #expect(cues.count == 5, "\(events)")
        let said = cues.map { late[$0] ?? -1 }
        #expect(
            said == [0, 0, 256, 0, 0], "cues at \(cues) said late by \(said); the loss landed at ring frame \(lossAt)")
        #expect(session.summary.maxCueLatenessFrames == 256 && session.summary.framesLost == 256)
        #expect(HeardVerdict(summary: session.summary, timing: session.timing).isAudioLost)
    }
}

extension HeardVerdict {
    var isAudioLost: Bool { if case .audioLost = self { true } else { false } }
}

/// gong's ring hand-off with no server: a thread plays the server's callback, claiming 256
/// frames every 5.33 ms of real time, and makes the server run one cycle without it right after
/// it claimed the onset (after 0.1 s of silence) of the `lossAfterOnset`th sound.
final class HandoffCallbackPCM: RingFedPCM, @unchecked Sendable {
    /// The server's side: the thread's state.
    final class Callback: @unchecked Sendable {
        let raw: OpaquePointer
        let lossAfterOnset: Int
        let stopping = Atomic<Bool>(false)
        let stopped = DispatchSemaphore(value: 0)
        /// The ring frame the loss landed before; -1 until it is made.
        let lossAt = Atomic<Int64>(-1)

        init(_ raw: OpaquePointer, lossAfterOnset: Int) {
            self.raw = raw
            self.lossAfterOnset = lossAfterOnset
        }

        func run() {
            var cycle = [Float](repeating: 0, count: 256)
            var quiet = 4800
            var onsets = 0
            var next = MonotonicTime.now().nanoseconds
            while !stopping.load(ordering: .acquiring) {
                next += 256 * 1_000_000_000 / 48000
                let wait = next - MonotonicTime.now().nanoseconds
                if wait > 0 { usleep(UInt32(wait / 1000)) }
                let began = gong_handoff_claimed(raw)
                let got = Int(gong_handoff_run_cycle(raw, 0, &cycle, 256))
                var onset = false
                for sample in cycle.prefix(got) {
                    if sample == 0 {
                        quiet += 1
                    } else {
                        if quiet >= 4800 { onset = true }
                        quiet = 0
                    }
                }
                if onset { onsets += 1 }
                if onset && onsets == lossAfterOnset {
                    gong_handoff_miss(raw, 256, began)
                    lossAt.store(Int64(began), ordering: .releasing)
                }
            }
            stopped.signal()
        }
    }

    let callback: Callback
    var lossAt: Int64 { callback.lossAt.load(ordering: .acquiring) }

    init(lossAfterOnset: Int) throws {
        let raw = try #require(gong_handoff_new(24000, 4))
        callback = Callback(raw, lossAfterOnset: lossAfterOnset)
        super.init(
            configuration: PCMConfiguration(
                device: "handoff", rate: 48000, channels: 1, format: .float32, periodFrames: 6000, bufferFrames: 24000,
                soundServer: true, reportJitterNanoseconds: 1_000_000, takesBack: true, reportsNeverEarly: true),
            handoff: raw)
        let callback = callback
        Thread { callback.run() }.start()
    }

    override func closeStream() {
        callback.stopping.store(true, ordering: .releasing)
        callback.stopped.wait()
        gong_handoff_free(callback.raw)
    }
}
