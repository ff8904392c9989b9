import Foundation
import Glibc
import Synchronization

/// What a timing measurement was taken on, as cyclictest's and OSADL's reports state it: a
/// figure means little without the kernel, the CPUs, how they were clocked and how busy the
/// machine was. Anything the system does not say is nil, never guessed.
public struct MachineConditions: Codable, Sendable, Equatable {
    /// `uname -r` and `uname -v`.
    public var kernelRelease: String
    public var kernelVersion: String
    /// A PREEMPT_RT kernel (fully preemptible: `/sys/kernel/realtime`, or PREEMPT_RT in its
    /// version).
    public var preemptRT: Bool
    public var cpuCount: Int
    public var cpuModel: String?
    /// cpufreq's governor for CPU 0, where the kernel exposes it (not in most VMs).
    public var frequencyGovernor: String?
    /// The 1-, 5- and 15-minute load averages when the run began and when it ended.
    public var loadAverageBefore: [Double]
    public var loadAverageAfter: [Double]?
    /// Busy threads run beside the measurement (`--load`).
    public var busyThreads: Int

    private enum CodingKeys: String, CodingKey {
        case kernelRelease, kernelVersion, preemptRT, cpuCount, cpuModel, frequencyGovernor, loadAverageBefore,
            loadAverageAfter, busyThreads
    }

    /// Every key, `null` where the system did not say.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeEvery([
            .kernelRelease: kernelRelease, .kernelVersion: kernelVersion, .preemptRT: preemptRT, .cpuCount: cpuCount,
            .cpuModel: cpuModel, .frequencyGovernor: frequencyGovernor, .loadAverageBefore: loadAverageBefore,
            .loadAverageAfter: loadAverageAfter, .busyThreads: busyThreads
        ])
    }

    /// The machine as it is now; `loadAverageAfter` is filled in when the run ends.
    public static func current(busyThreads: Int) -> MachineConditions {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let version = withUnsafeBytes(of: &names.version) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let realtime = readLine(of: "/sys/kernel/realtime") == "1" || version.contains("PREEMPT_RT")
        return MachineConditions(
            kernelRelease: release, kernelVersion: version, preemptRT: realtime,
            cpuCount: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), cpuModel: cpuModel(),
            frequencyGovernor: readLine(of: "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            loadAverageBefore: loadAverage(), loadAverageAfter: nil, busyThreads: busyThreads)
    }

    public static func loadAverage() -> [Double] {
        guard let line = readLine(of: "/proc/loadavg") else { return [] }
        return line.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// x86's "model name"; on ARM boards (a Raspberry Pi) "Model" or "Hardware" names it.
    private static func cpuModel() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for key in ["model name", "Model", "Hardware", "cpu model"] {
            for line in info.split(separator: "\n") where line.hasPrefix(key) {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == key {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    static func readLine(of path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first.map(String.init)?.trimmingCharacters(in: .whitespaces)
        return line?.isEmpty == false ? line : nil
    }
}

/// How the kernel schedules a thread, read back rather than assumed: what was asked for may
/// have been refused.
public struct GrantedPriority: Codable, Sendable, Equatable {
    /// SCHED_FIFO, SCHED_RR or SCHED_OTHER (and the rest by name).
    public var policy: String
    /// The real-time priority (1–99) under FIFO and RR, else 0.
    public var realtimePriority: Int
    public var nice: Int

    /// The thread with kernel id `thread`, nil once it has ended.
    public static func of(thread: Int32) -> GrantedPriority? {
        guard thread > 0 else { return nil }
        let policy = sched_getscheduler(thread)
        guard policy >= 0 else { return nil }
        var parameters = sched_param()
        guard sched_getparam(thread, &parameters) == 0 else { return nil }
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(thread))
        guard errno == 0 else { return nil }
        let names = [
            SCHED_OTHER: "SCHED_OTHER", SCHED_FIFO: "SCHED_FIFO", SCHED_RR: "SCHED_RR", 3: "SCHED_BATCH",
            5: "SCHED_IDLE"
        ]
        return GrantedPriority(
            policy: names[policy] ?? "policy \(policy)", realtimePriority: Int(parameters.sched_priority),
            nice: Int(nice))
    }

    public var description: String {
        realtimePriority > 0 ? "\(policy) \(realtimePriority)" : "\(policy), nice \(nice)"
    }
}

/// Busy threads beside a measurement (`--load N`): each spins until stopped, as `yes >
/// /dev/null` does, so a run shows what a busy machine does to the timing.
public final class BusyLoad: Sendable {
    public let threads: Int
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    public init(threads: Int) {
        self.threads = threads
        for _ in 0..<threads {
            Thread { [self] in
                while !stopping.load(ordering: .relaxed) {}
                finished.signal()
            }.start()
        }
    }

    /// Stops every thread and waits until they have.
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        for _ in 0..<threads { finished.wait() }
    }
}
