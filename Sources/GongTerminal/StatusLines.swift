import GongCore

/// The live view as lines of text: a pure function of the status and the terminal's width, so
/// it can be tested without a terminal. No line is ever wider than `width` columns.
public enum StatusLines {
    public static func render(_ status: LiveStatus, width: Int) -> [String] {
        let width = max(20, width)
        var lines: [String] = []
        let cycle = status.cycleCount > 1 ? "  ·  cycle \(status.cycle) of \(status.cycleCount)" : ""
        lines.append("\(status.patternName)  ·  \(status.phaseName)\(cycle)")

        let barWidth = max(4, width - 8)
        if let startsIn = status.startsIn {
            lines.append("starting in \(DurationText.clock(seconds: startsIn))  ·  the start cue then")
        } else if status.isOpen {
            // Counting up, a clock shows whole seconds gone (the countdowns round up instead).
            let sat = DurationText.clock(seconds: status.sessionElapsed.rounded(.down))
            lines.append("\(sat) sat  ·  open-ended: q ends it with the end cue")
        } else {
            let phaseLeft = max(0, status.phaseLength - status.phaseElapsed)
            let sessionLeft = max(0, status.sessionLength - status.sessionElapsed)
            lines.append(
                "\(DurationText.clock(seconds: phaseLeft)) left in \(status.phaseName)  ·  \(DurationText.clock(seconds: sessionLeft)) left in the session"
            )
            let sessionFraction = status.sessionLength > 0 ? status.sessionElapsed / status.sessionLength : 0
            lines.append(bar(sessionFraction, width: barWidth) + " " + percent(sessionFraction))
        }

        if let breath = breathFraction(status) {
            lines.append(pad(motionLabel(status.motion), to: 7) + bar(breath, width: barWidth - 7))
        }

        switch status.activity {
        case .preparing: lines.append("starting…")
        case .playing: lines.append("space pause · s skip · q stop")
        case .paused: lines.append("paused — space to resume · s skip · q stop")
        case .completing: lines.append("ringing out…  (Ctrl-C again to stop at once)")
        case .waitingForDevice(let message): lines.append("waiting for the audio device: \(message)")
        }
        return lines.map { fit($0, width: width) }
    }

    /// How long until `render` would draw something different while the session plays on: a
    /// clock ticks, a bar grows by an eighth of a cell, the percentage moves. The live view sleeps
    /// that long — 1 s at most, 20 ms at least — rather than redrawing at a fixed rate.
    public static func secondsUntilChange(_ status: LiveStatus, width: Int) -> Double {
        guard status.activity == .playing else { return 1 }
        let barWidth = max(4, max(20, width) - 8)
        var soonest = 1.0
        /// The clocks round up, so each changes as its time left crosses a whole second.
        func untilWholeSecond(_ left: Double) -> Double {
            let fraction = left - left.rounded(.down)
            return fraction > 0 ? fraction : 1
        }
        /// A quantity that grows from 0 to `length` in `steps` steps changes at the next step.
        func untilNextStep(elapsed: Double, length: Double, steps: Int) -> Double {
            guard length > 0, elapsed < length else { return 1 }
            let step = length / Double(steps)
            return (elapsed / step).rounded(.down) * step + step - elapsed
        }
        if let startsIn = status.startsIn { return max(0.02, untilWholeSecond(startsIn) + 0.001) }
        // An open sit's clock counts up: it changes as the time sat crosses a whole second.
        if status.isOpen {
            return max(0.02, 1 - (status.sessionElapsed - status.sessionElapsed.rounded(.down)) + 0.001)
        }
        soonest = min(soonest, untilWholeSecond(max(0, status.phaseLength - status.phaseElapsed)))
        soonest = min(soonest, untilWholeSecond(max(0, status.sessionLength - status.sessionElapsed)))
        soonest = min(
            soonest, untilNextStep(elapsed: status.sessionElapsed, length: status.sessionLength, steps: barWidth * 8))
        soonest = min(soonest, untilNextStep(elapsed: status.sessionElapsed, length: status.sessionLength, steps: 100))
        if status.motion == .inhale || status.motion == .exhale {
            soonest = min(
                soonest,
                untilNextStep(elapsed: status.phaseElapsed, length: status.phaseLength, steps: (barWidth - 7) * 8))
        }
        return max(0.02, soonest + 0.001)
    }

    /// How full the breathing bar is: it fills over an inhale, empties over an exhale and holds
    /// where the breath is during a hold (full after an inhale, empty after an exhale).
    static func breathFraction(_ status: LiveStatus) -> Double? {
        let progress = status.phaseLength > 0 ? min(1, max(0, status.phaseElapsed / status.phaseLength)) : 0
        switch status.motion {
        case .inhale: return progress
        case .exhale: return 1 - progress
        case .hold: return status.previousMotion == .exhale ? 0 : 1
        case .still: return nil
        }
    }

    static func motionLabel(_ motion: BreathMotion) -> String {
        switch motion {
        case .inhale: "in"
        case .exhale: "out"
        case .hold: "hold"
        case .still: ""
        }
    }

    /// A bar with eighth-block resolution, so slow breaths move smoothly.
    static func bar(_ fraction: Double, width: Int) -> String {
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        let eighths = Int((clamped * Double(width * 8)).rounded(.down))
        let full = eighths / 8
        let partial = eighths % 8
        let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        var text = String(repeating: "█", count: full)
        if full < width {
            text += partial > 0 ? partials[partial] : "░"
            text += String(repeating: "░", count: width - full - 1)
        }
        return text
    }

    static func percent(_ fraction: Double) -> String {
        let value = Int((min(1, max(0, fraction.isFinite ? fraction : 0)) * 100).rounded(.down))
        return String(repeating: " ", count: value < 10 ? 2 : (value < 100 ? 1 : 0)) + "\(value)%"
    }

    static func pad(_ text: String, to width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    /// Cuts a line to `width` columns. Every character gong draws is one column wide.
    static func fit(_ line: String, width: Int) -> String {
        line.count <= width ? line : String(line.prefix(width - 1)) + "…"
    }
}
