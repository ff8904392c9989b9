import CSoxr

// Every libsoxr call gong makes: the one converter all resampling goes through.

/// libsoxr's very-high-quality recipe (28-bit precision, linear phase) with the pass band widened
/// from soxr's default 91.3 % to 97 % of the lower Nyquist frequency: a bell's upper partials
/// stay flat at 44.1 kHz, images of tones above the new Nyquist frequency stay far below hearing,
/// and the whole bank converts in a fraction of a second, so a first session at a new rate starts
/// at once. How it compared with libsamplerate, which gong used before: bench/RESULTS.md,
/// "Resampling: libsoxr against libsamplerate"; `SoundFileTests` pins the response.
enum SoxrRecipe {
    static let quality = UInt(SOXR_VHQ)
    static let passbandEnd = 0.97
    /// Names the converter and its settings, so a cached conversion made by another is not reused.
    static var identity: String {
        let version = soxr_version().map { String(cString: $0) } ?? "libsoxr"
        return "\(version) quality \(quality) passband \(passbandEnd) linear-phase float32"
    }
}

/// Band-limited resampling of a whole interleaved float buffer in one call. soxr compensates its
/// filter's delay, so input frame 0 lands on output frame 0. Returns the frames produced, or
/// soxr's error text.
func soxrResample(
    input: UnsafePointer<Float>, inputFrames: Int, inputRate: Int,
    output: UnsafeMutablePointer<Float>, outputCapacity: Int, outputRate: Int,
    channels: Int
) -> Result<Int, ResamplerFailure> {
    var quality = soxr_quality_spec(SoxrRecipe.quality, 0)
    quality.passband_end = SoxrRecipe.passbandEnd
    var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
    var runtime = soxr_runtime_spec(1)
    var consumed = 0, produced = 0
    let error = soxr_oneshot(
        Double(inputRate), Double(outputRate), UInt32(channels),
        input, inputFrames, &consumed, output, outputCapacity, &produced,
        &io, &quality, &runtime)
    if let error { return .failure(ResamplerFailure(message: String(cString: error))) }
    return .success(produced)
}

struct ResamplerFailure: Error {
    let message: String
}
