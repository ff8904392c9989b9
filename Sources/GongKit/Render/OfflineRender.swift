import Foundation
import GongAudio
import GongCore

/// What to render and where.
public struct RenderRequest: Sendable {
    public var pattern: Pattern
    public var outputPath: String
    public var sampleRate = Timeline.defaultSampleRate
    public var channels = 2
    public var format: AudioFileFormat = .wav
    public var encoding: SampleEncoding = .pcm16
    public var masterGainDB = 0.0
    /// Frames per render call; any size gives the same samples (see `SessionRenderer`).
    public var blockFrames = 16384

    public init(pattern: Pattern, outputPath: String) {
        self.pattern = pattern
        self.outputPath = outputPath
    }
}

extension RenderRequest {
    /// Every setting checked against `SessionLimits`, the same table a live session's are.
    public func validate() throws(SettingError) {
        guard SessionLimits.rates.contains(sampleRate) else {
            throw SettingError(.rate, value: "\(sampleRate)", allowed: SessionLimits.ratesAllowed)
        }
        try SessionLimits.check(channels: channels)
        guard SessionLimits.blockFrames.contains(blockFrames) else {
            throw SettingError(.block, value: "\(blockFrames)", allowed: SessionLimits.blockAllowed)
        }
        try SessionLimits.check(gainDB: masterGainDB)
    }
}

/// The file formats and sample encodings a render writes, without importing the audio layer.
public typealias AudioFileFormat = GongAudio.AudioFileFormat
public typealias SampleEncoding = GongAudio.SampleEncoding

/// What a render produced.
public struct RenderReport: Sendable {
    public var summary: SessionSummary
    /// Frames written: the session and every tail.
    public var framesWritten: Int64
    public var cues: [(sessionFrame: Int64, scheduledFrame: Int64, sound: String)]
    public var elapsedSeconds: Double
}

/// Renders a session to a file through the same renderer and state machine a live session uses.
public enum OfflineRender {
    public static func run(_ request: RenderRequest, bank: SoundBank) throws(GongError) -> RenderReport {
        do { try request.validate() } catch { throw .setting(error) }
        guard request.pattern.length != .open else {
            // Rendered, it would be the longest session a file may hold, which nobody asked for.
            throw .pattern(
                PatternError(
                    key: "length", value: "open",
                    problem: "an open sit ends when it is stopped, and a render cannot be",
                    remedy: .cyclesOrDuration))
        }
        let started = ContinuousClock.now
        let plan = try SessionPlan(
            pattern: request.pattern, sampleRate: request.sampleRate, channels: request.channels, bank: bank)
        // Write beside the target and rename at the end: a failed render never leaves half a
        // file, and never destroys a file that was already there.
        let partialPath = partialFilePath(for: request.outputPath)
        var completed = false
        defer { if !completed { unlink(partialPath) } }
        let writer: AudioFileWriter
        do {
            writer = try AudioFileWriter(
                path: partialPath, format: request.format, encoding: request.encoding,
                sampleRate: request.sampleRate, channels: request.channels,
                expectedFrames: Int(plan.totalFrames))
        } catch {
            throw failure(error, writing: request)
        }
        var report = try play(plan, request, into: writer)
        do { try writer.close() } catch { throw failure(error, writing: request) }
        guard rename(partialPath, request.outputPath) == 0 else {
            throw .output(
                SoundFileError(.writeFailed, path: request.outputPath, message: String(cString: strerror(errno))))
        }
        completed = true
        report.elapsedSeconds = (ContinuousClock.now - started).seconds
        return report
    }

    /// Plays the session through the renderer and the state machine into `writer`, block by
    /// block. It follows the same lifecycle as a live session; inputs a render cannot produce
    /// (pauses, device losses) simply never arrive.
    private static func play(_ plan: SessionPlan, _ request: RenderRequest, into writer: AudioFileWriter)
        throws(GongError) -> RenderReport
    {
        var renderer = plan.makeRenderer(masterGainDB: request.masterGainDB)
        var machine = SessionMachine(timeline: plan.timeline)
        var events = RenderEventBuffer()
        var cues: [(Int64, Int64, String)] = []
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: request.blockFrames * request.channels)
        defer { block.deallocate() }
        var written: Int64 = 0
        func feed(_ input: SessionInput) throws(GongError) {
            do {
                try machine.handle(input)
            } catch {
                throw .internalError(error.description)
            }
        }
        try feed(.prepare)
        try feed(.start)
        while !renderer.isFinished {
            let produced = renderer.render(into: block, events: &events)
            do {
                if renderer.lastBlockWasSilent {
                    try writer.writeSilence(frames: produced)
                } else {
                    try writer.write(UnsafeBufferPointer(rebasing: block[0..<(produced * request.channels)]))
                }
            } catch {
                throw failure(error, writing: request)
            }
            written += Int64(produced)
            for index in 0..<events.count {
                let event = events[index]
                if let input = event.sessionInput() { try feed(input) }
                if case .cueStarted(let sound, let scheduled) = event.kind {
                    cues.append((event.sessionFrame, scheduled, plan.timeline.sounds[Int(sound)]))
                }
            }
            events.removeAll()
        }
        return RenderReport(summary: machine.summary, framesWritten: written, cues: cues, elapsedSeconds: 0)
    }

    /// The file the person asked for is the one that failed: the partial file it is written as
    /// is gong's own, and its name is no use to them.
    private static func failure(_ error: SoundFileError, writing request: RenderRequest) -> GongError {
        var error = error
        error.path = request.outputPath
        return .output(error)
    }
}

/// `dir/.name.partial` beside `path`, on the same file system so the final rename is atomic.
func partialFilePath(for path: String) -> String {
    let url = URL(fileURLWithPath: path)
    return url.deletingLastPathComponent().appendingPathComponent("." + url.lastPathComponent + ".partial").path
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
