import Foundation
import GongAudio
import GongCore
import GongKit

/// How live notices are written when there is no live view: one plain line per event, or one
/// JSON object per line for tools.
enum NoticeFormat {
    static func line(_ notice: LiveNotice, pattern: String, at date: Date = Date()) -> String? {
        let time = timestamp(date)
        let text: String
        switch notice {
        case .started(let device, let rate, let channels, let format, let latency):
            text = "playing on \(device): \(rate) Hz, \(channels == 1 ? "mono" : "stereo"), \(format), \(String(format: "%.1f", latency)) ms latency"
        case .firstFrameAudible:
            return nil
        case .phaseBegan(let name, let cycle, let count, let length, _):
            text = "\(name) began (cycle \(cycle)/\(count), \(DurationText.format(seconds: length)))"
        case .cue(let sound, let late, let off, _):
            text = sound + (late == 0 ? "" : " (\(late) frames late after lost audio)")
                + (off.map { " (heard \($0) frames off its frame by the device's clock)" } ?? "")
        case .paused: text = "paused"
        case .resumed: text = "resumed"
        case .skipped(let seconds, _): text = "skipped \(DurationText.format(seconds: seconds))"
        case .stopping: text = "stopping: the end cue rings out"
        case .underrun(let lost, _): text = "xrun: \(lost) frames lost, recovered; later cues stay on schedule"
        case .suspendRecovered(let paused, _):
            text = paused ? "device suspended by the system; recovered, paused — press space to resume" : "device suspended by the system; recovered"
        case .deviceLost(let message, _): text = "device lost (\(message)); paused, retrying"
        case .deviceBack(let resumed, _): text = resumed ? "device back; resumed" : "device back; paused — press space to resume"
        case .priorityRefused(let realtime, let message):
            text = "\(realtime ? "real-time" : "raised") priority refused (\(message)); playing at normal priority"
        case .finished: return nil
        case .failed(let message): text = "failed: \(message)"
        case .ignored(let refusal): text = "\(refusal.input.rawValue) ignored: \(situation(refusal.from))"
        case .internalError(let refusal):
            text = "internal error: the audio reported \(refusal.input.rawValue) while the session was \(refusal.from.rawValue), which it does not accept (please report this)"
        }
        return "\(time) \(pattern): \(text)"
    }

    static func json(_ notice: LiveNotice, pattern: String, at date: Date = Date()) -> String {
        var object: [String: Any] = ["time": timestamp(date), "pattern": pattern, "monotonic": MonotonicTime.now().seconds]
        /// The session frame, and when it is heard (left out when the device gives no time).
        func place(_ moment: SessionMoment) {
            object["frame"] = moment.sessionFrame
            if let audible = moment.audibleSeconds { object["audible"] = audible }
        }
        switch notice {
        case .started(let device, let rate, let channels, let format, let latency):
            object["type"] = "started"; object["device"] = device; object["rate"] = rate
            object["channels"] = channels; object["format"] = format; object["latencyMs"] = latency
        case .firstFrameAudible(let seconds):
            object["type"] = "firstFrameAudible"; object["audible"] = seconds
        case .phaseBegan(let name, let cycle, let count, let length, let at):
            object["type"] = "phaseBegan"; object["phase"] = name; object["cycle"] = cycle; object["cycles"] = count; object["seconds"] = length
            place(at)
        case .cue(let sound, let late, let off, let at):
            object["type"] = "cue"; object["sound"] = sound; object["lateFrames"] = late; place(at)
            if let off { object["offFrames"] = off }
        case .paused(let at): object["type"] = "paused"; place(at)
        case .resumed(let at): object["type"] = "resumed"; place(at)
        case .skipped(let seconds, let at): object["type"] = "skipped"; object["seconds"] = seconds; place(at)
        case .stopping: object["type"] = "stopping"
        case .underrun(let lost, let at): object["type"] = "xrun"; object["lostFrames"] = lost; place(at)
        case .suspendRecovered(let paused, let at): object["type"] = "suspendRecovered"; object["paused"] = paused; place(at)
        case .deviceLost(let message, let at): object["type"] = "deviceLost"; object["message"] = message; place(at)
        case .deviceBack(let resumed, let at): object["type"] = "deviceBack"; object["resumed"] = resumed; place(at)
        case .priorityRefused(let realtime, let message):
            object["type"] = "priorityRefused"; object["priority"] = realtime ? "realtime" : "raised"; object["message"] = message
        case .failed(let message): object["type"] = "failed"; object["message"] = message
        case .ignored(let refusal):
            object["type"] = "ignored"; object["command"] = refusal.input.rawValue; object["state"] = refusal.from.rawValue
            object["message"] = situation(refusal.from)
        case .internalError(let refusal):
            object["type"] = "internalError"; object["input"] = refusal.input.rawValue; object["state"] = refusal.from.rawValue
            object["message"] = refusal.description
        case .finished(let summary, let timing):
            object["type"] = "finished"
            object["plannedSeconds"] = summary.plannedSeconds; object["playedSeconds"] = summary.playedSeconds
            object["cycles"] = summary.cyclesCompleted; object["phases"] = summary.phasesCompleted
            object["pauses"] = summary.pauses; object["skips"] = summary.skips; object["xruns"] = summary.xruns
            object["suspends"] = summary.suspends
            object["deviceLosses"] = summary.deviceLosses; object["cues"] = summary.cuesPlayed
            object["maxCueLatenessFrames"] = summary.maxCueLatenessFrames; object["stoppedEarly"] = summary.stoppedEarly
            switch HeardVerdict(summary: summary, timing: timing) {
            case .everyCueOnItsFrame: object["heard"] = "onFrame"
            case .offTheirFrames(let count, let worst, _): object["heard"] = "offFrame"; object["cuesOffFrame"] = count; object["worstOffFrames"] = worst
            case .roughReports: object["heard"] = "roughReports"
            case .audioLost: object["heard"] = "audioLost"
            case .unconfirmed(let deviceTimed): object["heard"] = "unconfirmed"; object["deviceTimed"] = deviceTimed
            }
            if timing.intervalsMeasured > 0 {
                var heard: [String: Any] = ["intervals": timing.intervalsMeasured, "maxDeviationMs": timing.maxDeviationSeconds * 1000,
                                            "meanDeviationMs": timing.meanAbsoluteDeviationSeconds * 1000]
                if let ppm = timing.deviceClockPPM, let jitter = timing.maxJitterSeconds {
                    heard["deviceClockPPM"] = ppm; heard["maxJitterMs"] = jitter * 1000
                }
                object["timing"] = heard
            }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    static func summary(_ summary: SessionSummary, timing: CueTiming) -> String {
        let ringOut = max(0, summary.playedSeconds - summary.plannedSeconds)
        var lines = ["\(summary.patternName) \(summary.stoppedEarly ? "stopped" : "finished"): played \(DurationText.format(seconds: summary.playedSeconds)) "
                     + "(planned \(DurationText.format(seconds: summary.plannedSeconds))\(summary.stoppedEarly ? "" : ", then \(DurationText.format(seconds: ringOut)) ring-out"))"]
        lines.append("  cycles \(summary.cyclesCompleted) of \(summary.plannedCycles) · phases \(summary.phasesCompleted) · pauses \(summary.pauses) · skips \(summary.skips)"
                     + " · xruns \(summary.xruns) · suspends \(summary.suspends) · device losses \(summary.deviceLosses)")
        lines.append("  cues \(summary.cuesPlayed), " + heard(HeardVerdict(summary: summary, timing: timing), summary: summary))
        if timing.intervalsMeasured > 0 {
            let count = timing.intervalsMeasured
            var heard = "  heard (device clock): \(count) interval\(count == 1 ? "" : "s") between cues, "
                + String(format: "within %.3f ms of schedule (mean %.3f ms)", timing.maxDeviationSeconds * 1000, timing.meanAbsoluteDeviationSeconds * 1000)
            if let ppm = timing.deviceClockPPM, let jitter = timing.maxJitterSeconds {
                heard += String(format: "; the device runs %+.0f ppm against the system clock, and at its own rate within %.3f ms", ppm, jitter * 1000)
            }
            lines.append(heard)
        }
        return lines.joined(separator: "\n")
    }

    /// What the verdict lets the summary say, and no more.
    static func heard(_ verdict: HeardVerdict, summary: SessionSummary) -> String {
        switch verdict {
        case .everyCueOnItsFrame(let jitter):
            return String(format: "every one heard on its frame (by the device's clock, within %.3f ms)", jitter * 1000)
        case .offTheirFrames(let count, let worst, let ppm):
            var text = "\(count) heard off their frames, the worst by \(worst) frames"
            if let ppm, abs(ppm) > CueTiming.plausiblePPM {
                text += String(format: "; the device clock measured %+.0f ppm, which no device runs at: audio was lost unreported", ppm)
            }
            return text
        case .roughReports(let jitter):
            return String(format: "each heard within %.1f ms of its frame: the device's timing reports vary by that much, too much to confirm the frame", jitter * 1000)
        case .audioLost(let xruns, let frames, let suspends, let losses):
            var parts: [String] = []
            if xruns > 0 { parts.append("\(xruns) xrun\(xruns == 1 ? "" : "s") lost \(frames) frames") }
            if suspends > 0 { parts.append("\(suspends) suspend\(suspends == 1 ? "" : "s")") }
            if losses > 0 { parts.append("the device was lost \(losses == 1 ? "once" : "\(losses) times")") }
            let late = summary.maxCueLatenessFrames > 0 ? "; the latest cue \(summary.maxCueLatenessFrames) frames late" : ""
            return "audio was lost (" + parts.joined(separator: ", ") + "): cues after it stay on schedule, one sounding across it was heard off its frame" + late
        case .unconfirmed(deviceTimed: false):
            return "each rendered on its frame (the device gave no timing to confirm when they were heard)"
        case .unconfirmed(deviceTimed: true):
            return "each rendered on its frame (too few were heard in a row, with no pause, skip or stop between, to confirm it by the device's clock)"
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
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
