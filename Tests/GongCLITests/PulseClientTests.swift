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
    /// (the frames in it are not heard yet when the last is written), and three reports in four
    /// place device frame 0 within a millisecond of the earliest on PulseAudio, within the
    /// client's jitter bound on PipeWire. Not every report: on a busy machine they spread wider,
    /// and the device clock goes by the earliest (`DeviceClock`).
    @Test(arguments: SoundServer.allCases)
    func itIsPacedByTheServerAndReportsWhenFramesAreHeard(server: SoundServer) throws {
        try server.require()
        let pcm = try server.inThisProcess {
            try PulsePCM(PCMRequest(device: "pulse:gong_test", channels: 1), sink: "gong_test")
        }
        let period = pcm.configuration.periodFrames
        let silence = [Float](repeating: 0, count: period)
        var written: Int64 = 0
        var origins: [Int64] = []
        let start = MonotonicTime.now()
        while written < 3 * 48000 {
            #expect(pcm.wait(timeoutMs: 1000) == 1)
            let count = silence.withUnsafeBytes { pcm.writeInterleaved($0.baseAddress!, frames: period) }
            #expect(count > 0)
            written += Int64(max(0, count))
            // Reports from the second second on: the stream is playing by then.
            if written > 48000, written % 4800 < Int64(period), let status = pcm.status(), status.state == .running {
                origins.append(
                    status.timestamp.nanoseconds + (Int64(status.delayFrames) - written) * 1_000_000_000 / 48000)
            }
        }
        let elapsed = MonotonicTime.now().seconds - start.seconds
        // The last frames are written a buffer ahead of the ear: 3 s less the buffer is the
        // least a paced stream can take (a device that takes frames at once takes none).
        let least = 3 - pcm.configuration.latencySeconds - 0.02
        #expect(elapsed > least && elapsed < 3.2, "3 s of frames took \(elapsed) s (at least \(least) s)")
        #expect(origins.count >= 8)
        // PulseAudio's reports agree within a millisecond; pipewire-pulse's are up to a quantum
        // stale (5 ms beside the keeper): the client's bound there stands above that.
        let bound = server == .pulseAudio ? 1_000_000 : pcm.configuration.reportJitterNanoseconds
        let earliest = origins.min() ?? 0
        let fromEarliest = origins.map { Double($0 - earliest) / 1e6 }
        #expect(
            origins.filter { $0 - earliest < bound }.count * 4 >= origins.count * 3,
            "frame 0 placed these ms after the earliest report: \(fromEarliest)")
        #expect(pcm.drain() == 0)
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
