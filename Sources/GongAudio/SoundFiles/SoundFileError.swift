/// Why a sound file cannot be read, or an output file cannot be written.
///
/// One line, naming the file, what is wrong and what would work — `cannot read sound
/// 'bell.wav': file is empty (0 frames)`.
public struct SoundFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The file is missing or cannot be opened for reading.
        case notFound
        /// The file exists but is not a usable sound (format, channels, truncated, empty).
        case unusable
        /// The output file cannot be created (directory missing, permission, bad format choice).
        case cannotCreate
        /// Writing failed part-way (disk full, I/O error).
        case writeFailed
    }

    public var kind: Kind
    public var path: String
    public var message: String

    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String {
        switch kind {
        case .notFound, .unusable: "cannot read sound '\(path)': \(message)"
        case .cannotCreate: "cannot create '\(path)': \(message)"
        case .writeFailed: "cannot write '\(path)': \(message)"
        }
    }
}
