import ArgumentParser
import FoundationEssentials
import GongAudio
import GongCore
import GongKit

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a whole session to an audio file.",
        discussion: """
            Every cue lands on its exact frame, by the same renderer as live playback. The file \
            ends when the last tail has rung out.

            Examples:
              gong render two-phase -o sit.wav
              gong render two-phase --set meditation=20m --set reflection=5m -o sit.flac
              gong render resonant --duration 1h --rate 44100 --channels 1 -o breathe.wav
            """
    )

    @Argument(help: "A built-in pattern (gong patterns list), a name from ~/.config/gong/patterns, or a .toml file.")
    var pattern: String

    @Option(
        name: [.short, .customLong("output")],
        help: ArgumentHelp("The file to write (.wav or .flac).", valueName: "FILE"))
    var output: String

    @Option(help: ArgumentHelp("Sample rate in Hz: \(SessionLimits.ratesAllowed).", valueName: "HZ"))
    var rate: Int = Timeline.defaultSampleRate

    @Option(help: ArgumentHelp("File format: wav or flac (default: from the file name).", valueName: "FORMAT"))
    var format: String?

    @Option(help: ArgumentHelp("Channels: 1 or 2.", valueName: "N"))
    var channels: Int = 2

    @Option(help: ArgumentHelp("Sample encoding: 16, 24 or float (float: WAV only).", valueName: "BITS"))
    var bits: String = "16"

    @Option(
        help: ArgumentHelp(
            "Frames per render block (1-65536); the result is the same for any size.", visibility: .hidden))
    var block: Int = 16384

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @OptionGroup var patternOptions: PatternOptions
    @OptionGroup var volume: VolumeOption

    /// What GongKit does not check (its limits are checked with the request): the words of
    /// this command line. Checked here rather than in `validate()` so a mistake is one line,
    /// like every other error.
    private func checkOptions() throws {
        guard ["16", "24", "float"].contains(bits) else {
            throw UsageError("--bits \(bits): unsupported; use 16, 24 or float")
        }
        if let format, AudioFileFormat(rawValue: format.lowercased()) == nil {
            throw UsageError("--format \(format): unsupported; use wav or flac")
        }
    }

    func run() throws {
        do { try checkOptions() } catch { throw fail(error) }
        let fileFormat: AudioFileFormat
        if let format, let chosen = AudioFileFormat(rawValue: format.lowercased()) {
            fileFormat = chosen
        } else if let inferred = AudioFileFormat(path: output) {
            fileFormat = inferred
        } else {
            throw fail(
                UsageError(
                    "-o \(output): cannot tell the format from the name; end it in .wav or .flac, or pass --format"))
        }
        let encoding: SampleEncoding =
            switch bits {
            case "24": .pcm24;
            case "float": .float32;
            default: .pcm16
            }
        if fileFormat == .flac && encoding == .float32 {
            throw fail(UsageError("--bits float: FLAC stores integers only; use --bits 16 or 24, or a .wav file"))
        }
        let report: RenderReport
        let request: RenderRequest
        do {
            (request, report) = try render(format: fileFormat, encoding: encoding)
        } catch {
            throw fail(error)
        }
        if !quiet { print(describe(report, request: request)) }
    }

    private func render(format: AudioFileFormat, encoding: SampleEncoding) throws -> (RenderRequest, RenderReport) {
        guard !patternOptions.open else {
            throw UsageError("--open: a render needs an end; use --cycles or --duration")
        }
        var config = try loadConfig()
        var volume = volume
        volume.adopt(&config)
        try volume.check()
        var request = RenderRequest(
            pattern: try patternOptions.resolvePattern(pattern, config: config), outputPath: output)
        request.sampleRate = rate
        request.channels = channels
        request.format = format
        request.encoding = encoding
        request.masterGainDB = volume.volume
        request.blockFrames = block
        return (request, try OfflineRender.run(request, bank: patternOptions.soundBank(config)))
    }

    private func describe(_ report: RenderReport, request: RenderRequest) -> String {
        let summary = report.summary
        let seconds = Double(report.framesWritten) / Double(request.sampleRate)
        let layout = request.channels == 1 ? "mono" : "stereo"
        let encoding =
            switch request.encoding {
            case .pcm16: "16-bit";
            case .pcm24: "24-bit";
            case .float32: "float"
            }
        let late = report.cues.map { $0.sessionFrame - $0.scheduledFrame }.max() ?? 0
        let speed = report.elapsedSeconds > 0 ? seconds / report.elapsedSeconds : 0
        // The start delay is in the file but neither sit nor ring-out.
        let ringOut = seconds - summary.plannedSeconds - (request.pattern.startDelay?.doubleValue ?? 0)
        let seed = summary.seed.map { "\n" + NoticeFormat.seedLine($0) } ?? ""
        return """
            \(summary.patternName) → \(request.outputPath): \(DurationText.format(seconds: seconds)) at \(request.sampleRate) Hz, \(layout), \(encoding) \(request.format.rawValue.uppercased())
              \(report.cues.count) cues, \(late == 0 ? "every one on its scheduled frame" : "latest \(late) frames late"); \
            \(summary.cyclesCompleted) of \(summary.plannedCycles) cycles
              planned \(DurationText.format(seconds: summary.plannedSeconds)), then \(DurationText.format(seconds: ringOut)) of ring-out; \
            rendered in \(Figure.fixed(report.elapsedSeconds, 2)) s (\(Int(speed))× real time)\(seed)
            """
    }
}
