import Foundation
import GongAudio
import GongCore
import GongTestSupport
import Testing

@testable import GongABI
@testable import GongKit

/// A device that goes away reaches a C program as data: the `deviceLost` line `gong_next_event`
/// hands out carries the reason and the errno, so the program need not parse the message.
struct DeviceLossEventTests {
    static let pattern = Pattern(
        name: "ticks", phases: (0..<8).map { Phase("p\($0)", length: Rational(1, 4)!, cue: Cue("click")) },
        length: .cycles(3), endCue: Cue("click"))

    /// The events are taken as a C program takes them: on a thread of its own, waiting inside
    /// the library for each (never on a task's thread, which the task that fills the library's
    /// mailbox may need when parallel tests hold the others).
    @Test func aLostDeviceReachesTheCEventWithItsCode() async throws {
        let opens = Locked(0)
        let session = try GongSession(
            pattern: Self.pattern, bank: SoundBank(directories: [SoundBank.sourceTreeSounds]),
            options: SessionOptions()
        ) { () throws(AudioDeviceError) -> FaultInjectingPCM in
            let attempt = opens.withLock { count in
                count += 1
                return count
            }
            do {
                // The first device disappears after 100 writes; the next one stays.
                return try FaultInjectingPCM(writeFaults: attempt == 1 ? [100: .error(-ENODEV)] : [:], realTime: true)
            } catch {
                throw AudioDeviceError(code: -EIO, operation: "snd_pcm_open", device: "null", message: "\(error)")
            }
        }
        session.becomeHeadless()
        let handle = OpaquePointer(Unmanaged.passRetained(Handle(session)).toOpaque())
        defer { gong_session_free(handle) }
        #expect(gong_session_start(handle) == 0)
        let lost = await Self.firstEvent(of: handle, typed: "deviceLost", waitingAtMost: 60_000)
        _ = gong_stop(handle, nil)
        let event = try #require(lost, "no deviceLost event before the session ended or a minute passed without events")
        #expect(event["errno"] as? Int == Int(ENODEV), "\(event)")
        #expect(event["reason"] as? String == AudioDeviceError.Reason.disconnected.rawValue, "\(event)")
    }

    /// The first event of `type` `gong_next_event` hands out, taken on a thread of the test's
    /// own; nil if the session ends first or `milliseconds` pass with no event at all.
    static func firstEvent(of handle: OpaquePointer, typed type: String, waitingAtMost milliseconds: Int32) async
        -> [String: Any]?
    {
        nonisolated(unsafe) let handle = handle
        let found: String? = await withCheckedContinuation { continuation in
            Thread {
                var line: UnsafeMutablePointer<CChar>?
                while gong_next_event(handle, milliseconds, &line) == 0, let taken = line {
                    let text = String(cString: taken)
                    gong_free(taken)
                    line = nil
                    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                    if object?["type"] as? String == type { return continuation.resume(returning: text) }
                }
                continuation.resume(returning: nil)
            }.start()
        }
        return found.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
