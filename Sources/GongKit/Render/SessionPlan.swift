import Dispatch
import GongAudio
import GongCore

/// A pattern made ready to play at one rate and channel count: its timeline, and every sound it
/// uses loaded, converted and resampled. Live sessions and offline renders both start here, so
/// both play the very same samples.
public struct SessionPlan: Sendable {
    public let timeline: Timeline
    public let channels: Int
    /// One sound per `timeline.sounds` entry: mono, or interleaved at `channels`.
    public let sounds: [RenderSound]
    /// The file each sound came from, parallel to `sounds`.
    public let soundFiles: [String]
    /// The pattern's bed, loaded and made a seamless loop; nil without one.
    public let bed: RenderBed?

    /// - Parameter startSeconds: where on the session's clock to begin; the timeline is what is
    ///   left from there (`Timeline.remainder(from:)`).
    public init(pattern: Pattern, sampleRate: Int, channels: Int, bank: SoundBank, startSeconds: Double = 0)
        throws(GongError)
    {
        do { try SessionLimits.check(channels: channels) } catch { throw .setting(error) }
        var timeline: Timeline
        do {
            timeline = try Timeline(pattern: pattern, sampleRate: sampleRate)
        } catch {
            throw .pattern(error)
        }
        if startSeconds > 0 {
            guard let rest = timeline.remainder(from: Int64((startSeconds * Double(sampleRate)).rounded())) else {
                throw .pattern(
                    PatternError(
                        key: "position", value: DurationText.format(seconds: startSeconds),
                        problem:
                            "is at or past the end of \(pattern.name) (\(DurationText.format(seconds: timeline.plannedSeconds)))",
                        allowed: "a position before its end"))
            }
            timeline = rest
        }
        var files: [String] = []
        do {
            for name in timeline.sounds { files.append(try bank.resolve(name, usedBy: pattern.cueKey(for: name))) }
            // The bed's file last, prepared with the rest.
            if let bed = pattern.bed { files.append(try bank.resolve(bed.sound, usedBy: "bed")) }
        } catch {
            throw .sound(error)
        }
        var sounds: [RenderSound] = []
        for prepared in Self.prepare(files, sampleRate: sampleRate, channels: channels, cache: bank.cache) {
            switch prepared {
            case .success(let sound): sounds.append(RenderSound(samples: sound.samples, channels: sound.channels))
            case .failure(let error): throw .soundFile(error)
            }
        }
        if let bed = pattern.bed, let loaded = sounds.popLast() {
            files.removeLast()
            // A second's crossfade hides any seam in a file of the person's own.
            let looped = RenderBed.seamlessLoop(
                Array(loaded.samples.buffer), channels: loaded.channels, crossfadeFrames: sampleRate)
            self.bed = RenderBed(
                sound: RenderSound(samples: looped, channels: loaded.channels), gain: decibelsToGain(bed.gainDB),
                fadeInFrames: Int(bed.fadeIn.frame(atRate: sampleRate)),
                fadeOutFrames: Int(bed.fadeOut.frame(atRate: sampleRate)))
        } else {
            self.bed = nil
        }
        self.timeline = timeline
        self.channels = channels
        self.sounds = sounds
        self.soundFiles = files
    }

    /// Loads and converts every file, on as many cores as there are (decoding and converting are
    /// most of a session's start-up), each result in its file's place so the first failure
    /// reported is the first in the pattern's order.
    static func prepare(
        _ files: [String], sampleRate: Int, channels: Int,
        cache: PreparedSoundCache?
    ) -> [Result<PreparedSound, SoundFileError>] {
        let results = Locked([Result<PreparedSound, SoundFileError>?](repeating: nil, count: files.count))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let result = Result { () throws(SoundFileError) in
                try prepareSound(path: files[index], outputRate: sampleRate, outputChannels: channels, cache: cache)
            }
            results.withLock { $0[index] = result }
        }
        return results.withLock { $0.compactMap { $0 } }
    }

    public func makeRenderer(masterGainDB: Double = 0) -> SessionRenderer {
        SessionRenderer(timeline: timeline, sounds: sounds, channels: channels, masterGainDB: masterGainDB, bed: bed)
    }

    /// How long the session lasts including the longest ring-out after the end, in frames.
    public var totalFrames: Int64 {
        var last = timeline.plannedEndFrame + Int64(bed?.fadeOutFrames ?? 0)
        for (frame, trigger) in timeline.cueOnsets {
            last = max(last, frame + Int64(sounds[Int(trigger.sound)].frames))
        }
        return last
    }
}
