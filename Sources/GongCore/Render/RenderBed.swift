#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A bed as the renderer takes it: its samples at the session's rate, already made into a
/// seamless loop (`seamlessLoop`), its linear gain and its fades in frames.
public struct RenderBed: Sendable {
    public var sound: RenderSound
    public var gain: Float
    public var fadeInFrames: Int
    public var fadeOutFrames: Int

    public init(sound: RenderSound, gain: Float, fadeInFrames: Int, fadeOutFrames: Int) {
        precondition(sound.frames > 0, "a bed has samples to loop")
        self.sound = sound
        self.gain = gain
        self.fadeInFrames = max(0, fadeInFrames)
        self.fadeOutFrames = max(0, fadeOutFrames)
    }

    /// `samples` (interleaved, `channels` channels) made to loop without a seam: the last
    /// `crossfadeFrames` are faded into the first with equal power (sin/cos, right for the
    /// uncorrelated material a bed is) and dropped from the end. The loop's last frame is then
    /// followed by the frame that followed it in the file, so wrapping around is a step the
    /// sound itself takes — whatever file a person brings. Done once, before playing.
    public static func seamlessLoop(_ samples: [Float], channels: Int, crossfadeFrames: Int) -> [Float] {
        let frames = samples.count / channels
        let fade = min(crossfadeFrames, frames / 2)
        guard fade > 0 else { return samples }
        var looped = Array(samples[0..<((frames - fade) * channels)])
        let tail = (frames - fade) * channels
        for frame in 0..<fade {
            let angle = Double.pi / 2 * Double(frame) / Double(fade)
            let rising = Float(sin(angle)), falling = Float(cos(angle))
            for channel in 0..<channels {
                let index = frame * channels + channel
                looped[index] = samples[index] * rising + samples[tail + index] * falling
            }
        }
        return looped
    }
}
