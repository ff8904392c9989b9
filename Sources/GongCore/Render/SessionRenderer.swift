/// Turns a timeline into audio, block by block, into buffers the caller owns.
///
/// This is the one render path: `gong render` drives it into a file, a live session drives it
/// from the real-time audio thread. Given the same timeline and commands, both produce the same
/// samples, whatever the block size (1 to any number of frames): every cue starts on its exact
/// frame inside a block, voices are mixed in the order they started, and the gain ramp and
/// limiter advance one frame at a time.
///
/// After `init`, `render` and `apply` allocate nothing, take no locks and touch no reference
/// counts: events and voices are owned here through unsafe pointers, and the sounds are read
/// through plain pointers into `SoundSamples` the renderer holds for its life. That is also why
/// the type is `~Copyable` — one owner, freed once.
public struct SessionRenderer: ~Copyable {
    public let channels: Int
    public let sampleRate: Int
    public let plannedEndFrame: Int64
    /// How many sounds may ring at once before the oldest is cut.
    public let voiceCapacity: Int

    private let events: UnsafeMutableBufferPointer<TimelineEvent>
    /// The sounds' samples, held so their memory lives as long as the renderer; it is read only
    /// through `soundStarts`, so rendering touches no reference count. Sound `i` starts at
    /// `soundStarts[i]` and lasts `soundFrames[i]` frames. Mono sounds stay mono here: a bank of
    /// gongs is tens of megabytes, and doubling it for stereo would cost memory and start-up time.
    private let soundSamples: [SoundSamples]
    private let soundStarts: UnsafeMutableBufferPointer<UnsafePointer<Float>>
    private let soundFrames: UnsafeMutableBufferPointer<Int>
    /// 1 for a mono sound (played on every output channel), else the output's channel count.
    private let soundChannels: UnsafeMutableBufferPointer<Int>
    let voices: UnsafeMutableBufferPointer<Voice>
    /// The bed, read like the sounds through a plain pointer into samples held here (nil: none).
    private let bedSamples: SoundSamples?
    private let bedStart: UnsafePointer<Float>?
    private let bedFrames: Int
    private let bedChannels: Int
    private let bedGain: Float
    private let bedFadeIn: Int
    private let bedFadeOut: Int
    private let endEventIndex: Int
    private let rampFrames: Int
    private let limiterRelease: Float
    /// Everything that changes as the session plays, but the voices' contents: one value, so a
    /// checkpoint copies it whole and nothing can be left out of one.
    var state: PlayState

    /// Position on the session's timeline (frames since its first, skips and losses included).
    public var sessionFrame: Int64 {
        @_noAllocation @_noLocks get { state.sessionFrame }
    }
    /// Frames rendered since the renderer started.
    public var outputFrame: Int64 {
        @_noAllocation @_noLocks get { state.outputFrame }
    }
    public var lifecycle: Lifecycle {
        @_noAllocation @_noLocks get { state.lifecycle }
    }
    /// True once the planned end has passed (the end cue and tails are ringing out).
    public var hasEnded: Bool { state.hasEnded }
    /// True when the last `render` produced only zeros (no voice rang in it), so a caller may
    /// skip work on it — an hour-long render is mostly silence between gongs.
    public var lastBlockWasSilent: Bool {
        @_noAllocation @_noLocks get { state.lastBlockWasSilent }
    }

    struct PlayState: BitwiseCopyable {
        var activeVoices = 0
        var nextEvent = 0
        var sessionFrame: Int64 = 0
        var outputFrame: Int64 = 0
        var lifecycle: Lifecycle = .playing
        var hasEnded = false
        var lastBlockWasSilent = false
        var masterGain: Float
        var gain: Float
        var targetGain: Float
        var gainStep: Float = 0
        /// Frames left in the current gain ramp; the ramp lands exactly on `targetGain` at 0.
        var rampRemaining = 0
        var limiterGain: Float = 1
        /// Frames the bed has sounded (its loop position is this modulo its length), and where
        /// its fade-out began (`Int64.max` until the session ends).
        var bedPlayed: Int64 = 0
        var bedFadeOutFrom = Int64.max

        init(masterGain: Float) {
            self.masterGain = masterGain
            gain = masterGain
            targetGain = masterGain
        }
    }

    /// Peak level the output never exceeds: −0.5 dBFS leaves room for format conversion.
    public static var ceiling: Float { 0.944 }
    /// The longest a pause, resume or gain change takes to fade: short enough to feel
    /// immediate, long enough not to click.
    public static let rampSeconds = 0.015

    public enum Lifecycle: Equatable, Sendable, BitwiseCopyable {
        case playing
        case pausing
        case paused
        case halting
        case finished
    }

    /// - Parameters:
    ///   - sounds: one per entry of `timeline.sounds`, at the timeline's sample rate: mono (played
    ///     on every output channel) or with `channels` channels.
    public init(
        timeline: Timeline, sounds soundData: [RenderSound], channels: Int, masterGainDB: Double = 0,
        voiceCapacity: Int = 64, bed: RenderBed? = nil
    ) {
        precondition(soundData.count == timeline.sounds.count, "one sound per timeline sound")
        precondition((1...8).contains(channels) && voiceCapacity > 0)
        self.channels = channels
        self.sampleRate = timeline.sampleRate
        self.plannedEndFrame = timeline.plannedEndFrame
        self.voiceCapacity = voiceCapacity

        events = .allocate(capacity: timeline.events.count)
        _ = events.initialize(from: timeline.events)
        endEventIndex = timeline.events.firstIndex { $0.frame == timeline.plannedEndFrame } ?? timeline.events.count - 1

        soundSamples = soundData.map(\.samples)
        soundStarts = .allocate(capacity: max(1, soundData.count))
        soundFrames = .allocate(capacity: max(1, soundData.count))
        soundChannels = .allocate(capacity: max(1, soundData.count))
        for (index, sound) in soundData.enumerated() {
            precondition(
                sound.channels == 1 || sound.channels == channels, "a sound is mono or has the output's channel count")
            precondition(sound.samples.count % sound.channels == 0, "sound buffers hold whole frames")
            soundStarts.initializeElement(at: index, to: sound.samples.buffer.baseAddress.unsafelyUnwrapped)
            soundFrames.initializeElement(at: index, to: sound.frames)
            soundChannels.initializeElement(at: index, to: sound.channels)
        }
        voices = .allocate(capacity: voiceCapacity)
        voices.initialize(repeating: Voice(sound: 0, position: 0, gain: 0))
        if let bed {
            precondition(
                bed.sound.channels == 1 || bed.sound.channels == channels, "a bed is mono or has the output's channels")
        }
        bedSamples = bed?.sound.samples
        bedStart = bed?.sound.samples.buffer.baseAddress.map { UnsafePointer($0) }
        bedFrames = bed?.sound.frames ?? 0
        bedChannels = bed?.sound.channels ?? 1
        bedGain = bed?.gain ?? 0
        bedFadeIn = bed?.fadeInFrames ?? 0
        bedFadeOut = bed?.fadeOutFrames ?? 0

        state = PlayState(masterGain: decibelsToGain(masterGainDB))
        rampFrames = max(1, Int(Double(timeline.sampleRate) * SessionRenderer.rampSeconds))
        // A 100 ms release: gain reduction recovers smoothly once a loud transient has passed.
        limiterRelease = Float(1 / (0.1 * Double(timeline.sampleRate)))
    }

    /// Sounds given as interleaved buffers at the output's channel count.
    public init(timeline: Timeline, sounds: [[Float]], channels: Int, masterGainDB: Double = 0, voiceCapacity: Int = 64)
    {
        self.init(
            timeline: timeline, sounds: sounds.map { RenderSound(samples: $0, channels: channels) }, channels: channels,
            masterGainDB: masterGainDB, voiceCapacity: voiceCapacity)
    }

    deinit {
        soundStarts.deallocate()
        soundFrames.deallocate()
        soundChannels.deallocate()
        events.deallocate()
        voices.deallocate()
    }

    public var isFinished: Bool {
        @_noAllocation @_noLocks get { state.lifecycle == .finished }
    }
    public var activeVoiceCount: Int { state.activeVoices }

    // MARK: Commands

    /// Applies a control command at the current position (between blocks).
    @_noAllocation @_noLocks
    public mutating func apply(_ command: RenderCommand, events sink: inout RenderEventBuffer) {
        switch command {
        case .pause:
            guard state.lifecycle == .playing else { return }
            state.lifecycle = .pausing
            rampGain(to: 0)
        case .resume:
            guard state.lifecycle == .paused || state.lifecycle == .pausing else { return }
            // A resume that comes while the pause still fades out cuts the fade short: the pause
            // is over where it got to, and is told, so every pause is told once and in order.
            if state.lifecycle == .pausing {
                sink.append(
                    RenderEvent(kind: .paused, sessionFrame: state.sessionFrame, outputFrame: state.outputFrame))
            }
            state.lifecycle = .playing
            rampGain(to: state.masterGain)
            sink.append(RenderEvent(kind: .resumed, sessionFrame: state.sessionFrame, outputFrame: state.outputFrame))
        case .skipPhase:
            guard !state.hasEnded, state.lifecycle != .finished, state.lifecycle != .halting else { return }
            var index = state.nextEvent
            // Past the phase that is playing now, to the next boundary (or the end).
            while index < events.count, events[index].frame <= state.sessionFrame { index += 1 }
            while index < endEventIndex {
                if case .phaseBegan = events[index].kind { break }
                index += 1
            }
            jump(toEvent: index, events: &sink)
        case .stop:
            guard !state.hasEnded, state.lifecycle != .finished, state.lifecycle != .halting else { return }
            jump(toEvent: endEventIndex, events: &sink)
            if state.lifecycle != .playing {
                state.lifecycle = .playing
                rampGain(to: state.masterGain)
            }
        case .halt:
            guard state.lifecycle != .finished else { return }
            state.lifecycle = .halting
            rampGain(to: 0)
        case .setGain(let linear):
            state.masterGain = max(0, linear)
            if state.lifecycle == .playing { rampGain(to: state.masterGain) }
        case .advance(let frames):
            guard frames > 0, state.lifecycle == .playing else { return }
            state.sessionFrame += frames
        }
    }

    private mutating func jump(toEvent index: Int, events sink: inout RenderEventBuffer) {
        guard index < events.count else { return }
        let target = events[index].frame
        if target > state.sessionFrame {
            sink.append(
                RenderEvent(
                    kind: .skipped(frames: target - state.sessionFrame), sessionFrame: state.sessionFrame,
                    outputFrame: state.outputFrame))
            state.sessionFrame = target
        }
        state.nextEvent = index
    }

    private mutating func rampGain(to target: Float) {
        state.targetGain = target
        state.gainStep = (target - state.gain) / Float(rampFrames)
        state.rampRemaining = target == state.gain ? 0 : rampFrames
    }

    // MARK: Rendering

    /// Fills `output` (interleaved, a whole number of frames) with the next block.
    ///
    /// - Returns: how many frames of the block belong to the session. It is the whole block until
    ///   the last tail rings out; then the frames up to that point (the rest is silence).
    @_noAllocation @_noLocks
    public mutating func render(into output: UnsafeMutableBufferPointer<Float>, events sink: inout RenderEventBuffer)
        -> Int
    {
        let frameCount = output.count / channels
        guard let base = output.baseAddress, frameCount > 0 else { return 0 }
        base.update(repeating: 0, count: frameCount * channels)
        let blockStart = state.outputFrame
        var done = 0
        var silentBlock = true
        while done < frameCount {
            if state.lifecycle == .finished || state.lifecycle == .paused { break }
            let clockRunning = state.lifecycle == .playing
            if clockRunning { fireDueEvents(outputFrame: blockStart + Int64(done), events: &sink) }
            if state.hasEnded && state.activeVoices == 0 && !bedSounding && state.lifecycle != .pausing {
                finish(outputFrame: blockStart + Int64(done), events: &sink)
                break
            }

            var chunk = frameCount - done
            if clockRunning, state.nextEvent < events.count {
                chunk = min(chunk, Int(events[state.nextEvent].frame - state.sessionFrame))
            }
            if state.hasEnded {
                // Stop exactly on the frame the last tail ends, so the session's length is exact.
                for index in 0..<state.activeVoices {
                    chunk = min(chunk, soundFrames[Int(voices[index].sound)] - voices[index].position)
                }
                if bedSounding { chunk = min(chunk, Int(state.bedFadeOutFrom + Int64(bedFadeOut) - state.bedPlayed)) }
            }
            if state.rampRemaining > 0 {
                chunk = min(chunk, state.rampRemaining)
            }

            let silent = state.activeVoices == 0 && !bedSounding
            if !silent { silentBlock = false }
            mixVoices(into: base + done * channels, frames: chunk)
            if bedSounding { mixBed(into: base + done * channels, frames: chunk) }
            shapeGain(base + done * channels, frames: chunk, silent: silent)
            if clockRunning { state.sessionFrame += Int64(chunk) }
            done += chunk

            if state.rampRemaining == 0 {
                if state.lifecycle == .pausing {
                    state.lifecycle = .paused
                    sink.append(
                        RenderEvent(
                            kind: .paused, sessionFrame: state.sessionFrame, outputFrame: blockStart + Int64(done)))
                } else if state.lifecycle == .halting {
                    finish(outputFrame: blockStart + Int64(done), events: &sink)
                }
            }
        }
        state.outputFrame = blockStart + Int64(frameCount)
        state.lastBlockWasSilent = silentBlock
        return state.lifecycle == .finished ? done : frameCount
    }

    private mutating func finish(outputFrame at: Int64, events sink: inout RenderEventBuffer) {
        state.lifecycle = .finished
        state.activeVoices = 0
        sink.append(RenderEvent(kind: .finished, sessionFrame: state.sessionFrame, outputFrame: at))
    }

    /// Fires every event due at or before the current session frame — on time, or late after the
    /// clock was advanced past them.
    private mutating func fireDueEvents(outputFrame at: Int64, events sink: inout RenderEventBuffer) {
        while state.nextEvent < events.count, events[state.nextEvent].frame <= state.sessionFrame {
            let event = events[state.nextEvent]
            state.nextEvent += 1
            switch event.kind {
            case .phaseBegan(let phase, let cycle):
                sink.append(
                    RenderEvent(
                        kind: .phaseBegan(phase: phase, cycle: cycle), sessionFrame: state.sessionFrame, outputFrame: at
                    ))
            case .cue(let trigger):
                startVoice(trigger, events: &sink, outputFrame: at)
                sink.append(
                    RenderEvent(
                        kind: .cueStarted(sound: trigger.sound, scheduledFrame: event.frame),
                        sessionFrame: state.sessionFrame, outputFrame: at))
            case .sessionEnd:
                state.hasEnded = true
                // The bed fades out under the end cue and its ring-out.
                state.bedFadeOutFrom = min(state.bedFadeOutFrom, state.bedPlayed)
                sink.append(RenderEvent(kind: .sessionEnded, sessionFrame: state.sessionFrame, outputFrame: at))
            }
        }
    }

    /// True while the bed has something to play: always until the session ends, then until
    /// its fade-out is done. Until the end `bedFadeOutFrom` is `Int64.max`: adding the fade to
    /// it would overflow (wrapped, it made every bed with a fade-out silent from its first
    /// frame), so the fade comes off the frames played instead, which never overflows.
    private var bedSounding: Bool {
        bedStart != nil && state.bedPlayed - Int64(bedFadeOut) < state.bedFadeOutFrom
    }

    /// Adds `frames` of the bed, looping, at its gain and fades. The fades are computed per
    /// frame from the bed's own frame count, so a block size never changes a sample.
    private mutating func mixBed(into destination: UnsafeMutablePointer<Float>, frames: Int) {
        guard let start = bedStart else { return }
        let channelCount = channels
        var played = state.bedPlayed
        var position = Int(played % Int64(bedFrames))
        for frame in 0..<frames {
            var gain = bedGain
            if played < Int64(bedFadeIn) { gain *= Float(played) / Float(bedFadeIn) }
            if played >= state.bedFadeOutFrom {
                gain *= Float(state.bedFadeOutFrom + Int64(bedFadeOut) - played) / Float(max(1, bedFadeOut))
            }
            let out = destination + frame * channelCount
            if bedChannels == channelCount {
                let source = start + position * channelCount
                for channel in 0..<channelCount { out[channel] += source[channel] * gain }
            } else {
                let value = start[position] * gain
                for channel in 0..<channelCount { out[channel] += value }
            }
            played += 1
            position += 1
            if position == bedFrames { position = 0 }
        }
        state.bedPlayed = played
    }

    private mutating func startVoice(_ trigger: CueTrigger, events sink: inout RenderEventBuffer, outputFrame at: Int64)
    {
        if state.activeVoices == voiceCapacity {
            sink.append(
                RenderEvent(
                    kind: .voiceStolen(sound: voices[0].sound), sessionFrame: state.sessionFrame, outputFrame: at))
            removeVoice(at: 0)
        }
        guard soundFrames[Int(trigger.sound)] > 0 else { return }
        voices[state.activeVoices] = Voice(sound: trigger.sound, position: 0, gain: trigger.gain)
        state.activeVoices += 1
    }

    /// Keeps start order, so the mix sums voices in the same order whatever the block size.
    private mutating func removeVoice(at index: Int) {
        var i = index
        while i + 1 < state.activeVoices {
            voices[i] = voices[i + 1]
            i += 1
        }
        state.activeVoices -= 1
    }

    private mutating func mixVoices(into destination: UnsafeMutablePointer<Float>, frames: Int) {
        // Locals, not `self.` in the loop: plain pointers the optimiser keeps in registers.
        let voiceList = voices.baseAddress.unsafelyUnwrapped
        let starts = soundStarts.baseAddress.unsafelyUnwrapped
        let lengths = soundFrames.baseAddress.unsafelyUnwrapped
        let soundChannelCounts = soundChannels.baseAddress.unsafelyUnwrapped
        let channelCount = channels
        var index = 0
        while index < state.activeVoices {
            let voice = voiceList[index]
            let sound = Int(voice.sound)
            let count = min(frames, lengths[sound] - voice.position)
            let voiceGain = voice.gain
            if soundChannelCounts[sound] == channelCount {
                let source = starts[sound] + voice.position * channelCount
                for sample in 0..<(count * channelCount) {
                    destination[sample] += source[sample] * voiceGain
                }
            } else if channelCount == 2 {
                // A mono sound on both channels: the same sum as mixing a duplicated buffer.
                let source = starts[sound] + voice.position
                for frame in 0..<count {
                    let value = source[frame] * voiceGain
                    destination[2 * frame] += value
                    destination[2 * frame + 1] += value
                }
            } else {
                let source = starts[sound] + voice.position
                for frame in 0..<count {
                    let value = source[frame] * voiceGain
                    for channel in 0..<channelCount {
                        destination[frame * channelCount + channel] += value
                    }
                }
            }
            if voice.position + count == lengths[sound] {
                removeVoice(at: index)
            } else {
                voiceList[index].position = voice.position + count
                index += 1
            }
        }
    }

    /// The largest magnitude among `count` samples. This scan runs over every sample a voice rings
    /// in, so it is written for the vector unit: a float's magnitude is its bit pattern without
    /// the sign, and for every float that is not NaN those patterns order as the magnitudes do,
    /// so an integer maximum (which the compiler vectorizes, where a float one it may not) finds
    /// exactly the largest |x|. A NaN sample reads as larger than any number and so takes the
    /// caller's frame-by-frame path, as before.
    @inline(__always)
    private static func loudest(_ samples: UnsafePointer<Float>, count: Int) -> Float {
        var loudest: UInt32 = 0
        for index in 0..<count {
            loudest = Swift.max(loudest, samples[index].bitPattern & 0x7FFF_FFFF)
        }
        return Float(bitPattern: loudest)
    }

    /// Applies the gain ramp and the limiter, one frame at a time.
    ///
    /// The limiter reacts within the frame (gain drops to exactly what keeps the peak at the
    /// ceiling, so nothing ever clips) and recovers over ~100 ms. A frame of pure silence resets
    /// it: there is nothing left to protect.
    private mutating func shapeGain(_ samples: UnsafeMutablePointer<Float>, frames: Int, silent: Bool) {
        if silent && state.rampRemaining == 0 {
            // No voice rang: the chunk is zeros. Only the limiter's state must match what the
            // per-frame path would have done with silent frames.
            state.limiterGain = 1
            return
        }
        if state.rampRemaining == 0 && state.limiterGain == 1 {
            // The common case: steady gain and no peak near the ceiling. Then the per-frame path
            // below would multiply by `gain` and leave the limiter at 1, so doing just that is
            // bit-identical (|x·g| = |x|·g exactly for g ≥ 0, and rounding keeps order).
            let count = frames * channels
            if SessionRenderer.loudest(samples, count: count) * state.gain <= SessionRenderer.ceiling {
                if state.gain != 1 {
                    for index in 0..<count { samples[index] *= state.gain }
                }
                return
            }
        }
        var frame = 0
        while frame < frames {
            if state.rampRemaining > 0 {
                state.rampRemaining -= 1
                state.gain = state.rampRemaining == 0 ? state.targetGain : state.gain + state.gainStep
            }
            let frameSamples = samples + frame * channels
            var peak: Float = 0
            for channel in 0..<channels {
                frameSamples[channel] *= state.gain
                peak = max(peak, abs(frameSamples[channel]))
            }
            if peak == 0 {
                state.limiterGain = 1
            } else {
                if state.limiterGain < 1 {
                    // Recovered once a step no longer moves it: the step rounds away a little short
                    // of 1 (about −0.001 dB), and stopping there would keep every later frame of a
                    // ringing tail on this frame-by-frame path.
                    let recovered = state.limiterGain + (1 - state.limiterGain) * limiterRelease
                    state.limiterGain = recovered > state.limiterGain ? min(1, recovered) : 1
                }
                if peak * state.limiterGain > SessionRenderer.ceiling {
                    state.limiterGain = SessionRenderer.ceiling / peak
                }
            }
            if state.limiterGain != 1 {
                for channel in 0..<channels { frameSamples[channel] *= state.limiterGain }
            }
            frame += 1
        }
    }
}

// MARK: - What crosses the render boundary

/// What the renderer reports as it plays: plain data, so the audio thread can hand it to a
/// lock-free ring without allocating.
public struct RenderEvent: BitwiseCopyable, Equatable, Sendable {
    public enum Kind: BitwiseCopyable, Equatable, Sendable {
        case phaseBegan(phase: Int32, cycle: Int32)
        /// A cue's sound started. It is late by `sessionFrame - scheduledFrame` frames (0 unless
        /// audio was lost to an underrun).
        case cueStarted(sound: Int32, scheduledFrame: Int64)
        /// The last cycle is over; the end cue and any tails now ring out.
        case sessionEnded
        /// The last tail has rung out: the session is over and the rest of the output is silence.
        case finished
        /// The fade-out after a pause request is done; the session clock is stopped.
        case paused
        case resumed
        /// The session jumped ahead by `frames` (skip or stop).
        case skipped(frames: Int64)
        /// More sounds overlapped than the voice pool holds; the oldest was cut.
        case voiceStolen(sound: Int32)
    }

    public var kind: Kind
    /// Position on the session's timeline.
    public var sessionFrame: Int64
    /// Position in the output stream since the renderer started — the frame a listener hears it on.
    public var outputFrame: Int64

    public init(kind: Kind, sessionFrame: Int64, outputFrame: Int64) {
        self.kind = kind
        self.sessionFrame = sessionFrame
        self.outputFrame = outputFrame
    }

    /// What the session's state machine hears of this event, if anything: the one mapping a
    /// live session and a render to a file share. `skippedFrames`: the session clock's frames
    /// jumped over by skips so far, which a finished session did not play.
    public func sessionInput(skippedFrames: Int64 = 0) -> SessionInput? {
        switch kind {
        case .phaseBegan(let phase, let cycle): .phaseBegan(phase: Int(phase), cycle: Int(cycle))
        case .cueStarted(_, let scheduled): .cuePlayed(lateFrames: sessionFrame - scheduled)
        case .sessionEnded: .sessionEnded(playedFrames: sessionFrame - skippedFrames)
        case .finished: .finished(playedFrames: sessionFrame - skippedFrames)
        case .paused, .resumed, .skipped, .voiceStolen: nil
        }
    }
}

/// What the control side may ask of a playing session.
public enum RenderCommand: BitwiseCopyable, Equatable, Sendable {
    /// Fade out and stop the session clock; sounds freeze where they are.
    case pause
    /// Fade back in and carry on from where the pause began.
    case resume
    /// Jump to the next phase boundary (its cue plays); bells in between are skipped.
    case skipPhase
    /// Jump to the session's end: the end cue plays and every tail rings out.
    case stop
    /// Fade out quickly and finish now, cutting tails (a second Ctrl-C).
    case halt
    /// Change the master gain (linear, from `decibelsToGain`), smoothly.
    case setGain(Float)
    /// Audio was lost (an underrun): move the session clock on by this many frames so the
    /// schedule holds; cues that fell in the gap play at once, late.
    case advance(frames: Int64)
}

/// Where the renderer puts the events of one block: a fixed-capacity buffer allocated once,
/// drained by the caller after each block — into a lock-free ring on the audio thread, into an
/// array offline. Concrete rather than generic so the render path can be checked by the compiler
/// (`@_noAllocation`, `@_noLocks`) without specialisation.
public struct RenderEventBuffer: ~Copyable {
    private let storage: UnsafeMutablePointer<RenderEvent>
    public let capacity: Int
    public private(set) var count = 0

    public init(capacity: Int = 1024) {
        precondition(capacity > 0)
        self.capacity = capacity
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    /// An event past `capacity` is not kept. Far more fit than any block makes (phases are at
    /// least 0.25 s apart, and a block is at most 65 536 frames), for a caller that
    /// drains after each block as it must.
    @_noAllocation @_noLocks
    public mutating func append(_ event: RenderEvent) {
        guard count < capacity else { return }
        (storage + count).initialize(to: event)
        count += 1
    }

    public subscript(index: Int) -> RenderEvent {
        @_noAllocation @_noLocks get {
            precondition(index >= 0 && index < count)
            return storage[index]
        }
    }

    @_noAllocation @_noLocks
    public mutating func removeAll() { count = 0 }

    /// Moves the buffered events to the end of `array` (allocates: offline use only).
    public mutating func drain(into array: inout [RenderEvent]) {
        for index in 0..<count { array.append(storage[index]) }
        count = 0
    }
}

/// A sound as the renderer takes it: interleaved samples at the timeline's rate, mono or with
/// the output's channel count.
public struct RenderSound: Sendable {
    public var samples: SoundSamples
    public var channels: Int

    public init(samples: SoundSamples, channels: Int) {
        self.samples = samples
        self.channels = channels
    }

    /// A sound made from an array (a copy of it).
    public init(samples: [Float], channels: Int) {
        self.init(samples: SoundSamples(samples), channels: channels)
    }

    public var frames: Int { samples.count / channels }
}

/// A sound that is ringing: which one, how far in, how loud.
struct Voice: BitwiseCopyable {
    var sound: Int32
    var position: Int
    var gain: Float
}
