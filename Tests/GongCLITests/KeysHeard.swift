import Glibc
import Testing

/// When a key a person pressed was heard, judged on a recording's own clock — a tap's cycle
/// times (`TapRecording.serverSeconds(atFrame:)`) or a PulseAudio sink's timing (`SinkClock`) —
/// never on gong's `audible`, which the tests then hold to these. All times are seconds of
/// CLOCK_MONOTONIC, the clock the tests read their key presses on.
enum KeysHeard {
    /// How long after a pause key the ear had the pause: the cue it took back was due then,
    /// `interval` after the last sound that began before the key, and no sound began from the
    /// key to `until` (the resume key). Nil if one did, or none began before the key.
    static func pause(pressed: Double, until: Double, onsets: [Double], interval: Double) -> Double? {
        guard let last = onsets.last(where: { $0 < pressed }), !onsets.contains(where: { $0 >= pressed && $0 < until })
        else { return nil }
        return last + interval - pressed
    }

    /// How long after a key that starts a sound (a skip) the first sound after it began. Nil if
    /// none did.
    static func sound(after pressed: Double, onsets: [Double]) -> Double? {
        onsets.first { $0 >= pressed }.map { $0 - pressed }
    }

    /// What gong says of a pause and its resume: when each was heard (`audible`), and the frames
    /// its schedule left between the resume and the next cue (the rest of the tick the pause
    /// stopped in; the recording holds those frames exact elsewhere).
    struct Told {
        var paused: Double?
        var resumed: Double?
        var resumeToNextCue: Int?

        init(_ events: EventReader) {
            paused = events.last("paused")?["audible"] as? Double
            resumed = events.last("resumed")?["audible"] as? Double
            let resumedAt = events.last("resumed")?["frame"] as? Int
            let next = events.all("cue").compactMap { $0["frame"] as? Int }.first { $0 > resumedAt ?? .max }
            resumeToNextCue = resumedAt.flatMap { at in next.map { $0 - at } }
        }
    }

    /// The pause tests' verdicts, woodblocks a second apart and a pause pressed just before one,
    /// on the recording's clock (`onsets`, each sound's start there; nil where it could not be
    /// placed): the pause and the resume are each heard within `within` seconds of the key, and
    /// gong's own `audible` of each agrees. A pause is heard as the woodblock it took back not
    /// sounding: by the moment it was due. The resume in silence is heard as the session going
    /// on: the woodblock after it, less the frames gong's schedule put before it; gong's word for
    /// it must be within `agreeing` seconds of that, and a cycle (`cycleSeconds`) more if that
    /// woodblock began just after a cycle the recorder missed (`placed` false: it may have begun
    /// in the hole), and `untoldLater` seconds more early where the server may have moved all
    /// that followed later without a word to gong (pipewire-pulse's sink playing cycles without
    /// its stream: what PipeWire logged of them). Returns what was found, for the test's print.
    static func judged(
        pausePressed: Double, resumePressed: Double, onsets: [(seconds: Double?, placed: Bool)], told: Told,
        clock: String, within: Double = 0.25, agreeing: Double, cycleSeconds: Double = 0, untoldLater: Double = 0
    ) -> String {
        let placed = onsets.compactMap(\.seconds)
        #expect(placed.count == onsets.count, "a sound not placed on \(clock) clock: \(onsets)")
        let pause = Self.pause(pressed: pausePressed, until: resumePressed, onsets: placed, interval: 1)
        let next = onsets.first { ($0.seconds ?? 0) >= resumePressed }
        let resume = told.resumeToNextCue.flatMap { ahead in
            next?.seconds.map { $0 - resumePressed - Double(ahead) / 48000 }
        }
        let agreeing = agreeing + (next?.placed == false ? cycleSeconds : 0)
        let toldPause = told.paused.map { $0 - pausePressed }
        let toldResume = told.resumed.map { $0 - resumePressed }
        func seconds(_ value: Double?) -> String { value.map { "\($0)" } ?? "never" }
        let found =
            "by \(clock) clock the pause was heard \(seconds(pause)) s after the key (the woodblock it took back"
            + " due then), the resume \(seconds(resume)) s after (the next woodblock less"
            + " \(told.resumeToNextCue ?? 0) frames); gong told \(seconds(toldPause)) and \(seconds(toldResume)) s"
        #expect(
            pause.map { $0 > 0 && $0 < within } == true && resume.map { $0 > 0 && $0 < within } == true,
            "not both within \(within) s: \(found)")
        #expect(
            toldPause.map { told in pause.map { told > 0 && told <= $0 } == true } == true,
            "gong told the pause heard before the key, or after the woodblock it took back was due: \(found)")
        #expect(
            toldResume.map { told in resume.map { told - $0 < agreeing && $0 - told < agreeing + untoldLater } == true }
                == true,
            "gong's resume more than \(agreeing) s off (\(untoldLater) s more early): \(found)")
        return found
    }

    /// CLOCK_REALTIME less CLOCK_MONOTONIC now, in seconds: moves a PulseAudio sink's timing
    /// (the system's clock) onto the key presses'.
    static func realtimeLessMonotonic() -> Double { offset(of: CLOCK_REALTIME, from: CLOCK_MONOTONIC) }

    /// Clock `clock` less clock `reference` now, in seconds. Read as the closest of a few tries, so a
    /// preemption between the reads does not count.
    static func offset(of clock: clockid_t, from reference: clockid_t) -> Double {
        func seconds(_ clock: clockid_t) -> Double {
            var now = timespec()
            clock_gettime(clock, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        let tries = (0..<5).map { _ in
            let (before, other, after) = (seconds(clock), seconds(reference), seconds(clock))
            return (spread: after - before, offset: (before + after) / 2 - other)
        }
        return tries.min { $0.spread < $1.spread }!.offset
    }
}
