import CGongBuild
import FoundationEssentials
import GongAudio
import GongCore

/// Why a cue's sound cannot be found.
public struct SoundBankError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file named by path that is not there, or a name the bank does not have.
    public enum Kind: Sendable, Equatable { case fileNotFound, unknownSound }
    public var kind: Kind
    public var sound: String
    public var usedBy: String
    /// The bank's sounds, for an unknown one: what may be used instead (empty: no bank was found).
    public var available: [String]
    /// The directories the bank was looked for in.
    public var searched: [String]

    public init(kind: Kind, sound: String, usedBy: String, available: [String] = [], searched: [String] = []) {
        self.kind = kind
        self.sound = sound
        self.usedBy = usedBy
        self.available = available
        self.searched = searched
    }

    /// The problem as data in one line; which flag gives a bank is the command line's to say.
    public var description: String {
        switch kind {
        case .fileNotFound: return "\(usedBy): sound file '\(sound)' not found"
        case .unknownSound:
            let allowed =
                available.isEmpty
                ? "no sound bank was found (searched \(searched.joined(separator: ", ")))"
                : "use one of " + available.joined(separator: ", ") + ", or a path to a sound file"
            return "\(usedBy): unknown sound \"\(sound)\"; \(allowed)"
        }
    }
}

/// The named sounds cues refer to (`gong`, `bowl`, …), found in a list of directories.
///
/// A name resolves to the first `NAME.flac|wav|ogg|aiff` in, in order: the directories given
/// explicitly (`--sounds`, `GONG_SOUNDS`, the config), the user's `$XDG_DATA_HOME/gong/sounds`
/// (so a person can replace any shipped sound by dropping a file of the same name there), the
/// installed bank (`PREFIX/share/gong/sounds` beside the program or libgong.so, then
/// `$XDG_DATA_DIRS`), and last the `Sounds/` folder of the source tree the binary was built from.
///
/// Sounds decoded and converted for an output are kept in `cache` (`$XDG_CACHE_HOME/gong/sounds`
/// for the standard bank), so only the first session at a rate pays for decoding and converting.
public struct SoundBank: Sendable {
    /// Why a directory is on the search path: `gong sounds` says it, and a missing bank says
    /// where it looked. Data: the words are the command line's.
    public enum Origin: Sendable, Equatable {
        /// Given by the caller (`--sounds`, a test, an embedding program).
        case given
        /// `GONG_SOUNDS`.
        case environment
        /// The config file's `sounds`.
        case config
        /// `$XDG_DATA_HOME/gong/sounds`: the person's own, which replace shipped ones.
        case user
        /// `../share/gong/sounds` from the running program or libgong.so: an installed bank,
        /// found wherever the tarball or package was unpacked.
        case installed
        /// `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`), each `/gong/sounds`.
        case dataDirs
        /// `Sounds/` of the checkout gong was compiled in: `swift run gong` works untouched.
        case sourceTree
    }

    /// One directory of the search path and why it is there.
    public struct Place: Sendable, Equatable {
        public var path: String
        public var origin: Origin
        public init(_ path: String, _ origin: Origin) {
            self.path = path
            self.origin = origin
        }
    }

    /// The search path, first match wins.
    public let places: [Place]
    /// Where prepared sounds are kept; nil decodes and converts them afresh every time.
    public let cache: PreparedSoundCache?

    public static let extensions = ["flac", "wav", "ogg", "oga", "aiff", "aif"]

    public var directories: [String] { places.map(\.path) }

    public init(places: [Place], cache: PreparedSoundCache? = nil) {
        self.places = places
        self.cache = cache
    }

    public init(directories: [String], cache: PreparedSoundCache? = nil) {
        self.init(places: directories.map { Place($0, .given) }, cache: cache)
    }

    /// The standard search path, with `explicit` (a `--sounds` directory) first, then
    /// `GONG_SOUNDS`, then `extra` (the config's `sounds`).
    public static func standard(
        explicit: String? = nil, extra: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        gongDirectories: GongDirectories = GongDirectories()
    ) -> SoundBank {
        var places: [Place] = []
        if let explicit { places.append(Place(expandingTilde(explicit), .given)) }
        if let fromEnvironment = environment["GONG_SOUNDS"], !fromEnvironment.isEmpty {
            places.append(Place(fromEnvironment, .environment))
        }
        places += extra.map { Place($0, .config) }
        places.append(Place(gongDirectories.userSounds, .user))
        places += installedPrefixes.map { Place($0 + "/share/gong/sounds", .installed) }
        places += gongDirectories.sharedData.map { Place($0 + "/sounds", .dataDirs) }
        places.append(Place(sourceTreeSounds, .sourceTree))
        return SoundBank(places: places, cache: PreparedSoundCache(directory: gongDirectories.preparedSounds))
    }

    /// The prefixes gong is installed under, as found from the files running it: the program
    /// (`/proc/self/exe`, not `argv[0]`, which is a bare `gong` when found on `$PATH`), and
    /// libgong.so when this code runs inside it (a host program lives elsewhere, its library
    /// under the prefix). `PREFIX/bin/gong` and `PREFIX/lib/libgong.so` both give `PREFIX`.
    static let installedPrefixes: [String] = {
        var files = [URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()]
        if let image = gong_image_path().map({ String(cString: $0) }), image.hasSuffix(".so") {
            files.append(URL(fileURLWithPath: image).resolvingSymlinksInPath())
        }
        var prefixes: [String] = []
        for file in files {
            let prefix = file.deletingLastPathComponent().deletingLastPathComponent().path
            if !prefixes.contains(prefix) { prefixes.append(prefix) }
        }
        return prefixes
    }()

    /// `Sounds/` of the checkout this file was compiled in: lets `swift run gong` work untouched.
    static let sourceTreeSounds: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }  // Sounds/SoundBank.swift → GongKit → Sources → root
        return url.path + "/Sounds"
    }()

    /// The file a bank name refers to, or nil.
    public func path(of name: String) -> String? {
        for directory in directories {
            for ext in SoundBank.extensions {
                let candidate = "\(directory)/\(name).\(ext)"
                if FileManager.default.isReadableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }

    /// Every name available, sorted, with the file each resolves to and the place it is in.
    public func availableSounds() -> [(name: String, path: String, place: Place)] {
        var found: [String: (path: String, place: Place)] = [:]
        for place in places {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: place.path)) ?? []
            for file in files.sorted() {
                let url = URL(fileURLWithPath: file)
                let name = url.deletingPathExtension().lastPathComponent
                guard SoundBank.extensions.contains(url.pathExtension.lowercased()), found[name] == nil else {
                    continue
                }
                found[name] = (place.path + "/" + file, place)
            }
        }
        return found.keys.sorted().compactMap { name in found[name].map { (name, $0.path, $0.place) } }
    }

    /// The file behind a cue: a path of the person's own (checked to exist) or a bank name.
    public func resolve(_ sound: String, usedBy: String) throws(SoundBankError) -> String {
        if Cue(sound).isFile {
            let path = expandingTilde(sound)
            guard FileManager.default.fileExists(atPath: path) else {
                throw SoundBankError(kind: .fileNotFound, sound: sound, usedBy: usedBy, searched: directories)
            }
            return path
        }
        if let path = path(of: sound) { return path }
        throw SoundBankError(
            kind: .unknownSound, sound: sound, usedBy: usedBy, available: availableSounds().map(\.name),
            searched: directories)
    }
}

extension Pattern {
    /// Which part of the pattern plays `sound` first, for error messages: `phases[0].cue`, `end`.
    func cueKey(for sound: String) -> String {
        if startCue?.sound == sound { return "start" }
        for (index, phase) in phases.enumerated() {
            if phase.cue?.sound == sound { return "phases[\(index)].cue (\(phase.name))" }
            if phase.bell?.cue.sound == sound { return "phases[\(index)].bell.cue (\(phase.name))" }
        }
        if endCue?.sound == sound { return "end" }
        return "cue"
    }
}
