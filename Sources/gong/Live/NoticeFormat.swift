import FoundationEssentials
import GongCore
import GongKit

/// How a live session's events are written for a person: one plain line each (JSON lines for
/// tools are `SessionEvent.jsonLine()`), and the summary at the end.
enum NoticeFormat {
    static func line(_ event: SessionEvent, pattern: String, at date: Date = Date()) -> String? {
        let time = timestamp(date)
        let text: String
        switch event.kind {
        case .started(_, let device, let rate, let channels, let format, let latency):
            text =
                "playing on \(device): \(rate) Hz, \(channels == 1 ? "mono" : "stereo"), \(format), \(Figure.fixed(latency, 1)) ms latency"
        case .firstFrameAudible, .finished, .cueAhead, .cuesWithdrawn:
            return nil
        case .phaseBegan(let name, let cycle, let count, let length):
            text = "\(name) began (cycle \(cycle)/\(count), \(DurationText.format(seconds: length)))"
        case .cue(let sound, let late, let off):
            text =
                sound + (late == 0 ? "" : " (\(late) frames late after lost audio)")
                + (off.map { " (heard \($0) frames off its frame by the device's clock)" } ?? "")
        case .cueHeardLate(let sound, let late):
            text = "\(sound) was heard \(late) frames late: audio was lost behind it after it was already played"
        case .paused: text = "paused"
        case .resumed: text = "resumed"
        case .skipped(let seconds): text = "skipped \(DurationText.format(seconds: seconds))"
        case .stopping: text = "stopping: the end cue rings out"
        case .gainChanged(let decibels): text = "volume \(Figure.general(decibels, signed: true)) dB"
        case .xrun(let lost, let stopped) where stopped > 0 && lost == 0:
            text =
                "xrun: the audio server's clock stood still for \(Figure.fixed(stopped * 1000, 1)) ms;"
                + " no frame lost, later cues on their frames, heard that much later"
        case .xrun(let lost, _): text = "xrun: \(lost) frames lost, recovered; later cues stay on schedule"
        case .suspendRecovered(let paused):
            text =
                paused
                ? "device suspended by the system; recovered, paused — press space to resume"
                : "device suspended by the system; recovered"
        case .deviceLost(let message, _, _): text = "device lost (\(message)); paused, retrying"
        case .deviceBack(let resumed):
            text = resumed ? "device back; resumed" : "device back; paused — press space to resume"
        case .priorityRefused(let priority, let message):
            text =
                "\(priority == .realtime ? "real-time" : "raised") priority refused (\(message)); playing at normal priority"
        case .failed(let message): text = "failed: \(message)"
        case .ignored(let command, let state): text = "\(command.rawValue) ignored: \(situation(state))"
        case .internalError(let input, let state):
            text =
                "internal error: the audio reported \(input.rawValue) while the session was \(state.rawValue), which it does not accept (please report this)"
        case .eventsLost(let count):
            text =
                "\(count) events from the audio were lost (this side fell behind taking them); what is shown is incomplete"
        }
        return "\(time) \(pattern): \(text)"
    }

    static func summary(_ report: SessionReport) -> String {
        var lines = [
            report.open
                ? "\(report.pattern) finished: sat \(DurationText.format(seconds: report.plannedSeconds)), open-ended "
                    + "(then \(DurationText.format(seconds: report.ringOutSeconds)) ring-out)"
                : "\(report.pattern) \(report.stoppedEarly ? "stopped" : "finished"): played \(DurationText.format(seconds: report.playedSeconds)) "
                    + "(planned \(DurationText.format(seconds: report.plannedSeconds))\(report.stoppedEarly ? "" : ", then \(DurationText.format(seconds: report.ringOutSeconds)) ring-out"))"
        ]
        lines.append(
            "  cycles \(report.cycles) of \(report.plannedCycles) · phases \(report.phases) · pauses \(report.pauses) · skips \(report.skips)"
                + " · xruns \(report.xruns) · suspends \(report.suspends) · device losses \(report.deviceLosses)")
        lines.append("  cues \(report.cues), " + heard(report))
        if let seed = report.seed { lines.append(seedLine(seed)) }
        if let timing = report.timing {
            let count = timing.intervals
            var heard =
                "  heard (device clock): \(count) interval\(count == 1 ? "" : "s") between cues, "
                + "within \(Figure.fixed(timing.maxDeviationMs, 3)) ms of schedule (mean \(Figure.fixed(timing.meanDeviationMs, 3)) ms)"
            if let ppm = timing.deviceClockPPM, let jitter = timing.maxJitterMs {
                heard +=
                    "; the device runs \(Figure.fixed(ppm, 0, signed: true)) ppm against the system clock, and at its own rate within \(Figure.fixed(jitter, 3)) ms"
            }
            lines.append(heard)
        }
        return lines.joined(separator: "\n")
    }

    /// How a live summary and a render say where random bells came from, so they can be rung again.
    static func seedLine(_ seed: UInt64) -> String {
        "  random bells drawn from seed \(seed) (--seed \(seed) rings them again)"
    }

    /// What the verdict lets the summary say, and no more.
    static func heard(_ report: SessionReport) -> String {
        switch report.heard {
        case .onFrame(let jitter):
            return "every one heard on its frame (by the device's clock, within \(Figure.fixed(jitter, 3)) ms)"
        case .offFrame(let count, let worst):
            var text = "\(count) heard off their frames, the worst by \(worst) frames"
            if let ppm = report.timing?.deviceClockPPM, abs(ppm) > CueTiming.plausiblePPM {
                text +=
                    "; the device clock measured \(Figure.fixed(ppm, 0, signed: true)) ppm, which no device runs at: audio was lost unreported"
            }
            return text
        case .roughReports(let jitter):
            return
                "each heard within \(Figure.fixed(jitter, 1)) ms of its frame: the device's timing reports vary by that much, too much to confirm the frame"
        case .audioLost:
            var parts: [String] = []
            if report.xruns > 0 {
                parts.append("\(report.xruns) xrun\(report.xruns == 1 ? "" : "s") lost \(report.lostFrames) frames")
            }
            if report.suspends > 0 { parts.append("\(report.suspends) suspend\(report.suspends == 1 ? "" : "s")") }
            if report.deviceLosses > 0 {
                parts.append(
                    "the device was lost \(report.deviceLosses == 1 ? "once" : "\(report.deviceLosses) times")")
            }
            let late =
                report.maxCueLatenessFrames > 0 ? "; the latest cue \(report.maxCueLatenessFrames) frames late" : ""
            return "audio was lost (" + parts.joined(separator: ", ")
                + "): cues after it stay on schedule, one sounding across it was heard off its frame" + late
        case .unconfirmed(deviceTimed: false):
            return "each rendered on its frame (the device gave no timing to confirm when they were heard)"
        case .unconfirmed(deviceTimed: true):
            return
                "each rendered on its frame (too few were heard in a row, with no pause, skip or stop between, to confirm it by the device's clock)"
        }
    }

    /// Why a command is not taken in this state, in the person's words.
    static func situation(_ state: SessionState.Kind) -> String {
        switch state {
        case .idle: "the session has not started"
        case .preparing: "the session is starting"
        case .active: "the session is playing"
        case .paused: "the session is paused"
        case .completing: "the end cue is ringing out (a second Ctrl-C cuts it)"
        case .completed: "the session is over"
        case .failed: "waiting for the device to come back (a stop ends the session)"
        }
    }

    private static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle().format(date)
    }
}
