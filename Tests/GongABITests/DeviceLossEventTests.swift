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

    /// Polls without waiting inside the library and sleeps between looks, so the task that hands
    /// events to the mailbox gets a thread even when parallel tests hold the others.
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
        var lost: [String: Any]?
        let deadline = Date().addingTimeInterval(60)
        while lost == nil, Date() < deadline {
            var line: UnsafeMutablePointer<CChar>?
            let status = gong_next_event(handle, 0, &line)
            let text = line.map { String(cString: $0) }
            gong_free(line)
            if status == 5 { break }
            guard status == 0, let text else {
                try await Task.sleep(for: .milliseconds(20))
                continue
            }
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            if object?["type"] as? String == "deviceLost" { lost = object }
        }
        _ = gong_stop(handle, nil)
        let event = try #require(lost, "no deviceLost event within 60 s")
        #expect(event["errno"] as? Int == Int(ENODEV), "\(event)")
        #expect(event["reason"] as? String == AudioDeviceError.Reason.disconnected.rawValue, "\(event)")
    }
}
