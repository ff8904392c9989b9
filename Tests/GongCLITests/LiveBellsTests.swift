import Foundation
import Glibc
import Testing

/// `gong bells` heard live: three bells a minute apart (`--every 1m`), recorded from the sink's
/// monitor. About three minutes a server: a long round, in `LongRoundPulseTests` (`make test-long`).
extension LongRoundPulseTests {
    /// Each bell is heard on its second, by a clock that is not gong's: the recorder stamps each
    /// block of the sink's monitor with CLOCK_REALTIME as it arrives (`StampedMonitorRecorder`),
    /// and the earliest arrivals around each onset give the line from the recording's frames to
    /// the system's clock, its slope the sink's own drift, measured there and taken out
    /// (`SinkClock`). The onset's instant on that line must be within `heardWithinMs` of a whole
    /// second: 2 ms, not the 1 ms gong claims, because that is what the witness itself can be
    /// trusted to (bench/RESULTS.md, "Bells through the day": most bells within 0.1 ms, one at
    /// −1.05 ms on a loaded machine, where the monitor gained frames around the onset). gong's
    /// own account (`offMs`, by the device's clock) is held to its 1 ms, and printed beside the
    /// recording's.
    ///
    /// Each bell is its own stream, opened 4 s ahead: a stream's first frame is heard a little
    /// after it starts, and the session is moved on by as much once the device says so, or every
    /// bell would be that much late. About three minutes each.
    static let heardWithinMs = 2.0
    /// Three bells, two intervals, as the issue asks.
    static let bellsHeard = 3

    @Test(arguments: SoundServer.allCases)
    func bellsAMinuteApartAreHeardWithin2msOfTheirSecondsOnTheSinksClock(server: SoundServer) throws {
        try server.require()
        // The first bell at the next minute: started at least 5 s before it, so it is not
        // skipped as too soon.
        let second = Int(Date().timeIntervalSince1970) % 60
        if second > 54 { sleep(UInt32(61 - second)) }
        let recorder = try StampedMonitorRecorder(server: server)
        let device = server == .pipeWire ? "pipewire" : "pulse"
        let (process, out) = try startGong(
            ["bells", "--every", "1m", "--device", device, "--json"],
            // HOME and XDG_CONFIG_HOME as they are: libpulse finds a server started without a
            // runtime directory under them, as the other live tests' gong does.
            environment: server.environment)
        defer { if process.isRunning { process.terminate() } }
        var output = ""
        while GongEvents(output).all("bell").count < Self.bellsHeard {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            output += String(decoding: data, as: UTF8.self)
        }
        process.terminate()
        output += String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let (samples, arrivals) = recorder.stop()
        let events = GongEvents(output)
        let bells = events.all("bell")
        let count = Self.bellsHeard
        #expect(bells.count == count && bells.allSatisfy { $0["outcome"] as? String == "rung" }, "\(output)")
        let off = bells.compactMap { $0["offMs"] as? Double }
        #expect(
            off.count == count && off.allSatisfy { abs($0) < 1 }, "gong says \(off) ms off their seconds: \(output)")
        let heard = onsets(in: samples)
        #expect(heard.count == count, "onsets \(heard)")
        // The recording's length against the system's clock over the whole run, for the record
        // (a PulseAudio null sink's monitor gains frames as streams join it; each bell is judged
        // on the line fitted around it).
        if let first = arrivals.first, let last = arrivals.last, last.seconds > first.seconds {
            let frames = Double(last.firstFrame - first.firstFrame)
            print(
                "\(server.testDescription) bells: the recording's frames ran"
                    + " \(((frames / 48000 / (last.seconds - first.seconds)) - 1) * 1e6) ppm fast over the run")
        }
        for (index, onset) in heard.enumerated() {
            let placement = SinkClock.place(
                frame: onset, in: arrivals, handing: server == .pipeWire ? .afterItsLastFrame : .fromItsFirstFrame)
            #expect(placement != nil, "no arrivals around onset \(onset)")
            guard let placement else { continue }
            let told = index < off.count ? "\(off[index])" : "?"
            #expect(
                abs(placement.offSecondMs) <= Self.heardWithinMs,
                "bell \(index + 1) heard \(placement.offSecondMs) ms off its second by the recording (gong said \(told))"
            )
            print(
                "\(server.testDescription) bell \(index + 1): heard \(placement.offSecondMs) ms off its second by the"
                    + " recording, the sink \(placement.drift * 1e6) ppm fast there, \(placement.bins) bins, median block"
                    + " \(placement.medianLateness * 1000) ms late; gong said \(told) ms")
        }
    }
}
