import Foundation
import GongAudio
import GongCore

/// The one table of what an output may be, shared by live sessions and renders to a file.
public enum SessionLimits {
    /// Any rate in between works; 44100, 48000 and 96000 are what devices and files commonly use.
    public static let rates = Timeline.sampleRates
    public static let ratesAllowed = "44100, 48000 or 96000 (\(Timeline.sampleRatesAllowed))"
    public static let channels = 1...2
    public static let channelsAllowed = "1 or 2"
    public static let latencyMs: ClosedRange<Double> = 1...2000
    public static let latencyAllowed = "1 to 2000 ms"
    /// Each route's default latency, in words (`BufferDefaults`).
    public static let latencyDefaults = BufferDefaults.described
    public static let periodFrames = 16...65536
    /// Each route's default period at the default rate, in words (`BufferDefaults`).
    public static let periodDefaults = BufferDefaults.describedPeriods(at: Timeline.defaultSampleRate)
    public static let periodAllowed = "16 to 65536 frames"
    /// Frames rendered at a time into a file; the result is the same for any size.
    public static let blockFrames = 1...65536
    public static let blockAllowed = "1 to 65536 frames"
    public static let gainDB = PatternLimits.gainRangeDB
    public static let gainAllowed = PatternLimits.gainAllowed
    public static let formatsAllowed = "float32, int32 or int16"
}

/// A setting outside `SessionLimits`, as data: the command line names its flag, a library its
/// parameter.
public struct SettingError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Setting: String, Sendable, CaseIterable {
        case rate, channels, latency, period, format, gain, block
        /// Where a session begins (`SessionOptions.startSeconds`).
        case start
    }

    public var setting: Setting
    /// The value as given.
    public var value: String
    /// What would have been accepted.
    public var allowed: String

    public init(_ setting: Setting, value: String, allowed: String) {
        self.setting = setting
        self.value = value
        self.allowed = allowed
    }

    public var description: String { "\(setting.rawValue) \(value): out of range; use \(allowed)" }
}

/// How a live session plays: the device and what to ask of it. Anything nil is negotiated.
public struct SessionOptions: Sendable, Equatable {
    /// `auto` (a running PulseAudio or PipeWire server, else ALSA's `default`), `pulse`,
    /// `pulse:SINK`, or any ALSA PCM name (`default`, `hw:0,0`, `null`, …).
    public var device: String
    public var rate: Int
    public var channels: Int
    public var format: SampleFormat?
    public var latencyMs: Double?
    public var periodFrames: Int?
    /// Master gain in dB; the output never clips.
    public var gainDB: Double
    /// An interactive session waits for its person after an interruption (a suspend, a device
    /// that came back); a headless one carries on by itself.
    public var interactive: Bool
    /// Where on the session's clock to begin, in seconds: 0 for the start, a resumed session's
    /// position otherwise. What came before is not played.
    public var startSeconds: Double

    public init(
        device: String = OutputRoute.automatic, rate: Int = Timeline.defaultSampleRate, channels: Int = 2,
        format: SampleFormat? = nil,
        latencyMs: Double? = nil, periodFrames: Int? = nil, gainDB: Double = 0, interactive: Bool = false,
        startSeconds: Double = 0
    ) {
        self.startSeconds = startSeconds
        self.device = device
        self.rate = rate
        self.channels = channels
        self.format = format
        self.latencyMs = latencyMs
        self.periodFrames = periodFrames
        self.gainDB = gainDB
        self.interactive = interactive
    }

    /// Every setting checked against `SessionLimits`; the first one outside them.
    public func validate() throws(SettingError) {
        guard SessionLimits.rates.contains(rate) else {
            throw SettingError(.rate, value: "\(rate)", allowed: SessionLimits.ratesAllowed)
        }
        try SessionLimits.check(channels: channels)
        if let latencyMs, !(latencyMs.isFinite && SessionLimits.latencyMs.contains(latencyMs)) {
            throw SettingError(.latency, value: String(format: "%g", latencyMs), allowed: SessionLimits.latencyAllowed)
        }
        if let periodFrames, !SessionLimits.periodFrames.contains(periodFrames) {
            throw SettingError(.period, value: "\(periodFrames)", allowed: SessionLimits.periodAllowed)
        }
        try SessionLimits.check(gainDB: gainDB)
        guard startSeconds.isFinite, startSeconds >= 0, startSeconds <= PatternLimits.maxSessionSeconds.doubleValue
        else {
            throw SettingError(
                .start, value: String(format: "%g", startSeconds), allowed: "0 to \(PatternLimits.maxSessionText)")
        }
    }

    /// What to ask of the device, its name with `auto` decided.
    public var request: PCMRequest {
        PCMRequest(
            device: OutputRoute.deciding(device), rate: rate, channels: channels, format: format,
            periodFrames: periodFrames, latencyMs: latencyMs)
    }
}

/// The sample formats a device can be asked for, without importing the audio layer.
public typealias SampleFormat = GongAudio.SampleFormat

extension SessionLimits {
    public static func check(channels: Int) throws(SettingError) {
        guard Self.channels.contains(channels) else {
            throw SettingError(.channels, value: "\(channels)", allowed: channelsAllowed)
        }
    }

    public static func check(gainDB: Double) throws(SettingError) {
        guard gainDB.isFinite, Self.gainDB.contains(gainDB) else {
            throw SettingError(.gain, value: String(format: "%g", gainDB), allowed: gainAllowed)
        }
    }
}
