import CAlsa
import Glibc

// Every ALSA call gong makes, one thin function each: the whole C surface of the device in one
// place. Results are ALSA's: 0 or a count on success, a negative errno on failure.

func alsaOpenPlayback(_ pcm: inout OpaquePointer?, name: String) -> Int32 {
    CAlsaShims_silenceLibraryErrors()
    return snd_pcm_open(&pcm, name, SND_PCM_STREAM_PLAYBACK, 0)
}

func alsaClose(_ pcm: OpaquePointer) -> Int32 { snd_pcm_close(pcm) }

/// True for a PCM implemented by an external plugin (`pulse`, `pipewire`, `jack`, …), whose
/// audio goes to a sound server rather than to a sound card's buffer.
func alsaIsExternalPlugin(_ pcm: OpaquePointer) -> Bool { snd_pcm_type(pcm) == SND_PCM_TYPE_IOPLUG }

func alsaIsNull(_ pcm: OpaquePointer) -> Bool { snd_pcm_type(pcm) == SND_PCM_TYPE_NULL }

func alsaErrorText(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

func alsaHardwareParametersAllocate() -> OpaquePointer? {
    var params: OpaquePointer?
    return snd_pcm_hw_params_malloc(&params) == 0 ? params : nil
}

func alsaHardwareParametersFree(_ params: OpaquePointer) { snd_pcm_hw_params_free(params) }
func alsaHardwareParametersAny(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    snd_pcm_hw_params_any(pcm, params)
}
func alsaSetInterleavedAccess(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
}
func alsaTestFormat(_ pcm: OpaquePointer, _ params: OpaquePointer, _ format: snd_pcm_format_t) -> Bool {
    snd_pcm_hw_params_test_format(pcm, params, format) == 0
}
func alsaSetFormat(_ pcm: OpaquePointer, _ params: OpaquePointer, _ format: snd_pcm_format_t) -> Int32 {
    snd_pcm_hw_params_set_format(pcm, params, format)
}
func alsaSetChannelsNear(_ pcm: OpaquePointer, _ params: OpaquePointer, _ channels: inout UInt32) -> Int32 {
    snd_pcm_hw_params_set_channels_near(pcm, params, &channels)
}
func alsaChannelRange(_ params: OpaquePointer) -> (min: UInt32, max: UInt32) {
    var low: UInt32 = 0, high: UInt32 = 0
    _ = snd_pcm_hw_params_get_channels_min(params, &low)
    _ = snd_pcm_hw_params_get_channels_max(params, &high)
    return (low, high)
}
func alsaSetRateNear(_ pcm: OpaquePointer, _ params: OpaquePointer, _ rate: inout UInt32) -> Int32 {
    var direction: Int32 = 0
    return snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &direction)
}
func alsaSetPeriodSizeNear(_ pcm: OpaquePointer, _ params: OpaquePointer, _ frames: inout UInt) -> Int32 {
    var direction: Int32 = 0
    return snd_pcm_hw_params_set_period_size_near(pcm, params, &frames, &direction)
}
/// The fewest periods the device's buffer may hold (a sound server's plugin may insist on 3).
func alsaPeriodsMin(_ params: OpaquePointer) -> Int {
    var periods: UInt32 = 0, direction: Int32 = 0
    return snd_pcm_hw_params_get_periods_min(params, &periods, &direction) == 0 ? Int(periods) : 2
}
func alsaSetBufferSizeNear(_ pcm: OpaquePointer, _ params: OpaquePointer, _ frames: inout UInt) -> Int32 {
    snd_pcm_hw_params_set_buffer_size_near(pcm, params, &frames)
}
func alsaApplyHardwareParameters(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    snd_pcm_hw_params(pcm, params)
}
func alsaGetPeriodSize(_ params: OpaquePointer) -> UInt {
    var frames: UInt = 0, direction: Int32 = 0
    _ = snd_pcm_hw_params_get_period_size(params, &frames, &direction)
    return frames
}
func alsaGetBufferSize(_ params: OpaquePointer) -> UInt {
    var frames: UInt = 0
    _ = snd_pcm_hw_params_get_buffer_size(params, &frames)
    return frames
}

func alsaSoftwareParametersAllocate() -> OpaquePointer? {
    var params: OpaquePointer?
    return snd_pcm_sw_params_malloc(&params) == 0 ? params : nil
}
func alsaSoftwareParametersFree(_ params: OpaquePointer) { snd_pcm_sw_params_free(params) }
func alsaSoftwareParametersCurrent(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    snd_pcm_sw_params_current(pcm, params)
}
func alsaSetStartThreshold(_ pcm: OpaquePointer, _ params: OpaquePointer, _ frames: UInt) -> Int32 {
    snd_pcm_sw_params_set_start_threshold(pcm, params, frames)
}
func alsaSetAvailMin(_ pcm: OpaquePointer, _ params: OpaquePointer, _ frames: UInt) -> Int32 {
    snd_pcm_sw_params_set_avail_min(pcm, params, frames)
}
func alsaEnableMonotonicTimestamps(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    let mode = snd_pcm_sw_params_set_tstamp_mode(pcm, params, SND_PCM_TSTAMP_ENABLE)
    let type = snd_pcm_sw_params_set_tstamp_type(pcm, params, SND_PCM_TSTAMP_TYPE_MONOTONIC)
    return mode < 0 ? mode : type
}
func alsaApplySoftwareParameters(_ pcm: OpaquePointer, _ params: OpaquePointer) -> Int32 {
    snd_pcm_sw_params(pcm, params)
}

// The calls the real-time loop makes: no allocation, no locks in gong's code around them.
func alsaWriteInterleaved(_ pcm: OpaquePointer, _ bytes: UnsafeRawPointer, frames: Int) -> Int {
    snd_pcm_writei(pcm, bytes, snd_pcm_uframes_t(frames))
}
func alsaWait(_ pcm: OpaquePointer, timeoutMs: Int32) -> Int32 { snd_pcm_wait(pcm, timeoutMs) }
func alsaRecover(_ pcm: OpaquePointer, _ error: Int32) -> Int32 { snd_pcm_recover(pcm, error, 1) }
func alsaDrain(_ pcm: OpaquePointer) -> Int32 { snd_pcm_drain(pcm) }

func alsaStatusAllocate() -> OpaquePointer? {
    var status: OpaquePointer?
    return snd_pcm_status_malloc(&status) == 0 ? status : nil
}
func alsaStatusFree(_ status: OpaquePointer) { snd_pcm_status_free(status) }
func alsaStatus(_ pcm: OpaquePointer, _ status: OpaquePointer) -> Int32 { snd_pcm_status(pcm, status) }
func alsaStatusState(_ status: OpaquePointer) -> snd_pcm_state_t { snd_pcm_status_get_state(status) }
func alsaStatusDelay(_ status: OpaquePointer) -> Int { snd_pcm_status_get_delay(status) }
func alsaStatusTimestamp(_ status: OpaquePointer) -> timespec {
    var stamp = timespec()
    snd_pcm_status_get_htstamp(status, &stamp)
    return stamp
}

/// True when the machine has at least one sound card (ALSA numbers them from 0).
public func alsaAnySoundCard() -> Bool {
    CAlsaShims_silenceLibraryErrors()
    var card: Int32 = -1
    return snd_card_next(&card) == 0 && card >= 0
}

func alsaDeviceHints() -> [(name: String, description: String, io: String?)] {
    CAlsaShims_silenceLibraryErrors()
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    guard snd_device_name_hint(-1, "pcm", &hints) == 0, let list = hints else { return [] }
    defer { snd_device_name_free_hint(list) }
    var result: [(String, String, String?)] = []
    var index = 0
    while let hint = list[index] {
        func take(_ id: String) -> String? {
            guard let text = snd_device_name_get_hint(hint, id) else { return nil }
            defer { free(text) }
            return String(cString: text)
        }
        if let name = take("NAME") { result.append((name, take("DESC") ?? "", take("IOID"))) }
        index += 1
    }
    return result
}
