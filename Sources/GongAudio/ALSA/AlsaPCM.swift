import CAlsa
import Glibc

/// A real ALSA playback device, opened by any PCM name: `default`, `hw:0,0`, `plughw:1`,
/// `pulse`, `null`, …
///
/// Opening negotiates everything the device may refuse — format (float, then 32-bit, then
/// 16-bit integers), channels, rate, period and buffer — and reports what was granted.
/// Writes are blocking; the real-time loop waits for room with `wait` first, so a write never
/// blocks for long.
public final class AlsaPCM: PCM {
    public let configuration: PCMConfiguration
    private var handle: OpaquePointer?
    private let statusBuffer: OpaquePointer

    public init(_ request: PCMRequest) throws(AudioDeviceError) {
        let failure = OpenFailure(device: request.device)
        let pcm = try Self.openPlayback(request.device)
        var closeOnFailure = true
        defer { if closeOnFailure { _ = alsaClose(pcm) } }

        let granted = try Self.setHardwareParameters(pcm, for: request, failure)
        try Self.setSoftwareParameters(
            pcm, periodFrames: granted.periodFrames, bufferFrames: granted.bufferFrames, failure)
        guard let status = alsaStatusAllocate() else { throw failure(-ENOMEM, "snd_pcm_status_malloc") }
        statusBuffer = status
        handle = pcm
        configuration = PCMConfiguration(
            device: request.device, rate: Int(granted.rate), channels: Int(granted.channels), format: granted.format,
            periodFrames: Int(granted.periodFrames), bufferFrames: Int(granted.bufferFrames),
            soundServer: alsaIsExternalPlugin(pcm), paced: !alsaIsNull(pcm))
        closeOnFailure = false
    }

    /// An open's failure after `snd_pcm_open`: `code` is ALSA's negative errno.
    private struct OpenFailure {
        let device: String

        func callAsFunction(
            _ code: Int32, _ operation: String, _ reason: AudioDeviceError.Reason = .other, _ detail: String? = nil
        ) -> AudioDeviceError {
            AudioDeviceError(
                reason, errno: -code, operation: operation, device: device, detail: detail ?? alsaErrorText(code))
        }
    }

    /// What the device granted of what was asked.
    private struct Granted {
        let format: SampleFormat
        let channels: UInt32
        let rate: UInt32
        let periodFrames: UInt
        let bufferFrames: UInt
    }

    /// The device opened for playback, at the priority opening wants (`ThreadPriority.whileOpening`).
    private static func openPlayback(_ name: String) throws(AudioDeviceError) -> OpaquePointer {
        try ThreadPriority.whileOpening { () throws(AudioDeviceError) -> OpaquePointer in
            var opened: OpaquePointer?
            let openResult = alsaOpenPlayback(&opened, name: name)
            guard openResult == 0, let pcm = opened else {
                throw AlsaPCM.openFailure(openResult, device: name)
            }
            return pcm
        }
    }

    /// Access, format, channels, rate, period and buffer negotiated and applied.
    private static func setHardwareParameters(
        _ pcm: OpaquePointer, for request: PCMRequest, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> Granted {
        guard let hw = alsaHardwareParametersAllocate() else { throw failure(-ENOMEM, "snd_pcm_hw_params_malloc") }
        defer { alsaHardwareParametersFree(hw) }
        let result = alsaHardwareParametersAny(pcm, hw)
        guard result >= 0 else { throw failure(result, "snd_pcm_hw_params_any") }
        let format = try setAccessAndFormat(pcm, hw, asked: request.format, failure)
        let (channels, rate) = try setChannelsAndRate(pcm, hw, for: request, failure)
        try setPeriodAndBuffer(pcm, hw, for: request, rate: rate, failure)
        let applied = alsaApplyHardwareParameters(pcm, hw)
        guard applied >= 0 else { throw failure(applied, "snd_pcm_hw_params") }
        return Granted(
            format: format, channels: channels, rate: rate, periodFrames: alsaGetPeriodSize(hw),
            bufferFrames: alsaGetBufferSize(hw))
    }

    /// Interleaved access, and the format asked for or else the first of gong's the device takes
    /// (float, then 32-bit, then 16-bit integers).
    private static func setAccessAndFormat(
        _ pcm: OpaquePointer, _ hw: OpaquePointer, asked: SampleFormat?, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> SampleFormat {
        var result = alsaSetInterleavedAccess(pcm, hw)
        guard result >= 0 else {
            throw failure(
                result, "snd_pcm_hw_params_set_access", .formatUnsupported, "interleaved access not supported")
        }
        let candidates = asked.map { [$0] } ?? SampleFormat.allCases
        guard let format = candidates.first(where: { alsaTestFormat(pcm, hw, $0.alsa) }) else {
            let supported = SampleFormat.allCases.filter { alsaTestFormat(pcm, hw, $0.alsa) }.map(\.rawValue)
            throw failure(
                -EINVAL, "snd_pcm_hw_params_set_format", .formatUnsupported,
                "format \(asked?.rawValue ?? "float32/int32/int16") not supported; the device takes \(supported.isEmpty ? "none of gong's formats" : supported.joined(separator: ", "))"
            )
        }
        result = alsaSetFormat(pcm, hw, format.alsa)
        guard result >= 0 else { throw failure(result, "snd_pcm_hw_params_set_format", .formatUnsupported) }
        return format
    }

    /// The channels (at most two) and the rate nearest those asked for.
    private static func setChannelsAndRate(
        _ pcm: OpaquePointer, _ hw: OpaquePointer, for request: PCMRequest, _ failure: OpenFailure
    ) throws(AudioDeviceError) -> (channels: UInt32, rate: UInt32) {
        var channels = UInt32(request.channels)
        var result = alsaSetChannelsNear(pcm, hw, &channels)
        guard result >= 0, channels <= 2 else {
            let range = alsaChannelRange(hw)
            throw failure(
                result < 0 ? result : -EINVAL, "snd_pcm_hw_params_set_channels_near", .channelsUnsupported,
                "cannot play \(request.channels) channel(s); the device takes \(range.min)–\(range.max)")
        }
        var rate = UInt32(request.rate)
        result = alsaSetRateNear(pcm, hw, &rate)
        guard result >= 0 else {
            throw failure(
                result, "snd_pcm_hw_params_set_rate_near", .rateUnsupported,
                "cannot play at \(request.rate) Hz: \(alsaErrorText(result))"
            )
        }
        return (channels, rate)
    }

    /// The period and buffer nearest those asked for: three periods to the buffer, or as many
    /// as the device insists on, so that the latency asked for is the latency granted.
    private static func setPeriodAndBuffer(
        _ pcm: OpaquePointer, _ hw: OpaquePointer, for request: PCMRequest, rate: UInt32, _ failure: OpenFailure
    ) throws(AudioDeviceError) {
        let periodsPerBuffer = max(BufferDefaults.fixed.periodsPerBuffer, alsaPeriodsMin(hw))
        var periodFrames = UInt(
            request.periodFrames(at: Int(rate), periodsPerBuffer: periodsPerBuffer, defaults: .fixed))
        var result = alsaSetPeriodSizeNear(pcm, hw, &periodFrames)
        guard result >= 0 else { throw failure(result, "snd_pcm_hw_params_set_period_size_near") }
        var bufferFrames = UInt(
            request.bufferFrames(
                at: Int(rate), period: Int(periodFrames), periodsPerBuffer: periodsPerBuffer, defaults: .fixed))
        result = alsaSetBufferSizeNear(pcm, hw, &bufferFrames)
        guard result >= 0 else { throw failure(result, "snd_pcm_hw_params_set_buffer_size_near") }
    }

    /// Start and wake-up thresholds, and monotonic timestamps where the device has them.
    private static func setSoftwareParameters(
        _ pcm: OpaquePointer, periodFrames: UInt, bufferFrames: UInt, _ failure: OpenFailure
    ) throws(AudioDeviceError) {
        guard let sw = alsaSoftwareParametersAllocate() else { throw failure(-ENOMEM, "snd_pcm_sw_params_malloc") }
        defer { alsaSoftwareParametersFree(sw) }
        var result = alsaSoftwareParametersCurrent(pcm, sw)
        guard result >= 0 else { throw failure(result, "snd_pcm_sw_params_current") }
        // Start playing once the buffer is full, so the first frame meets a full cushion.
        result = alsaSetStartThreshold(pcm, sw, bufferFrames - bufferFrames % periodFrames)
        guard result >= 0 else { throw failure(result, "snd_pcm_sw_params_set_start_threshold") }
        result = alsaSetAvailMin(pcm, sw, periodFrames)
        guard result >= 0 else { throw failure(result, "snd_pcm_sw_params_set_avail_min") }
        // Timestamps on CLOCK_MONOTONIC say when each frame is heard; some plugins lack them.
        _ = alsaEnableMonotonicTimestamps(pcm, sw)
        result = alsaApplySoftwareParameters(pcm, sw)
        guard result >= 0 else { throw failure(result, "snd_pcm_sw_params") }
    }

    deinit {
        close()
        alsaStatusFree(statusBuffer)
    }

    /// A failed `snd_pcm_open` as data: what its errno means for the person (busy, no such
    /// device, not allowed) and ALSA's own words. Whether a sound card or a sound server is there
    /// is for whoever words it to ask: building the error probes nothing.
    public static func openFailure(_ code: Int32, device: String) -> AudioDeviceError {
        let reason: AudioDeviceError.Reason =
            switch -code {
            case EBUSY: .busy
            case ENOENT, ENODEV, ENXIO: .noSuchDevice
            case EACCES, EPERM: .permissionDenied
            // A plugin's server (ALSA's `pulse`, `jack`) that is not there.
            case ECONNREFUSED, EHOSTDOWN: .noServer
            default: .other
            }
        return AudioDeviceError(
            reason, errno: -code, operation: "snd_pcm_open", device: device, detail: alsaErrorText(code))
    }

    /// Whether an ALSA device name leads to a sound card (`default`, `hw:`, `plughw:`,
    /// `sysdefault`) rather than to a plugin: where "no sound card" is worth saying.
    public static func usesSoundCard(_ device: String) -> Bool {
        device == "default" || device.hasPrefix("hw:") || device.hasPrefix("plughw:")
            || device.hasPrefix("sysdefault")
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int {
        guard let handle else { return Int(-EBADFD) }
        return alsaWriteInterleaved(handle, bytes, frames: frames)
    }

    public func wait(timeoutMs: Int32) -> Int32 {
        guard let handle else { return -EBADFD }
        return alsaWait(handle, timeoutMs: timeoutMs)
    }

    public func recover(_ error: Int32) -> Int32 {
        guard let handle else { return -EBADFD }
        return alsaRecover(handle, error)
    }

    public func drain() -> Int32 {
        guard let handle else { return -EBADFD }
        return alsaDrain(handle)
    }

    public func status() -> PCMStatus? {
        guard let handle, alsaStatus(handle, statusBuffer) == 0 else { return nil }
        let state: PCMStatus.State =
            switch alsaStatusState(statusBuffer) {
            case SND_PCM_STATE_PREPARED: .prepared
            case SND_PCM_STATE_RUNNING: .running
            case SND_PCM_STATE_XRUN: .underrun
            case SND_PCM_STATE_DRAINING: .draining
            case SND_PCM_STATE_PAUSED: .paused
            case SND_PCM_STATE_SUSPENDED: .suspended
            case SND_PCM_STATE_DISCONNECTED: .disconnected
            default: .other
            }
        // The timestamp is when `delay` was measured. Some plugins (PulseAudio's) report a
        // stale one; then the moment of the status call stands in for it. None at all (0)
        // stays none.
        let now = MonotonicTime.now()
        let stamped = MonotonicTime(alsaStatusTimestamp(statusBuffer))
        let measured =
            stamped.nanoseconds == 0 || abs(now.nanoseconds - stamped.nanoseconds) < 2_000_000 ? stamped : now
        return PCMStatus(state: state, delayFrames: alsaStatusDelay(statusBuffer), timestamp: measured)
    }

    public func close() {
        guard let handle else { return }
        self.handle = nil
        _ = alsaClose(handle)
    }
}

/// A playback device ALSA knows, as `aplay -L` lists it.
public struct AudioDeviceInfo: Sendable, Equatable {
    public var name: String
    public var description: String
}

/// Every device gong can play on: ALSA's name hints, less the capture-only ones (its `pulse`
/// is played by gong's own PulseAudio client, see `OutputRoute`), then a running PipeWire
/// server's sinks as `pipewire:NODE`, then a running PulseAudio server's (PipeWire's too) as
/// `pulse:SINK`, then a running JACK server's playback ports as `jack:PORT` (never starting one),
/// then the pipe and tcp sources of the snapserver whose control is at `snapserver` (`HOST:PORT`).
public func listPlaybackDevices(
    snapserver: (host: String, port: Int) = ("127.0.0.1", SnapcastAddress.defaultControlPort)
)
    -> [AudioDeviceInfo]
{
    let alsa = alsaDeviceHints()
        .filter { $0.io == nil || $0.io == "Output" }
        .map { hint in
            var description = hint.description.split(separator: "\n").joined(separator: " — ")
            switch OutputRoute(device: hint.name) {
            case .alsa: break
            case .jack: description += " (gong plays it as a JACK client, not through ALSA)"
            case .pipeWire: description += " (gong plays it as a PipeWire stream, not through ALSA)"
            case .pulseAudio: description += " (gong plays it as a PulseAudio client, not through ALSA)"
            case .snapcast, .snapcastUnreadable: description += " (gong feeds it to a snapserver, not through ALSA)"
            }
            return AudioDeviceInfo(name: hint.name, description: description)
        }
    // ALSA's plugins list `jack` too, when installed: named once.
    let jack = JackPCM.ports().filter { port in !alsa.contains { $0.name == port.name } }
    return alsa + PipeWirePCM.sinks() + PulsePCM.sinks() + jack
        + SnapcastPCM.streams(host: snapserver.host, port: snapserver.port)
}
