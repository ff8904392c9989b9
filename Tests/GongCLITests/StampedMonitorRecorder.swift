import Foundation
import Glibc
import GongTestSupport

/// Records a sink's monitor as `MonitorRecorder` does, but through parec's standard output, each
/// read stamped with CLOCK_REALTIME the moment it returns: where the recording's frames fall on
/// the system's clock, worked out from the recorder's own arrivals (`SinkClock`), never from
/// what gong says. parec asks for a short latency, so the sink hands its frames over in small
/// blocks as it plays them and most blocks arrive within a fraction of a millisecond.
final class StampedMonitorRecorder {
    private let process = Process()
    private let reading: Reading

    /// What the reader thread fills until parec's output ends; read only after it has.
    private final class Reading: @unchecked Sendable {
        var bytes: [UInt8] = []
        var arrivals: [SinkClock.Arrival] = []
        let firstBlock = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
    }

    /// - Parameters:
    ///   - latencyMs: parec's latency: the size of the blocks it is handed, so the finest step of
    ///     the arrivals' clock.
    init(server: SoundServer = .pulseAudio, sink: String = "gong_test", latencyMs: Int = 10) throws {
        let output = Pipe()
        let arguments = [
            "-d", "\(sink).monitor", "--format=float32le", "--rate=48000", "--channels=1", "--raw",
            "--latency-msec=\(latencyMs)"
        ]
        process.environment = environment(with: server.environment)
        // Real-time where it may be: a recorder held off by a busy machine stamps its blocks late
        // (the fit takes the earliest, but wants some).
        MonitorRecorder.setUpParec(process, arguments)
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try? output.fileHandleForWriting.close()
        let reading = Reading()
        self.reading = reading
        let descriptor = output.fileHandleForReading.fileDescriptor
        let reader = Thread {
            var block = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = block.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                reading.arrivals.append(
                    SinkClock.Arrival(
                        firstFrame: reading.bytes.count / 4, frames: count / 4,
                        seconds: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9))
                reading.bytes.append(contentsOf: block[..<count])
                if reading.arrivals.count == 1 { reading.firstBlock.signal() }
            }
            reading.firstBlock.signal()  // a parec that ended before its first block
            reading.ended.signal()
        }
        reader.qualityOfService = .userInteractive
        reader.start()
        // Recording once samples arrive (the sink's keeper keeps them coming).
        guard reading.firstBlock.wait(timeout: .now() + Waiting.generousSeconds) == .success, process.isRunning else {
            end()
            throw POSIXError(.EIO)
        }
    }

    /// A test that failed before `stop` leaves no recorder behind.
    deinit { end() }

    private func end() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ends the recording (after letting the last blocks arrive): its samples, and when each
    /// block of them arrived.
    func stop() -> (samples: [Float], arrivals: [SinkClock.Arrival]) {
        usleep(300_000)
        end()
        reading.ended.wait()
        let samples = reading.bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (samples, reading.arrivals)
    }
}
