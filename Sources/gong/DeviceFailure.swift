import GongAudio

/// An audio device's failure as one line a person can act on: what went wrong with which
/// device, the sound system's own words, what to do (the flag or command that helps), and the
/// call that failed.
///
/// `probe` is asked only here, only for ALSA's card names that failed to open on a machine
/// with no sound card: whether a sound server answers decides the hint (the default waits up to
/// 500 ms for PulseAudio's or PipeWire's PulseAudio server). Building the error probed nothing.
func describe(
    _ error: AudioDeviceError, soundCardPresent: () -> Bool = alsaAnySoundCard,
    soundServerAnswers: () -> Bool = { PulsePCM.serverAnswers(timeoutMs: 500) }
) -> String {
    let said = error.detail.isEmpty ? "" : " (\(error.detail))"
    let server = error.server.map { " at \($0)" } ?? ""
    var sentence: String
    switch (error.system, error.reason) {
    case (.pulseAudio, .noServer):
        sentence =
            "no PulseAudio server to play through\(server)\(said); start one, or choose an ALSA device with --device"
            + " ('gong devices' lists them)"
    case (.pipeWire, .noServer):
        sentence = "no PipeWire server to play through; start one, or choose another device with --device"
    case (.jack, .noServer):
        sentence =
            "no JACK server to play through (gong does not start one); start jackd, or choose another device"
            + " with --device"
    case (.snapcast, .noServer):
        sentence =
            "no snapserver answered\(server)\(said); start snapserver with this source (docs/rooms.md), or name"
            + " its control with ?control=HOST:PORT"
    case (.alsa, .noServer):
        sentence = "no sound server answered\(said); start one, or choose another device with --device"
    case (.alsa, .noSuchDevice):
        sentence = "no such device\(said); 'gong devices' lists the devices"
    case (.jack, .noSuchDevice):
        sentence = error.detail + "; 'gong devices' lists JACK's playback ports"
    case (_, .noSuchDevice):
        sentence = (error.detail.isEmpty ? "no such device" : error.detail) + "; 'gong devices' lists them"
    case (.snapcast, .busy):
        sentence = error.detail + "; wait for it to end, or give gong a stream of its own (docs/rooms.md)"
    case (_, .busy):
        sentence = "device busy: another program is using it; end it, or choose another device with --device"
    case (_, .permissionDenied):
        sentence = "permission denied (is your user in the 'audio' group?)"
    case (.pulseAudio, .timedOut):
        sentence =
            "the sound server\(server) \(error.detail.isEmpty ? "started no stream in time" : error.detail);"
            + " is its session manager running (PipeWire needs wireplumber)? 'pactl info' shows the server"
    case (_, .timedOut):
        sentence =
            "the sound server started no stream in time\(said); is its session manager running (PipeWire needs"
            + " wireplumber)?"
    case (_, .disconnected):
        sentence =
            "the device or its sound server went away\(said); check that it is still there ('gong devices'"
            + " lists the devices)"
    case (_, .stalled):
        sentence = "the device took no audio\(said); try a longer --latency, or another device with --device"
    case (_, .formatUnsupported):
        sentence = (error.detail.isEmpty ? error.reason.summary : error.detail) + "; choose another with --format"
    case (_, .channelsUnsupported):
        sentence = (error.detail.isEmpty ? error.reason.summary : error.detail) + "; choose another with --channels"
    case (_, .rateUnsupported):
        sentence = (error.detail.isEmpty ? error.reason.summary : error.detail) + "; choose another with --rate"
    default:
        sentence = error.detail.isEmpty ? error.reason.summary : error.detail
    }
    // A card's name on a machine without one: the hint is where it can play instead.
    if error.system == .alsa, error.operation == "snd_pcm_open", AlsaPCM.usesSoundCard(error.device),
        !soundCardPresent()
    {
        sentence = String(sentence.prefix { $0 != ";" })
        sentence +=
            soundServerAnswers()
            ? "; no sound card found, but a sound server is running: use --device pulse"
            : "; no sound card found and no PulseAudio or PipeWire server answered: use --device null, or render to a"
                + " file with 'gong render'"
    }
    return "audio device '\(error.device)': \(sentence)" + (error.operation.isEmpty ? "" : " (\(error.operation))")
}
