import GongCore

/// How old the facts in a timing report of PipeWire's PulseAudio server (pipewire-pulse) may be
/// when it is stamped, and so how much looser gong's client must read them there than on
/// PulseAudio.
///
/// The server stamps a report with the moment it answers, but the read index (and the sink
/// latency) in it are those of the graph's last cycle: the read index moves in whole quanta, and
/// a report is up to one quantum stale, more the larger the graph's quantum (a stream alone on a
/// sink lets it grow to its largest). Read as tightly as PulseAudio's, the stale reports look
/// like audio lost: the device clock would move the session on by it and put every later cue
/// that far early, and a take-back trusting such a report can rewrite frames the server has
/// already read, which it drops unreported. What was seen: bench/RESULTS.md, "The routes, as
/// the README gave them".
///
/// The quantum is not in the protocol, but the server bounds it in the stream's own properties:
/// the graph never runs a larger quantum than the smallest latency a stream in it asks for
/// (`node.latency`, which pipewire-pulse derives from the stream's buffer: 6000/48000 for
/// gong's 500 ms in four periods), and never one above `clock.quantum-limit` (8192 frames by
/// default). (A quantum forced larger by the user, `clock.force-quantum`, is the exception this
/// cannot see.)
public enum PulseReportAge {
    /// PipeWire's default `clock.quantum-limit`, in frames: the bound when the server says none.
    public static let defaultQuantumLimitFrames: Int64 = 8192

    /// Whether the server is PipeWire's PulseAudio server, from its own name for itself
    /// ("PulseAudio (on PipeWire 0.3.65)"; PulseAudio says "pulseaudio").
    public static func isPipeWire(serverName: String?) -> Bool {
        serverName?.contains("PipeWire") ?? false
    }

    /// The longest a report of the server may lag behind its stamp (nanoseconds): nil on
    /// PulseAudio, whose reports are measured when stamped; on pipewire-pulse one quantum at
    /// most, bounded by the stream's `node.latency` ("N/D" seconds) and the graph's
    /// `clock.quantum-limit` (frames at the graph's rate, taken as `node.latency`'s or else the
    /// stream's `rate`), whichever is smaller.
    public static func maximumNanoseconds(serverName: String?, properties: [String: String], rate: Int) -> Int64? {
        guard isPipeWire(serverName: serverName) else { return nil }
        let latency = properties["node.latency"].flatMap(fraction)
        let graphRate = latency.map(\.denominator) ?? Int64(rate)
        let limitFrames = properties["clock.quantum-limit"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        let limit = FrameTime.nanoseconds(ofFrames: limitFrames ?? defaultQuantumLimitFrames, rate: graphRate)
        guard let latency else { return limit }
        return min(limit, FrameTime.nanoseconds(ofFrames: latency.numerator, rate: latency.denominator))
    }

    /// "6000/48000" as its two whole positive numbers; nil for anything else.
    private static func fraction(_ text: String) -> (numerator: Int64, denominator: Int64)? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let numerator = Int64(parts[0]), let denominator = Int64(parts[1]), numerator > 0,
            denominator > 0
        else { return nil }
        return (numerator, denominator)
    }
}
