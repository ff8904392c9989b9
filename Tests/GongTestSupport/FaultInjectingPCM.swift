import Dispatch
import Glibc
import GongAudio
import GongCore

/// A real device (ALSA's `null`) with faults injected on chosen calls: mocks are for fault
/// injection only. Each fault fires once, on the numbered call of `writeInterleaved` or `wait`.
/// Shared by the engine's tests and the live session's.
public final class FaultInjectingPCM: PCM, @unchecked Sendable {
    public enum Fault: Equatable, Sendable {
        /// Return this negative errno instead of writing.
        case error(Int32)
        /// Write only this many frames.
        case shortWrite(Int)
        /// Return -EAGAIN from now on (a device that stopped taking data).
        case endlessAgain
        /// Return -EPIPE, having heard this many frames of silence in place of gong's (counted
        /// by a device made with `countsSilence`, as a sound server's callback counts them).
        case countedUnderrun(Int)
    }

    public let real: AlsaPCM
    private var writeFaults: [Int: Fault]
    private var waitFaults: [Int: Fault]
    public private(set) var writeCalls = 0
    public private(set) var waitCalls = 0
    public private(set) var framesWritten = 0
    public private(set) var recoveries: [Int32] = []
    private var stuck = false
    /// Nil for a device that does not count the silence it plays (as ALSA's).
    private var silenceHeard: Int64?
    /// A fault the test asks for at a moment of its choosing (while paused, during the ring-out),
    /// fired by the next write; and whether it has fired. Set from the test's thread.
    private let requested = Locked<(fault: Fault?, fired: Bool)>((nil, false))
    /// Pace writes like a sound card would (sleeping), so time passes as in a real session.
    public let realTime: Bool
    /// The kernel thread that opened the device (made this object), and those that closed it:
    /// a test compares them with the engine's audio thread, which must never open or close one.
    public let openedOnThread = kernelThreadID()
    private let closers = Locked<[Int32]>([])
    public var closedOnThreads: [Int32] { closers.withLock { $0 } }

    /// Set for a device whose `close` does not return until `releaseClose` (libjack's close once
    /// blocked for good after its server restarted); signalled once `close` has closed.
    private let closeHeld: DispatchSemaphore?
    private let closedSignal = DispatchSemaphore(value: 0)

    public init(
        writeFaults: [Int: Fault] = [:], waitFaults: [Int: Fault] = [:], rate: Int = 48000, channels: Int = 2,
        periodFrames: Int = 256, realTime: Bool = false, countsSilence: Bool = false, closeBlocks: Bool = false
    ) throws {
        closeHeld = closeBlocks ? DispatchSemaphore(value: 0) : nil
        silenceHeard = countsSilence ? 0 : nil
        real = try AlsaPCM(
            PCMRequest(device: "null", rate: rate, channels: channels, format: .float32, periodFrames: periodFrames))
        self.writeFaults = writeFaults
        self.waitFaults = waitFaults
        self.realTime = realTime
    }

    public var configuration: PCMConfiguration { real.configuration }

    /// Makes the next write fail with `fault`; safe to call from any thread.
    public func injectOnNextWrite(_ fault: Fault) {
        requested.withLock { $0 = (fault, false) }
    }

    /// True once the fault asked for with `injectOnNextWrite` has been returned by a write.
    public var requestedFaultFired: Bool { requested.withLock { $0.fired } }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        writeCalls += 1
        if stuck { return Int(-EAGAIN) }
        let asked = requested.withLock { request -> Fault? in
            guard let fault = request.fault else { return nil }
            request = (nil, true)
            return fault
        }
        if let fault = asked ?? writeFaults.removeValue(forKey: writeCalls) {
            switch fault {
            case .error(let code): return Int(code)
            case .shortWrite(let count):
                let written = real.writeInterleaved(bytes, frames: min(count, frames))
                if written > 0 { framesWritten += written }
                return written
            case .endlessAgain:
                stuck = true
                return Int(-EAGAIN)
            case .countedUnderrun(let frames):
                silenceHeard = silenceHeard.map { $0 + Int64(frames) }
                return Int(-EPIPE)
            }
        }
        let written = real.writeInterleaved(bytes, frames: frames)
        if written > 0 {
            framesWritten += written
            if realTime { usleep(useconds_t(written * 1_000_000 / configuration.rate)) }
        }
        return written
    }

    public func wait(timeoutMs: Int32) -> Int32 {
        waitCalls += 1
        if stuck {
            // A stuck device lets the wait time out, as a real one would.
            usleep(useconds_t(timeoutMs) * 1000)
            return 0
        }
        if let fault = waitFaults.removeValue(forKey: waitCalls), case .error(let code) = fault { return code }
        return real.wait(timeoutMs: timeoutMs)
    }

    public func recover(_ error: Int32) -> Int32 {
        recoveries.append(error)
        return real.recover(error)
    }

    public func drain() -> Int32 { real.drain() }
    public func status() -> PCMStatus? { stuck ? nil : real.status() }
    public func close() {
        let thread = kernelThreadID()
        closeHeld?.wait()
        closers.withLock { $0.append(thread) }
        real.close()
        closedSignal.signal()
    }

    /// Lets a `close` held by `closeBlocks` go on.
    public func releaseClose() { closeHeld?.signal() }

    /// Waits up to `seconds` for `close` to have closed the device: true if it has.
    public func waitUntilClosed(seconds: Double) -> Bool {
        guard closedSignal.wait(timeout: .now() + seconds) == .success else { return false }
        closedSignal.signal()
        return true
    }
    public func silenceHeardFrames() -> Int64? { silenceHeard }
}
