import Foundation

/// What the test rig's PipeWire logged while a test ran (scripts/test-pipewire.sh has the daemon
/// and pipewire-pulse log their nodes at info level into `rig.log`): each cycle the driver began
/// while a client's node had not finished the last ("client too slow!", the daemon's, at most one
/// line in 2 s), and each time a client's data thread found it had slept through cycles ("client
/// missed N wakeups", pipewire-pulse's own). The sink plays such a cycle without the client's
/// stream, which goes on a cycle later: through pipewire-pulse all a PulseAudio client plays
/// after it is heard whole quanta later, and the client is told nothing (its queue never ran
/// dry). Read by the tests that hear a stream through pipewire-pulse, to say why it moved
/// (bench/RESULTS.md, stop 59).
struct PipeWireLog {
    /// A client late for the graph: when (CLOCK_MONOTONIC seconds), its node's name, and what
    /// was logged.
    struct LateClient: CustomStringConvertible {
        var seconds: Double
        var node: String
        var what: String

        var description: String { "\(node) \(what) at \(String(format: "%.3f", seconds)) s" }

        /// The cycles the line says the graph may have run without the node: one the daemon
        /// found it too slow for, or the wake-ups its data thread missed (each a cycle it did not
        /// process: impl-node.c reads them off its eventfd's count).
        var cycles: Int {
            guard what.hasPrefix("missed ") else { return 1 }
            return Int(what.dropFirst("missed ".count).prefix { $0.isNumber }) ?? 1
        }
    }

    /// Nil when the environment names no rig: nothing is read.
    let path: String?
    private let start: UInt64
    /// CLOCK_MONOTONIC_RAW (the log's stamps) less CLOCK_MONOTONIC, in seconds.
    private let rawLessMonotonic: Double

    /// From now on, in the log of the rig `environment` reaches (its PIPEWIRE_RUNTIME_DIR).
    init(environment: [String: String]) {
        path = environment["PIPEWIRE_RUNTIME_DIR"].map { $0 + "/rig.log" }
        start =
            path.flatMap { ((try? FileManager.default.attributesOfItem(atPath: $0)[.size]) as? NSNumber)?.uint64Value }
            ?? 0
        rawLessMonotonic = KeysHeard.offset(of: CLOCK_MONOTONIC_RAW, from: CLOCK_MONOTONIC)
    }

    /// Every late client logged since `init`, in the log's order; the node named `node` only.
    func lateClients(named node: String) -> [LateClient] {
        guard let path, let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        try? handle.seek(toOffset: start)
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { Self.lateClient(in: String($0)) }
            .filter { $0.node == node }
            .map { LateClient(seconds: $0.seconds - rawLessMonotonic, node: $0.node, what: $0.what) }
    }

    /// One line of the log, e.g. `[I][44246.624734] pw.node | [ impl-node.c: 1058
    /// dump_states()] (gong-69) client too slow! rate:256/48000 pos:1028864 status:triggered`,
    /// stamped in CLOCK_MONOTONIC_RAW seconds; nil for any other line.
    static func lateClient(in line: String) -> LateClient? {
        guard line.hasPrefix("[I]["), let stampEnd = line.dropFirst(4).firstIndex(of: "]"),
            let seconds = Double(line[line.index(line.startIndex, offsetBy: 4)..<stampEnd]),
            let open = line.range(of: "] ("), let close = line[open.upperBound...].range(of: ") client ")
        else { return nil }
        let what = line[close.upperBound...]
        guard what.hasPrefix("too slow! ") || (what.hasPrefix("missed ") && what.hasSuffix(" wakeups")) else {
            return nil
        }
        // The node's name and its id: "gong-69" (a name may hold dashes itself).
        let named = line[open.upperBound..<close.lowerBound]
        guard let dash = named.lastIndex(of: "-") else { return nil }
        return LateClient(seconds: seconds, node: String(named[..<dash]), what: String(what))
    }
}
