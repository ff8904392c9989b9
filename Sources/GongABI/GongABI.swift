import Dispatch
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit

// The C interface declared in include/gong.h, built as libgong.so (`make lib`). Every function
// checks its pointers and turns every Swift error into a status and a message: nothing here
// may trap, since a trap would end the host program.

/// `GONG_ABI_VERSION` in gong.h: raised whenever a function, a status or a key's meaning changes.
let abiVersion: UInt32 = 1

enum Status: Int32 {
    case ok = 0, argument, pattern, device, refused, over, timeout, `internal`
}

/// A session behind a C handle, with its events queued as JSON lines for `gong_next_event`.
final class Handle: Sendable {
    let session: GongSession
    /// The same session without counting references, and its channel count: what `gong_render`
    /// needs on the host's real-time thread, where a reference count is refused.
    let sessionReference: Unmanaged<GongSession>
    let channels: Int
    private let mailbox = Mailbox()

    init(_ session: GongSession) {
        self.session = session
        sessionReference = .passUnretained(session)
        channels = session.output.channels
        let events = session.events()
        // Holds the stream and the mailbox, never the session: freeing the handle halts it. Off
        // the cooperative pool, which a host's threads may be holding (QueueExecutor).
        let executor = QueueExecutor(label: "gong events")
        Task(executorPreference: executor) { [mailbox] in
            withExtendedLifetime(executor) {}
            for await event in events { mailbox.put(event.jsonLine()) }
            mailbox.end()
        }
    }

    func next(timeoutMilliseconds: Int32) -> (String?, Status) {
        mailbox.take(timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// Lines waiting for `gong_next_event`, each handed out once, whichever thread asks.
final class Mailbox: Sendable {
    /// Lines not yet handed out, and whether the last (`finished`) has been put.
    private let queue = Locked<(lines: [String], ended: Bool)>(([], false))
    /// Counts what a waiting caller may take: one per line, and one more at the end.
    private let ready = DispatchSemaphore(value: 0)

    func put(_ line: String) {
        queue.withLock { $0.lines.append(line) }
        ready.signal()
    }

    func end() {
        queue.withLock { $0.ended = true }
        ready.signal()
    }

    /// The next line; `nil` with `.over` once every line is out, or `.timeout`.
    func take(timeoutMilliseconds: Int32) -> (String?, Status) {
        let deadline: DispatchTime =
            timeoutMilliseconds < 0 ? .distantFuture : .now() + .milliseconds(Int(timeoutMilliseconds))
        guard ready.wait(timeout: deadline) == .success else { return (nil, .timeout) }
        return queue.withLock { queue in
            if !queue.lines.isEmpty { return (queue.lines.removeFirst(), .ok) }
            // The end: left signalled, so every later call learns it too.
            ready.signal()
            return (nil, .over)
        }
    }
}

/// A copy the caller frees with `gong_free`.
private func duplicate(_ string: String) -> UnsafeMutablePointer<CChar>? { strdup(string) }

private func report(_ message: String?, to error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) {
    error?.pointee = message.flatMap(duplicate)
}

private func handle(_ pointer: OpaquePointer?) -> Handle? {
    pointer.map { Unmanaged<Handle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
}

private func status(of error: GongError) -> Status {
    switch error {
    case .pattern, .sound, .soundFile: .pattern
    case .device: .device
    case .setting, .output: .argument
    case .internalError: .internal
    }
}

/// Why options JSON cannot be used, in one line.
private struct OptionsError: Error {
    var message: String
}

/// Options as JSON: an object of known keys only, so a misspelt one is an error, not a default.
/// All the keys a device session takes.
private let deviceOptionKeys = ["rate", "channels", "latencyMs", "periodFrames", "gainDB", "format"]
/// The keys a pulled session takes: the host owns the output, and gives its rate and channels
/// as arguments.
private let pullOptionKeys = ["gainDB"]

private func options(
    _ text: UnsafePointer<CChar>?, device: UnsafePointer<CChar>?, known: [String] = deviceOptionKeys
) -> Result<SessionOptions, OptionsError> {
    var options = SessionOptions()
    if let device { options.device = String(cString: device) }
    guard let text else { return .success(options) }
    let data = Data(String(cString: text).utf8)
    guard let object = AnyJSON(parsing: data)?.object else {
        return .failure(OptionsError(message: "options: not a JSON object; use e.g. {\"rate\": 48000, \"gainDB\": -6}"))
    }
    struct Options: Decodable {
        var rate: Int?, channels: Int?, latencyMs: Double?, periodFrames: Int?, gainDB: Double?, format: String?
    }
    if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
        return .failure(
            OptionsError(message: "options: unknown key \"\(unknown)\"; use \(known.joined(separator: ", "))"))
    }
    guard let decoded = try? JSONDecoder().decode(Options.self, from: data) else {
        return .failure(
            OptionsError(
                message:
                    "options: a value of the wrong type; rate, channels and periodFrames are whole numbers, latencyMs and gainDB numbers, format a string"
            ))
    }
    if let rate = decoded.rate { options.rate = rate }
    if let channels = decoded.channels { options.channels = channels }
    options.latencyMs = decoded.latencyMs
    options.periodFrames = decoded.periodFrames
    if let gain = decoded.gainDB { options.gainDB = gain }
    if let format = decoded.format {
        guard let sampleFormat = SampleFormat(rawValue: format) else {
            return .failure(
                OptionsError(message: "options: format \"\(format)\": unsupported; use \(SessionLimits.formatsAllowed)")
            )
        }
        options.format = sampleFormat
    }
    return .success(options)
}

/// Where a session plays: on a device, or pulled by the host at a rate and channel count.
private enum Destination {
    case device(UnsafePointer<CChar>?)
    case pull(PullFormat)
}

/// Where a session's pattern comes from: a pattern's name or a .toml path, or TOML text.
private enum PatternSource {
    case name(UnsafePointer<CChar>?)
    case toml(UnsafePointer<CChar>?)

    /// The pattern, its random bells seeded, or the status and the line that say why there is none.
    func load() -> Result<Pattern, Failure> {
        read().map { $0.seeded() }
    }

    private func read() -> Result<Pattern, Failure> {
        switch self {
        case .name(nil): .failure(Failure(.argument, "pattern: NULL; give a pattern's name or a .toml path"))
        case .toml(nil): .failure(Failure(.argument, "toml: NULL; give the pattern's TOML text"))
        case .name(let name?):
            Result { () throws(PatternError) in try PatternCatalog().pattern(named: String(cString: name)) }
                .mapError { Failure(.pattern, $0.description) }
        case .toml(let text?):
            Result { () throws(PatternError) in try PatternCatalog.pattern(toml: String(cString: text)) }
                .mapError { Failure(.pattern, $0.description) }
        }
    }

    struct Failure: Error {
        let status: Status
        let message: String
        init(_ status: Status, _ message: String) { (self.status, self.message) = (status, message) }
    }
}

/// What every `gong_session_create*` call does: the pattern, the options its destination
/// takes, the session; or a status and the line saying what is wrong.
private func create(
    _ source: PatternSource, options text: UnsafePointer<CChar>?, to destination: Destination,
    out: UnsafeMutablePointer<OpaquePointer?>?, errorOut: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    report(nil, to: errorOut)
    guard let out else {
        report("out: NULL; pass the address of a gong_session pointer", to: errorOut)
        return Status.argument.rawValue
    }
    out.pointee = nil
    let resolved: Pattern
    switch source.load() {
    case .success(let pattern): resolved = pattern
    case .failure(let failure):
        report(failure.message, to: errorOut)
        return failure.status.rawValue
    }
    let chosen: SessionOptions
    let parsed =
        switch destination {
        case .device(let device): options(text, device: device)
        case .pull: options(text, device: nil, known: pullOptionKeys)
        }
    switch parsed {
    case .success(let value): chosen = value
    case .failure(let failure):
        report(failure.message, to: errorOut)
        return Status.argument.rawValue
    }
    do {
        let session =
            switch destination {
            case .device: try GongSession(pattern: resolved, options: chosen)
            case .pull(let format): try GongSession(pattern: resolved, options: chosen, pulling: format)
            }
        out.pointee = OpaquePointer(Unmanaged.passRetained(Handle(session)).toOpaque())
        return Status.ok.rawValue
    } catch let failure {
        report(failure.description, to: errorOut)
        return status(of: failure).rawValue
    }
}

@_cdecl("gong_abi_version")
public func gong_abi_version() -> UInt32 { abiVersion }

/// `gong --version`'s text, kept for the life of the process: the one string the library hands
/// out that the caller does not free, so a program can print it without owning anything.
private nonisolated(unsafe) let versionText: UnsafeMutablePointer<CChar> = strdup(GongVersion.description)

@_cdecl("gong_version")
public func gong_version() -> UnsafePointer<CChar> { UnsafePointer(versionText) }

@_cdecl("gong_session_create")
public func gong_session_create(
    _ pattern: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ device: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    create(.name(pattern), options: options, to: .device(device), out: out, errorOut: error)
}

@_cdecl("gong_session_create_toml")
public func gong_session_create_toml(
    _ toml: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ device: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    create(.toml(toml), options: options, to: .device(device), out: out, errorOut: error)
}

@_cdecl("gong_session_create_pull")
public func gong_session_create_pull(
    _ pattern: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ rate: Int32, _ channels: Int32,
    _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    create(
        .name(pattern), options: options, to: .pull(PullFormat(rate: Int(rate), channels: Int(channels))), out: out,
        errorOut: error)
}

@_cdecl("gong_session_create_pull_toml")
public func gong_session_create_pull_toml(
    _ toml: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?, _ rate: Int32, _ channels: Int32,
    _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    create(
        .toml(toml), options: options, to: .pull(PullFormat(rate: Int(rate), channels: Int(channels))), out: out,
        errorOut: error)
}

/// The host's real-time call: the next `frames` frames of a pulled session into `out`.
/// Allocates nothing, takes no lock and never waits (the compiler checks it).
@_cdecl("gong_render_at")
@_noAllocation @_noLocks
public func gong_render_at(
    _ session: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?, _ frames: Int32, _ heardAtNanoseconds: Int64
) -> Int32 {
    guard let session, let out, frames > 0 else { return 1 }  // GONG_ERR_ARGUMENT
    let heardAt = heardAtNanoseconds > 0 ? MonotonicTime(nanoseconds: heardAtNanoseconds) : nil
    let status = Unmanaged<Handle>.fromOpaque(UnsafeRawPointer(session))._withUnsafeGuaranteedRef { handle in
        let buffer = UnsafeMutableBufferPointer(start: out, count: Int(frames) * handle.channels)
        return handle.sessionReference._withUnsafeGuaranteedRef {
            $0.render(into: buffer, frames: Int(frames), heardAt: heardAt)
        }
    }
    // Literals, as gong.h numbers them: `Status`'s raw values are the same.
    switch status {
    case .playing: return 0  // GONG_OK
    case .notStarted: return 4  // GONG_ERR_REFUSED: not started yet; silence
    case .over: return 5  // GONG_ERR_OVER: finished; silence
    case .refused: return 1  // GONG_ERR_ARGUMENT
    }
}

@_cdecl("gong_render")
@_noAllocation @_noLocks
public func gong_render(_ session: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?, _ frames: Int32) -> Int32 {
    gong_render_at(session, out, frames, 0)
}

@_cdecl("gong_session_start")
public func gong_session_start(_ session: OpaquePointer?) -> Int32 {
    guard let handle = handle(session) else { return Status.argument.rawValue }
    handle.session.start()
    return Status.ok.rawValue
}

private func command(
    _ session: OpaquePointer?, _ command: SessionCommand,
    _ errorOut: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    report(nil, to: errorOut)
    guard let handle = handle(session) else {
        report("session: NULL", to: errorOut)
        return Status.argument.rawValue
    }
    do {
        try handle.session.send(command)
        return Status.ok.rawValue
    } catch {
        report(error.description, to: errorOut)
        switch error.reason {
        case .gainOutOfRange: return Status.argument.rawValue
        case .over: return Status.over.rawValue
        case .notNow, .busy: return Status.refused.rawValue
        }
    }
}

@_cdecl("gong_pause")
public func gong_pause(_ session: OpaquePointer?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
{
    command(session, .pause, error)
}

@_cdecl("gong_resume")
public func gong_resume(_ session: OpaquePointer?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?)
    -> Int32
{
    command(session, .resume, error)
}

@_cdecl("gong_skip")
public func gong_skip(_ session: OpaquePointer?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
{
    command(session, .skip, error)
}

@_cdecl("gong_stop")
public func gong_stop(_ session: OpaquePointer?, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
{
    command(session, .stop, error)
}

@_cdecl("gong_set_gain")
public func gong_set_gain(
    _ session: OpaquePointer?, _ decibels: Double, _ error: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    command(session, .setGain(decibels: decibels), error)
}

@_cdecl("gong_next_event")
public func gong_next_event(
    _ session: OpaquePointer?, _ timeoutMilliseconds: Int32,
    _ event: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    guard let handle = handle(session), let event else { return Status.argument.rawValue }
    event.pointee = nil
    let (line, status) = handle.next(timeoutMilliseconds: timeoutMilliseconds)
    event.pointee = line.flatMap(duplicate)
    return status.rawValue
}

private func json<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
}

@_cdecl("gong_session_status")
public func gong_session_status(
    _ session: OpaquePointer?, _ status: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    guard let handle = handle(session), let status else { return Status.argument.rawValue }
    status.pointee = duplicate(json(handle.session.status))
    return Status.ok.rawValue
}

@_cdecl("gong_session_report")
public func gong_session_report(
    _ session: OpaquePointer?, _ report: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
    guard let handle = handle(session), let report else { return Status.argument.rawValue }
    report.pointee = duplicate(json(handle.session.waitForReport()))
    return Status.ok.rawValue
}

@_cdecl("gong_free")
public func gong_free(_ string: UnsafeMutablePointer<CChar>?) {
    free(string)
}

@_cdecl("gong_session_free")
public func gong_session_free(_ session: OpaquePointer?) {
    guard let session else { return }
    Unmanaged<Handle>.fromOpaque(UnsafeRawPointer(session)).release()
}
