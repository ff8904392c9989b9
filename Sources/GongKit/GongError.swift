import GongAudio
import GongCore

/// Everything that can stop gong from doing what was asked, grouped by whose problem it is, so
/// the command line can give one clear line and the right exit status.
public enum GongError: Error, CustomStringConvertible {
    /// The pattern, a pattern file or an override is wrong.
    case pattern(PatternError)
    /// A cue names a sound that is not in the bank or a file that does not exist.
    case sound(SoundBankError)
    /// A sound file exists but cannot be used.
    case soundFile(SoundFileError)
    /// The output file cannot be created or written: which file (the one asked for, never a
    /// file of gong's own beside it) and why, as data.
    case output(SoundFileError)
    /// The audio device cannot be opened or used.
    case device(AudioDeviceError)
    /// A setting is outside `SessionLimits` (a rate of 7 Hz).
    case setting(SettingError)
    /// gong contradicted itself (a bug): reported, never hidden.
    case internalError(String)

    public var description: String {
        switch self {
        case .pattern(let error): error.description
        case .sound(let error): error.description
        case .soundFile(let error): error.description
        case .output(let error): error.description
        case .setting(let error): error.description
        case .device(let error): error.description
        case .internalError(let message): "internal error: \(message) (please report this)"
        }
    }
}
