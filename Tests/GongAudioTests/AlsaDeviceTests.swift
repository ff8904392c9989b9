import Glibc
import Testing

@testable import GongAudio

@Suite struct AlsaDeviceTests {
    @Test func theNullDeviceNegotiatesAndTakesPeriods() throws {
        let pcm = try AlsaPCM(PCMRequest(device: "null", rate: 48000, channels: 2, periodFrames: 256))
        let configuration = pcm.configuration
        #expect(configuration.rate == 48000 && configuration.channels == 2)
        #expect(configuration.format == .float32, "float is preferred when the device takes it")
        #expect(configuration.periodFrames == 256)
        #expect(configuration.bufferFrames >= 512)
        #expect(
            !configuration.soundServer && !configuration.paced && ThreadPriority.suited(to: configuration) == nil,
            "null never makes its thread wait: a real-time one would take a core")
        var card = configuration
        card.paced = true
        #expect(
            ThreadPriority.suited(to: card) == .realtime,
            "a device that is not a sound server's is fed by a real-time thread")
        let converter = SampleConverter(format: configuration.format, capacitySamples: 512)
        var total = 0
        for _ in 0..<200 {
            total += pcm.writeInterleaved(converter.convert(count: 512), frames: 256)
        }
        #expect(total == 200 * 256)
    }

    /// A latency is three periods (a key press waits at most a third more than the buffer), and
    /// with none asked for the default is 150 ms.
    @Test func aLatencyIsThreePeriodsAndTheDefaultIs150ms() throws {
        let pcm = try AlsaPCM(PCMRequest(device: "null", rate: 48000, channels: 2, latencyMs: 100))
        #expect(pcm.configuration.periodFrames == 1600, "fewer wake-ups when more latency is allowed")
        #expect(pcm.configuration.bufferFrames == 4800)
        let plain = try AlsaPCM(PCMRequest(device: "null", rate: 44100, channels: 2))
        #expect(
            plain.configuration.periodFrames == 2205 && plain.configuration.bufferFrames == 6615,
            "\(plain.configuration)")
        let both = try AlsaPCM(PCMRequest(device: "null", rate: 48000, channels: 2, periodFrames: 1200, latencyMs: 100))
        #expect(both.configuration.periodFrames == 1200 && both.configuration.bufferFrames == 4800)
    }

    /// `--period`'s help is worked out from the defaults, so it says what ALSA is really asked
    /// for when no period is given.
    @Test func theDefaultPeriodsInTheHelpAreTheOnesADeviceGets() throws {
        let plain = try AlsaPCM(PCMRequest(device: "null", rate: 48000, channels: 2))
        let described = BufferDefaults.describedPeriods(at: 48000)
        #expect(described == "6000 at 48 kHz through pulse, \(plain.configuration.periodFrames) through ALSA")
        #expect(described == "6000 at 48 kHz through pulse, 2400 through ALSA")
    }

    @Test(arguments: [SampleFormat.int16, .int32, .float32])
    func everyFormatCanBeRequested(format: SampleFormat) throws {
        let pcm = try AlsaPCM(PCMRequest(device: "null", rate: 44100, channels: 1, format: format))
        #expect(pcm.configuration.format == format)
        #expect(pcm.configuration.rate == 44100 && pcm.configuration.channels == 1)
    }

    @Test func conversionRoundsAndClampsLikeTheFileWriter() {
        let converter = SampleConverter(format: .int16, capacitySamples: 4)
        let samples: [Float] = [1.5, -1.5, 0.5, 1 / 32768]
        for (index, sample) in samples.enumerated() { converter.renderBuffer[index] = sample }
        let bytes = converter.convert(count: 4)
        let values = (0..<4).map { bytes.load(fromByteOffset: $0 * 2, as: Int16.self) }
        #expect(values == [32767, -32768, 16384, 1])
    }

    @Test func aFloatDeviceIsRenderedForInPlace() {
        let converter = SampleConverter(format: .float32, capacitySamples: 4)
        converter.renderBuffer[2] = 0.25
        let bytes = converter.convert(count: 4)
        #expect(bytes == UnsafeRawPointer(converter.renderBuffer.baseAddress!))
        #expect(bytes.load(fromByteOffset: 8, as: Float.self) == 0.25)
    }

    /// What went wrong is data; the advice ('gong devices') is the command line's
    /// (DeviceFailureTests), and building the error probes no sound server.
    @Test func anUnknownDeviceIsNoSuchDeviceWithALSAsWords() {
        #expect(throws: AudioDeviceError.self) { try AlsaPCM(PCMRequest(device: "nosuchdevice")) }
        do {
            _ = try AlsaPCM(PCMRequest(device: "nosuchdevice"))
        } catch {
            #expect(error.reason == .noSuchDevice && error.errno == ENOENT && error.system == .alsa)
            #expect(error.detail == "No such file or directory" && error.operation == "snd_pcm_open")
            #expect(
                error.description
                    == "audio device 'nosuchdevice': no such device (No such file or directory) (snd_pcm_open)")
            #expect(error.code == -ENOENT)
            #expect(!error.description.contains("gong ") && !error.description.contains("--"))
        }
    }

    @Test(arguments: [
        (EBUSY, AudioDeviceError.Reason.busy), (ENOENT, .noSuchDevice), (ENODEV, .noSuchDevice),
        (ENXIO, .noSuchDevice), (EACCES, .permissionDenied), (EPERM, .permissionDenied),
        (ECONNREFUSED, .noServer), (EHOSTDOWN, .noServer), (EIO, .other),
        (EINVAL, .other)
    ])
    func aFailedOpenIsClassedByItsErrno(errno: Int32, reason: AudioDeviceError.Reason) {
        let error = AlsaPCM.openFailure(-errno, device: "hw:7,0")
        #expect(error.reason == reason && error.errno == errno && error.device == "hw:7,0", "\(error)")
        #expect(error.detail == alsaErrorText(-errno) && error.operation == "snd_pcm_open")
    }

    @Test func playbackDevicesIncludeNull() {
        let names = listPlaybackDevices().map(\.name)
        #expect(names.contains("null"))
    }
}
