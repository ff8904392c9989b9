/// The patterns that ship with gong. Each is an ordinary `Pattern`; a pattern file can express
/// every one of them, and every override applies to them as to a file.
public enum BuiltInPatterns {
    public static let all: [Pattern] = [twoPhase, box, fourSevenEight, resonant, coherent, sigh, interval]

    public static func named(_ name: String) -> Pattern? {
        all.first { $0.name == name }
    }

    /// The classic sit: a start gong, meditation, a triple gong, reflection, an end gong that
    /// rings out fully before the session ends.
    public static let twoPhase = Pattern(
        name: "two-phase",
        summary: "start gong, 15 min meditation, triple gong, 3 min reflection, end gong",
        phases: [
            Phase("meditation", length: 900, cue: Cue("gong")),
            Phase("reflection", length: 180, cue: Cue("gong-triple"))
        ],
        length: .cycles(1),
        endCue: Cue("gong-end"))

    /// Box breathing: four equal sides of 4 s.
    public static let box = Pattern(
        name: "box",
        summary: "box breathing: inhale 4s, hold 4s, exhale 4s, hold 4s, for 5 min",
        phases: breath(inhale: 4, holdIn: 4, exhale: 4, holdOut: 4),
        length: .duration(300),
        endCue: Cue("bowl"))

    /// Andrew Weil's relaxing breath: inhale 4, hold 7, exhale 8, four breaths.
    public static let fourSevenEight = Pattern(
        name: "4-7-8",
        summary: "relaxing breath: inhale 4s, hold 7s, exhale 8s, 4 breaths",
        phases: breath(inhale: 4, holdIn: 7, exhale: 8, holdOut: nil),
        length: .cycles(4),
        endCue: Cue("bowl"))

    /// Resonance-frequency breathing at 5.5 breaths a minute, inhale equal to exhale.
    public static let resonant = Pattern(
        name: "resonant",
        summary: "resonant breathing: 5.5 breaths/min, inhale:exhale 1:1, for 10 min",
        phases: breath(inhale: 1, holdIn: nil, exhale: 1, holdOut: nil),
        length: .duration(600),
        pace: Pace(bpm: Rational(11, 2)!),
        endCue: Cue("bowl"))

    /// Coherent breathing: 6 breaths a minute, 5 s in, 5 s out.
    public static let coherent = Pattern(
        name: "coherent",
        summary: "coherent breathing: 6 breaths/min, inhale 5s, exhale 5s, for 10 min",
        phases: breath(inhale: 5, holdIn: nil, exhale: 5, holdOut: nil),
        length: .duration(600),
        endCue: Cue("bowl"))

    /// Cyclic physiological sigh: a full inhale, a short top-up inhale, a long exhale.
    public static let sigh = Pattern(
        name: "sigh",
        summary: "physiological sigh: inhale 2s, top-up inhale 1s, long exhale 6s, for 5 min",
        phases: [
            Phase("inhale", length: 2, cue: Cue("chime", gainDB: -6), motion: .inhale),
            Phase("top-up", length: 1, cue: Cue("click", gainDB: -3), motion: .inhale),
            Phase("exhale", length: 6, cue: Cue("woodblock", gainDB: -3), motion: .exhale)
        ],
        length: .duration(300),
        endCue: Cue("bowl"))

    /// A bowl every 5 minutes for 30 minutes, then the end gong; its phase `bell` and its length
    /// are the parts meant to be changed (the command line says how: `PatternsCommand`).
    public static let interval = Pattern(
        name: "interval",
        summary: "a bowl every 5 min for 30 min, then the end gong",
        phases: [Phase("bell", length: 300, cue: Cue("bowl"))],
        length: .duration(1800),
        endCue: Cue("gong-end"))

    /// The usual breath cues: a soft chime to breathe in, a woodblock to breathe out, a click to hold.
    private static func breath(inhale: Rational, holdIn: Rational?, exhale: Rational, holdOut: Rational?) -> [Phase] {
        var phases = [Phase("inhale", length: inhale, cue: Cue("chime", gainDB: -6), motion: .inhale)]
        if let holdIn { phases.append(Phase("hold", length: holdIn, cue: Cue("click", gainDB: -3), motion: .hold)) }
        phases.append(Phase("exhale", length: exhale, cue: Cue("woodblock", gainDB: -3), motion: .exhale))
        if let holdOut { phases.append(Phase("rest", length: holdOut, cue: Cue("click", gainDB: -3), motion: .hold)) }
        return phases
    }
}
