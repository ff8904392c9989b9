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

    public init(pattern: Pattern, sampleRate: Int, channels: Int, bank: SoundBank) throws(GongError) {
        guard (1...2).contains(channels) else {
            throw .usage("--channels \(channels): unsupported; use 1 or 2")
        }
        let timeline: Timeline
        do {
            timeline = try Timeline(pattern: pattern, sampleRate: sampleRate)
        } catch {
            throw .pattern(error)
        }
        var sounds: [RenderSound] = []
        var files: [String] = []
        for name in timeline.sounds {
            let path: String
            do {
                path = try bank.resolve(name, usedBy: pattern.cueKey(for: name))
            } catch {
                throw .sound(error)
            }
            do {
                let prepared = try prepareSound(path: path, outputRate: sampleRate, outputChannels: channels, cache: bank.cache)
                sounds.append(RenderSound(samples: prepared.samples, channels: prepared.channels))
            } catch {
                throw .soundFile(error)
            }
            files.append(path)
        }
        self.timeline = timeline
        self.channels = channels
        self.sounds = sounds
        self.soundFiles = files
    }

    public func makeRenderer(masterGainDB: Double = 0) -> SessionRenderer {
        SessionRenderer(timeline: timeline, sounds: sounds, channels: channels, masterGainDB: masterGainDB)
    }

    /// How long the session lasts including the longest ring-out after the end, in frames.
    public var totalFrames: Int64 {
        var last = timeline.plannedEndFrame
        for (frame, trigger) in timeline.cueOnsets {
            last = max(last, frame + Int64(sounds[Int(trigger.sound)].frames))
        }
        return last
    }
}
