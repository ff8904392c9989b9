import ArgumentParser
import FoundationEssentials
import Glibc
import GongAudio
import GongCore
import GongKit
import GongPractice

/// Rings each of `gong bells`' bells in a process of its own (`gong ring-bell`), so the process
/// that waits between bells never starts the engine.
///
/// Why a process: the engine's sessions run on Swift tasks, and on Linux the first task (or
/// global Dispatch queue) a process uses makes libdispatch arm a one-second timer to watch its
/// worker threads, kept for the life of the process: a bells process that had rung once woke
/// 589 times in ten idle minutes. Ringing elsewhere keeps the waiting process to its one
/// wall-clock timer, and leaves nothing of the sound server's client library in it between bells
/// either. The child is this very executable (`/proc/self/exe`, the running image even if the
/// file was replaced since), so it rings with the code the bells were planned with; a crash
/// while ringing loses that bell, said and recorded, not the day's schedule.
struct BellRinger {
    /// The bell's sound as a file, resolved once when the bells started.
    let soundPath: String
    let gainDB: Double
    let device: String
    let latencyMs: Double?
    let volumeDB: Double
    /// Played after the bell (`--then`), its sounds already files; nil for the bell alone.
    let practice: Pattern?
    let json: Bool

    struct Heard: Equatable {
        /// How long the device took to open.
        var openMs: Double?
        /// How far from its second the cue was heard, by the device's own clock; nil when the
        /// device gives no time.
        var offMs: Double?
        /// Why it was not rung (the device could not be opened or failed, the ringing process
        /// could not be started or ended without an answer).
        var failure: String?
    }

    /// The ringing process's arguments for a bell due at `dueWallNanoseconds`, its answer to go to
    /// descriptor `answer`.
    func arguments(dueWallNanoseconds: Int64, answer: Int32) -> [String] {
        var arguments = [
            "ring-bell", "--due", String(dueWallNanoseconds), "--sound", soundPath, "--gain", String(gainDB),
            "--device", device, "--volume", String(volumeDB), "--answer-fd", String(answer)
        ]
        if let latencyMs { arguments += ["--latency", String(latencyMs)] }
        if let practice, let data = try? JSONEncoder().encode(practice) {
            arguments += ["--then", String(decoding: data, as: UTF8.self)]
        }
        if json { arguments.append("--json") }
        return arguments
    }

    /// What the waiting process watches while a bell rings, so neither waits out the bell's tail.
    struct Watch {
        /// The signal watcher's pipe; `forward` says which signal, if any, to pass on to the
        /// ringing process when it wakes.
        var signals: Int32
        var forward: () -> Int32?
        /// The control socket; `serve` answers one request on it.
        var control: Int32
        var serve: () -> Void
    }

    /// Starts the ringing process for `bell` and waits for its answer, watching `watch` meanwhile.
    func ring(_ bell: PlannedBell, watch: Watch) -> Heard {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return Heard(failure: "no pipe for the ringing process: \(errnoText())") }
        // The waiting process has no other thread that could start a process meanwhile.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(ends[0]) }
        // Above the descriptors a process starts with, so the copy the child gets is a new one,
        // never close-on-exec. The child stays in this process's group, and its output goes where
        // this one's does (its `--json` lines).
        let answer: Int32 = 64
        let process: Subprocess
        do {
            process = try Subprocess(
                "/proc/self/exe", arguments(dueWallNanoseconds: bell.instant * 1_000_000_000, answer: answer),
                output: .inherited, errors: .inherited, handingOn: .init(ends[1], as: answer), ownProcessGroup: false)
        } catch {
            close(ends[1])
            return Heard(failure: "the ringing process could not be started: \(error.description)")
        }
        close(ends[1])
        let said = readAll(ends[0], child: process.processIdentifier, watch: watch)
        process.waitUntilExit()
        if let heard = Self.heard(from: said) { return heard }
        let ending =
            process.endedBySignal
            ? "was ended by signal \(process.terminationStatus)" : "exited with status \(process.terminationStatus)"
        return Heard(failure: "the ringing process \(ending) before it answered")
    }

    /// Everything the child writes to `descriptor`, until it closes it. Meanwhile control
    /// requests are answered, and signals passed on until one has been: a child that does not
    /// stop is then waited for, not signalled again.
    private func readAll(_ descriptor: Int32, child: pid_t, watch: Watch) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptors = [descriptor, watch.control, watch.signals].map {
            pollfd(fd: $0, events: Int16(POLLIN), revents: 0)
        }
        while true {
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                return data
            }
            if descriptors[1].revents != 0 { watch.serve() }
            if descriptors.count > 2 && descriptors[2].revents != 0, let signal = watch.forward() {
                kill(child, signal)
                descriptors.removeLast()
            }
            guard descriptors[0].revents != 0 else { continue }
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// The child's answer, one JSON object.
    static func heard(from data: Data) -> Heard? {
        guard let object = AnyJSON(parsing: data)?.object else { return nil }
        return Heard(
            openMs: object["openMs"]?.double, offMs: object["offMs"]?.double, failure: object["failure"]?.string)
    }

    static func answerLine(_ heard: Heard) -> String {
        var object: [String: AnyJSON] = [:]
        object["openMs"] = heard.openMs.map(AnyJSON.number)
        object["offMs"] = heard.offMs.map(AnyJSON.number)
        object["failure"] = heard.failure.map(AnyJSON.string)
        return AnyJSON.object(object).text() + "\n"
    }

    private func errnoText() -> String { String(cString: strerror(errno)) }
}

/// The process `gong bells` starts for each bell (hidden: a person uses `gong bells` or
/// `gong ctl ring`). It opens the device, rings the bell as a one-cue session whose cue is heard on
/// the bell's second, and writes how it went to the descriptor it was given.
struct RingBellCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ring-bell", abstract: "Ring one bell for gong bells (started by it).", shouldDisplay: false)

    @Option(help: "When the bell is heard, in nanoseconds since 1970 (UTC).")
    var due: Int64

    @Option(help: "The bell's sound file.")
    var sound: String

    @Option(help: "The bell's gain in dB.")
    var gain: Double = 0

    @Option(help: "Playback device.")
    var device: String

    @Option(help: "Output latency in milliseconds.")
    var latency: Double?

    @Option(help: "Master volume in dB.")
    var volume: Double = 0

    @Option(help: "A practice after the bell: a pattern as JSON, its sounds files.")
    var then: String?

    @Option(name: .customLong("answer-fd"), help: "The descriptor the answer goes to.")
    var answer: Int32

    @Flag(help: "Print the session's events as JSON lines.")
    var json = false

    func run() async throws {
        // Not handed on to any process this one starts (a sound server's helper): the waiting
        // process reads until the last holder closes it.
        _ = fcntl(answer, F_SETFD, FD_CLOEXEC)
        let heard = await ring()
        let line = BellRinger.answerLine(heard)
        _ = line.withCString { write(answer, $0, strlen($0)) }
        close(answer)
    }

    private func ring() async -> BellRinger.Heard {
        let cue = Cue(sound, gainDB: gain)
        let pattern: Pattern
        if let then {
            guard let practice = try? JSONDecoder().decode(Pattern.self, from: Data(then.utf8)) else {
                return BellRinger.Heard(failure: "the practice to follow the bell could not be read")
            }
            pattern = Self.bell(cue, then: practice)
        } else {
            pattern = Pattern(
                name: "bell", warmUp: BellsCommand.warmUpSeconds, phases: [Phase("bell", length: 1, cue: cue)])
        }
        let options = SessionOptions(device: device, latencyMs: latency, gainDB: volume, interactive: false)
        let opening = BellAlarm.clocks()
        let session: GongSession
        do {
            session = try GongSession(pattern: pattern, options: options, bank: SoundBank.standard())
        } catch {
            return BellRinger.Heard(failure: error.description)
        }
        let opened = BellAlarm.clocks()
        let openMs = Double(opened.monotonic - opening.monotonic) / 1e6
        // The wall clock and the monotonic one (the device's timestamps) are one offset apart.
        let dueMonotonic = Double(due - opened.wall + opened.monotonic) / 1e9
        // A stream's first frames are heard soon after they are written (its buffer starts empty;
        // the latency is only how far ahead later writes run), so the session starts one warm-up
        // before the bell, and once the device says when its first frame is heard (through
        // PulseAudio 1-2 ms after the start, which put bells that much late), the session is
        // moved on by as much: the cue, not yet rendered, is heard on the bell's second.
        let warmUp = BellsCommand.warmUpSeconds.doubleValue
        let start = due - Int64(warmUp * 1e9)
        var until = timespec(tv_sec: Int(start / 1_000_000_000), tv_nsec: Int(start % 1_000_000_000))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, nil) == EINTR {}
        let events = session.events()
        session.start()
        var heard = BellRinger.Heard(openMs: openMs)
        // The cue's event may come before the device says when frames are heard: then the first
        // frame's time, and the cue's frame after it, place it.
        var cueFrame: Int64?
        var firstFrameHeard: Double?
        var movedOnFrames: Int64 = 0
        for await event in events {
            if json {
                // A line as it happens, for a tool reading the stream, even into a file or pipe.
                print(event.jsonLine())
                fflush(nil)
            }
            switch event.kind {
            case .cue where cueFrame == nil:
                // The bell: the first cue (a practice's come after it).
                cueFrame = event.frame
                if let audible = event.audible { heard.offMs = (audible - dueMonotonic) * 1000 }
            case .firstFrameAudible:
                firstFrameHeard = event.audible
                if let heardAt = event.audible {
                    let late = heardAt + warmUp - dueMonotonic
                    let frames = Int64((late * Double(session.output.rate)).rounded())
                    if frames > 0 && late < Self.movableSeconds(warmUp: warmUp, latencyMs: session.output.latencyMs)
                        && session.moveOn(frames: frames)
                    {
                        movedOnFrames = frames
                    }
                }
            case .failed(let message):
                heard.failure = message
            default:
                break
            }
        }
        if heard.offMs == nil, let cueFrame, let firstFrameHeard {
            let heardAt = firstFrameHeard + Double(cueFrame - movedOnFrames) / Double(session.output.rate)
            heard.offMs = (heardAt - dueMonotonic) * 1000
        }
        return heard
    }

    /// How late a stream's first frame may be heard and the bell still be moved onto its second:
    /// the cue must not yet be in what the device was given, which runs a buffer ahead of the
    /// frame heard, and a quarter of a second is left for this process to hear of that frame and
    /// the audio thread to take the command. A bell any later is rung late, and says by how much.
    static func movableSeconds(warmUp: Double, latencyMs: Double) -> Double {
        warmUp - latencyMs / 1000 - 0.25
    }

    /// A bell followed by a practice, as one session so the two keep one clock: the bell is the
    /// practice's start cue, after the same silence a bell alone has ahead of it (here a start
    /// delay, since a start cue plays at the session's first frame), and the first phase begins
    /// once the bell has been heard for a few seconds.
    static func bell(_ cue: Cue, then practice: Pattern) -> Pattern {
        var pattern = practice
        pattern.name = "bell, then \(practice.name)"
        pattern.startDelay = BellsCommand.warmUpSeconds
        pattern.startCue = cue
        pattern.warmUp = max(practice.warmUp, BellsCommand.practiceAfterSeconds)
        return pattern
    }
}

extension Pattern {
    /// This pattern with every sound it plays given as the file the bank finds for it.
    func withSoundFiles(from bank: SoundBank) throws(SoundBankError) -> Pattern {
        var pattern = self
        let user = "then (\(name))"
        func file(_ cue: Cue?) throws(SoundBankError) -> Cue? {
            guard var cue else { return nil }
            cue.sound = try bank.resolve(cue.sound, usedBy: user)
            return cue
        }
        pattern.startCue = try file(startCue)
        for index in pattern.phases.indices {
            pattern.phases[index].cue = try file(phases[index].cue)
            if var bell = phases[index].bell {
                bell.cue = try file(bell.cue) ?? bell.cue
                pattern.phases[index].bell = bell
            }
        }
        pattern.endCue = try file(endCue)
        if var bed = bed {
            bed.sound = try bank.resolve(bed.sound, usedBy: user)
            pattern.bed = bed
        }
        return pattern
    }
}
