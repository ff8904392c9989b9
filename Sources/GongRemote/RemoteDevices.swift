import FoundationEssentials
import Glibc

/// What a paired device may do: `view` reads (status, bells, history, the live feed); `control`
/// also starts, pauses and stops sessions and pauses and rings the bells.
public enum RemoteRole: String, Codable, Sendable, CaseIterable {
    case view, control
}

/// A phone or script paired with the remote: its name, role and the hash of its token.
public struct RemoteDevice: Codable, Sendable, Equatable {
    /// Short and stable: what `gong remote devices revoke` takes besides the name.
    public var id: String
    public var name: String
    public var role: RemoteRole
    /// SHA-256 of the token, in hex: the token itself is never kept.
    public var tokenHash: String
    /// Seconds since 1970.
    public var pairedAt: Int64
}

/// The one pairing code waiting to be used: its hash, when it expires and what it buys.
public struct PairingCode: Codable, Sendable, Equatable {
    public var codeHash: String
    public var expiresAt: Int64
    public var role: RemoteRole
}

/// Why a file of the remote's state cannot be used.
public struct RemoteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var problem: String
    public var description: String { "\(path): \(problem)" }
}

/// The remote's state on disk: `devices.json` and `pairing.json`, each 0600 in a 0700 directory
/// (`$XDG_STATE_HOME/gong/remote`). Written whole to a temporary file and renamed, so a reader
/// (the server, while `gong remote pair` or `devices revoke` writes) sees the old file or the new.
public struct RemoteStore: Sendable {
    public let directory: String
    public var devicesPath: String { directory + "/devices.json" }
    public var pairingPath: String { directory + "/pairing.json" }
    /// How long a pairing code lives.
    public static let codeLifetimeSeconds: Int64 = 300

    public init(directory: String) { self.directory = directory }

    public func devices() throws(RemoteStoreError) -> [RemoteDevice] {
        guard let data = try read(devicesPath) else { return [] }
        do { return try JSONDecoder().decode([RemoteDevice].self, from: data) } catch {
            throw RemoteStoreError(path: devicesPath, problem: "not a list of devices; remove it to pair again")
        }
    }

    public func save(devices: [RemoteDevice]) throws(RemoteStoreError) {
        try write(devicesPath, encode(devices))
    }

    /// A new pairing code, replacing any before it; the code in the clear, to be shown once.
    public func newPairingCode(role: RemoteRole, now: Int64) throws(RemoteStoreError) -> String {
        var generator = SystemRandomNumberGenerator()
        let number = UInt32.random(in: 0..<100_000_000, using: &generator)
        let digits = String(number)
        let code = String(repeating: "0", count: 8 - digits.count) + digits
        try write(
            pairingPath,
            encode(PairingCode(codeHash: SHA256.hex(code.utf8), expiresAt: now + Self.codeLifetimeSeconds, role: role)))
        return code
    }

    /// Why a code bought nothing.
    public enum Refusal: Error, Sendable, Equatable {
        /// No code is waiting: none was made, or it was used.
        case noCode
        case expired
        case wrong
    }

    /// Trades a code for a new device and its token (shown once: only its hash is kept). A
    /// code that matches is used up whatever follows; an expired one is removed.
    public func redeem(code: String, deviceName: String, now: Int64) throws -> (RemoteDevice, token: String) {
        guard let data = try read(pairingPath), let pairing = try? JSONDecoder().decode(PairingCode.self, from: data)
        else { throw Refusal.noCode }
        let typed = code.filter(\.isNumber)
        guard now < pairing.expiresAt else {
            unlink(pairingPath)
            throw Refusal.expired
        }
        guard constantTimeEqual(SHA256.hex(typed.utf8), pairing.codeHash) else { throw Refusal.wrong }
        unlink(pairingPath)
        var generator = SystemRandomNumberGenerator()
        let token = hexString((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let id = hexString((0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let device = RemoteDevice(
            id: id, name: deviceName, role: pairing.role, tokenHash: SHA256.hex(token.utf8), pairedAt: now)
        try save(devices: try devices() + [device])
        return (device, token)
    }

    /// Removes the devices named `nameOrID` (by id, or every one of that name); those removed.
    public func revoke(_ nameOrID: String) throws(RemoteStoreError) -> [RemoteDevice] {
        let all = try devices()
        let removed = all.filter { $0.id == nameOrID || $0.name == nameOrID }
        if !removed.isEmpty { try save(devices: all.filter { !removed.contains($0) }) }
        return removed
    }

    // MARK: Files

    private func encode(_ value: some Encodable) throws(RemoteStoreError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do { return Array(try encoder.encode(value)) + [10] } catch {
            throw RemoteStoreError(path: directory, problem: "cannot be encoded")
        }
    }

    /// The 0700 directory, made if need be; one owned by someone else, or a link, is refused.
    func prepareDirectory() throws(RemoteStoreError) {
        var path = ""
        for part in directory.split(separator: "/") {
            path += "/" + part
            if mkdir(path, 0o700) != 0 && errno != EEXIST {
                throw RemoteStoreError(path: path, problem: "cannot be made (\(String(cString: strerror(errno))))")
            }
        }
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else {
            throw RemoteStoreError(path: directory, problem: "is not a directory of this user's")
        }
        if info.st_mode & 0o077 != 0 { chmod(directory, 0o700) }
    }

    private func read(_ path: String) throws(RemoteStoreError) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return nil }
            throw RemoteStoreError(path: path, problem: "cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
            guard bytes.count < 1 << 20 else { throw RemoteStoreError(path: path, problem: "is larger than 1 MiB") }
        }
        return Data(bytes)
    }

    private func write(_ path: String, _ bytes: [UInt8]) throws(RemoteStoreError) {
        try prepareDirectory()
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw RemoteStoreError(path: temporary, problem: "cannot be written (\(String(cString: strerror(errno))))")
        }
        fchmod(descriptor, 0o600)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw RemoteStoreError(path: path, problem: "cannot be written (\(String(cString: strerror(errno))))")
        }
    }
}
