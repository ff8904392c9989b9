import Foundation
import Glibc
import GongAudio
import Testing

@testable import gong

/// gong's own PulseAudio client (`PulsePCM`) against the project's null sink, on PulseAudio and on
/// PipeWire's PulseAudio server: what it grants, that it is paced by the server's clock and
/// reports it exactly, and how it says no.
@Suite(.serialized) struct PulseClientTests {
    @Test func deviceNamesChooseTheRoute() {
        #expect(OutputRoute(device: "pulse") == .pulseAudio(sink: nil))
        #expect(OutputRoute(device: "pulse:gong_test") == .pulseAudio(sink: "gong_test"))
        for alsa in ["default", "null", "hw:0,0", "plughw:1", "pulse:", "pulsex", "sysdefault:CARD=x"] {
            #expect(OutputRoute(device: alsa) == .alsa, "\(alsa)")
        }
    }

    @Test(arguments: SoundServer.allCases)
    func theDefaultIs500msInFourPeriodsAndTakesBack(server: SoundServer) throws {
        try server.require()
        let pcm = try server.inThisProcess { try PulsePCM(PCMRequest(device: "pulse:gong_test"), sink: "gong_test") }
        let configuration = pcm.configuration
        #expect(configuration.rate == 48000 && configuration.channels == 2 && configuration.format == .float32)
        #expect(configuration.periodFrames == 6000, "\(configuration)")
        #expect(configuration.bufferFrames == 24000, "\(configuration)")
        #expect(configuration.takesBack)
        #expect(configuration.soundServer && ThreadPriority.suited(to: configuration) == .raised)
    }

    /// Three seconds written as fast as the stream takes them take three seconds less the buffer
    /// (the frames in it are not heard yet when the last is written), and the server's reports
    /// place device frame 0 exactly: the earliest of them agrees with another, half a second or
    /// more apart, within a millisecond on PulseAudio, and on PipeWire within that and the
    /// graph's quantum, by which its reports may be stale (measured on the graph, not taken from
    /// the client's own bound). A clock that ran at another rate, or a delay counted wrongly,
    /// would place reports apart in time at different moments. Not every report agrees: on a
    /// busy machine PulseAudio stamps some late (bench/RESULTS.md, stop 53), never early,
    /// and so the device clock goes by the earliest (`PulseReadLine`, `DeviceClock`).
    @Test(arguments: SoundServer.allCases)
    func itIsPacedByTheServerAndReportsWhenFramesAreHeard(server: SoundServer) throws {
        try server.require()
        // On PipeWire, the graph's quantum, from its own cycles: how stale a report may be.
        let bound = Self.bound(
            quantumFrames: server == .pipeWire ? try PipeWireTap.quantumFrames(sink: "gong_test") : nil)
        let pcm = try server.inThisProcess {
            try PulsePCM(PCMRequest(device: "pulse:gong_test", channels: 1), sink: "gong_test")
        }
        let period = pcm.configuration.periodFrames
        let silence = [Float](repeating: 0, count: period)
        let seconds: Int64 = 3
        var written: Int64 = 0
        // Each report once (one comes a second), by the moment the server measured it: where it
        // places frame 0.
        var origins: [(measured: Int64, origin: Int64)] = []
        let start = MonotonicTime.now()
        var elapsed = 0.0
        // Pacing is judged on the first three seconds; the writing goes on (to eight seconds at
        // most) until a report agrees with the earliest, for a machine too busy to agree sooner.
        while written < 8 * 48000 {
            #expect(pcm.wait(timeoutMs: 1000) == 1)
            let count = silence.withUnsafeBytes { pcm.writeInterleaved($0.baseAddress!, frames: period) }
            #expect(count > 0)
            written += Int64(max(0, count))
            if elapsed == 0, written >= seconds * 48000 { elapsed = MonotonicTime.now().seconds - start.seconds }
            // Reports from the second second on: the stream is playing by then.
            if written > 48000, let status = pcm.status(), status.state == .running,
                origins.last.map({ abs($0.measured - status.timestamp.nanoseconds) < 100_000_000 }) != true
            {
                let origin =
                    status.timestamp.nanoseconds + (Int64(status.delayFrames) - written) * 1_000_000_000 / 48000
                origins.append((status.timestamp.nanoseconds, origin))
            }
            if written >= seconds * 48000, Self.earliestIsAgreedWith(origins, within: bound) { break }
        }
        // The last frames are written a buffer ahead of the ear: 3 s less the buffer is the
        // least a paced stream can take (a device that takes frames at once takes none).
        let least = Double(seconds) - pcm.configuration.latencySeconds - 0.02
        #expect(
            elapsed > least && elapsed < Double(seconds) + 0.2, "3 s of frames took \(elapsed) s (at least \(least) s)")
        let earliest = origins.map(\.origin).min() ?? 0
        let placements = origins.map {
            "\(Double($0.measured - start.nanoseconds) / 1e9) s: +\(Double($0.origin - earliest) / 1e6) ms"
        }
        print("\(server) reports, measured at: frame 0 placed after the earliest: \(placements)")
        #expect(
            Self.earliestIsAgreedWith(origins, within: bound),
            "no report half a second or more from the earliest agrees with it; frame 0 placed after the earliest by the report measured at \(placements)"
        )
        #expect(pcm.drain() == 0)
    }

    /// PulseAudio's reports agree within a millisecond; pipewire-pulse's are up to a quantum
    /// stale, so a quantum more there (the graph's own, `PipeWireTap.quantumFrames`).
    static func bound(quantumFrames: Int?) -> Int64 {
        1_000_000 + Int64(quantumFrames ?? 0) * 1_000_000_000 / 48000
    }

    /// Whether a report measured half a second or more from the earliest places frame 0 within
    /// `bound` of it.
    static func earliestIsAgreedWith(_ origins: [(measured: Int64, origin: Int64)], within bound: Int64) -> Bool {
        guard let earliest = origins.min(by: { $0.origin < $1.origin }) else { return false }
        return origins.contains {
            abs($0.measured - earliest.measured) >= 500_000_000 && $0.origin - earliest.origin < bound
        }
    }

    /// The server runs dry while nothing is written: the next wait or write says so once, as
    /// ALSA's `-EPIPE`, however short the gap (the server would otherwise hide it).
    @Test(arguments: SoundServer.allCases)
    func anUnderrunTheServerReportsIsToldOnceAsEPIPE(server: SoundServer) throws {
        try server.require()
        let pcm = try server.inThisProcess {
            try PulsePCM(PCMRequest(device: "pulse:gong_test", channels: 1), sink: "gong_test")
        }
        let period = pcm.configuration.periodFrames
        let silence = [Float](repeating: 0, count: period)
        func play(seconds: Double) -> [Int32] {
            var errors: [Int32] = []
            var written = 0
            while written < Int(seconds * 48000), errors.count < 10 {
                let ready = pcm.wait(timeoutMs: 1000)
                guard ready == 1 else { errors.append(ready); continue }
                let count = silence.withUnsafeBytes { pcm.writeInterleaved($0.baseAddress!, frames: period) }
                if count < 0 { errors.append(Int32(count)) } else { written += count }
            }
            return errors
        }
        #expect(play(seconds: 0.5) == [])
        // Long enough for the whole buffer to play out, and then some.
        usleep(UInt32((pcm.configuration.latencySeconds + 0.2) * 1_000_000))
        #expect(play(seconds: 0.5) == [-EPIPE])
        #expect(pcm.recover(-EPIPE) == 0)
        #expect(play(seconds: 0.5) == [])
    }

    @Test(arguments: SoundServer.allCases)
    func aSinkThatDoesNotExistIsOneClearLine(server: SoundServer) throws {
        try server.require()
        do {
            _ = try server.inThisProcess { try PulsePCM(PCMRequest(device: "pulse:nosuch"), sink: "nosuch") }
            Issue.record("a sink that does not exist was opened")
        } catch {
            #expect(
                (error as? AudioDeviceError).map { describe($0) }
                    == "audio device 'pulse:nosuch': no such sink 'nosuch'; 'gong devices' lists them (pa_context_get_sink_info_by_name)"
            )
        }
    }

    /// A server that takes the connection and never answers (a hung one) is one line naming its
    /// address and saying it did not answer — never the library's "OK" for no error code.
    @Test func aServerThatNeverAnswersIsOneLineNamingItNeverOK() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.file("silent.sock")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(listener, 4) == 0)
        // Connections wait in the backlog, accepted by the kernel and answered by nobody.
        let result = try runGong(["run", "box", "--device", "pulse"], environment: ["PULSE_SERVER": "unix:" + path])
        #expect(result.status == 69)
        #expect(
            result.stderr
                == "gong: audio device 'pulse': no PulseAudio server to play through at unix:\(path) (it did not answer within 5 s); start one, or choose an ALSA device with --device ('gong devices' lists them) (pa_context_connect)\n",
            "\(result.stderr)")
    }

    @Test func noServerIsOneClearLineAndExitStatus69() throws {
        let result = try runGong(
            ["run", "box", "--device", "pulse"], environment: ["PULSE_SERVER": "unix:/nonexistent/gong-test"])
        #expect(result.status == 69)
        #expect(
            result.stderr
                == "gong: audio device 'pulse': no PulseAudio server to play through at unix:/nonexistent/gong-test (Connection refused); start one, or choose an ALSA device with --device ('gong devices' lists them) (pa_context_connect)\n",
            "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// Unless told otherwise gong plays through a sound server that answers, as its own client;
    /// with none it takes ALSA's default, and says so when that has no card either.
    /// Two sessions a server, about 40 s: run by `LongRoundPulseTests` (`make test-long`).
    func theAutomaticDeviceIsTheServerWhenOneAnswersElseALSAsDefault(server: SoundServer) throws {
        try server.require()
        let (process, output) = try startGong(
            ["run", "box", "--cycles", "1", "--json"], environment: server.environment)
        var firstLine = Data()
        while !firstLine.contains(0x0A) {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            firstLine.append(more)
        }
        let started = try JSONSerialization.jsonObject(with: firstLine.prefix { $0 != 0x0A }) as? [String: Any]
        process.terminate()
        process.waitUntilExit()
        // On PipeWire `auto` plays on the graph natively; on PulseAudio through gong's own client.
        let expected = server == .pipeWire ? "pipewire" : "pulse"
        #expect(
            started?["type"] as? String == "started" && started?["device"] as? String == expected,
            "\(String(describing: started))")

        let alone = try runGong(
            ["run", "box", "--cycles", "1", "--json"], environment: ["PULSE_SERVER": "unix:/nonexistent/gong-test"])
        if alsaAnySoundCard() {
            #expect(alone.stdout.contains("\"device\":\"default\""), "\(alone.stdout) \(alone.stderr)")
        } else {
            #expect(alone.status == 69)
            #expect(
                alone.stderr.hasPrefix("gong: audio device 'default': ")
                    && alone.stderr.contains("no sound card found and no PulseAudio or PipeWire server answered"),
                "\(alone.stderr)")
        }
    }

    @Test(arguments: SoundServer.allCases)
    func devicesListTheServersSinks(server: SoundServer) throws {
        try server.require()
        let result = try runGong(
            ["devices"], home: ProcessInfo.processInfo.environment["HOME"], environment: server.environment)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains("pulse:gong_test"), "\(result.stdout)")
        #expect(result.stdout.contains("PulseAudio sink: "))
    }
}
