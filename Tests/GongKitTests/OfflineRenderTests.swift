import Foundation
import GongAudio
import GongCore
import Testing

@testable import GongKit

/// The shipped bank, found the way `swift run gong` finds it.
let shippedBank = SoundBank(directories: [SoundBank.sourceTreeSounds])

final class ScratchDirectory {
    let path: String
    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("gong-kit-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
}

@Suite struct OfflineRenderTests {
    /// Renders through the whole pipeline to a float WAV, reads it back, and compares it sample
    /// for sample with an independent mix: each bank sound added at round(rate × t) of its cue.
    /// A cue one frame early or late, a cut tail or a missing cue would all show.
    static func checkAgainstReferenceMix(_ pattern: Pattern, rate: Int, channels: Int, expectedOnsets: [Int64]) throws {
        let scratch = try ScratchDirectory()
        var request = RenderRequest(pattern: pattern, outputPath: scratch.file("session.wav"))
        request.sampleRate = rate
        request.channels = channels
        request.encoding = .float32
        request.masterGainDB = -6
        request.blockFrames = 1000
        let report = try OfflineRender.run(request, bank: shippedBank)
        let rendered = try loadSound(path: request.outputPath)
        #expect(rendered.sampleRate == rate && rendered.channels == channels)

        let plan = try SessionPlan(pattern: pattern, sampleRate: rate, channels: channels, bank: shippedBank)
        let onsets = plan.timeline.cueOnsets
        #expect(onsets.map(\.frame) == expectedOnsets, "the schedule is the one computed independently")
        #expect(report.cues.map(\.sessionFrame) == expectedOnsets, "every cue started on its frame")
        let length = Int(plan.totalFrames)
        #expect(rendered.frames == length, "the file ends exactly when the last tail has rung out")

        var reference = [Float](repeating: 0, count: length * channels)
        for (frame, trigger) in onsets {
            let sound = plan.sounds[Int(trigger.sound)]
            for soundFrame in 0..<sound.frames {
                for channel in 0..<channels {
                    // A mono sound plays the same sample on every channel.
                    let sample = sound.samples[soundFrame * sound.channels + min(channel, sound.channels - 1)]
                    reference[(Int(frame) + soundFrame) * channels + channel] += sample * trigger.gain
                }
            }
        }
        let master = decibelsToGain(-6)
        var mismatches = 0
        var firstMismatch = -1
        for index in 0..<reference.count where rendered.samples[index] != reference[index] * master {
            mismatches += 1
            if firstMismatch < 0 { firstMismatch = index / channels }
        }
        #expect(mismatches == 0, "first mismatch at frame \(firstMismatch)")
    }

    @Test(arguments: [44100, 48000, 96000])
    func resonantBreathingWithRealSoundsMatchesTheReferenceMix(rate: Int) throws {
        var pattern = BuiltInPatterns.resonant
        pattern.length = .duration(120)
        // breath k/2 at k × 60/11 s
        let expected = (0..<22).map { k in (2 * Int64(rate) * Int64(k) * 60 + 11) / 22 } + [120 * Int64(rate)]
        try Self.checkAgainstReferenceMix(pattern, rate: rate, channels: 1, expectedOnsets: expected)
    }

    @Test func twoPhaseTailsRingAcrossTheBoundaryAndTheEndGongRingsOut() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.phases[0].length = 20  // the 30 s start gong is still ringing when the triple gong comes
        pattern.phases[1].length = 10
        try Self.checkAgainstReferenceMix(
            pattern, rate: 48000, channels: 2, expectedOnsets: [0, 20 * 48000, 30 * 48000])
    }

    @Test func aRampingSessionMatchesTheReferenceMix() throws {
        var pattern = BuiltInPatterns.resonant
        pattern.pace = Pace(from: 6, to: Rational(9, 2)!, over: 60)
        pattern.length = .duration(90)
        let timeline = try Timeline(pattern: pattern, sampleRate: 44100)
        try Self.checkAgainstReferenceMix(
            pattern, rate: 44100, channels: 1, expectedOnsets: timeline.cueOnsets.map(\.frame))
    }

    @Test func theSummaryRecordsPlannedAndPlayedTimeCyclesAndPhases() throws {
        let scratch = try ScratchDirectory()
        var pattern = BuiltInPatterns.box
        pattern.length = .cycles(3)
        let report = try OfflineRender.run(
            RenderRequest(pattern: pattern, outputPath: scratch.file("box.flac")), bank: shippedBank)
        #expect(report.summary.plannedCycles == 3 && report.summary.cyclesCompleted == 3)
        #expect(report.summary.phasesCompleted == 12)
        #expect(report.summary.plannedSeconds == 48)
        #expect(report.summary.playedSeconds > 48 + 30, "the end bowl rang out")
        #expect(report.summary.maxCueLatenessFrames == 0)
        #expect(try loadSound(path: scratch.file("box.flac")).channels == 2)
    }

    @Test func anUnknownCueSoundIsNamedWithWhereItIsUsedAndWhatExists() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.phases[1].cue = Cue("gongg")
        #expect(throws: GongError.self) {
            try SessionPlan(pattern: pattern, sampleRate: 48000, channels: 2, bank: shippedBank)
        }
        do {
            _ = try SessionPlan(pattern: pattern, sampleRate: 48000, channels: 2, bank: shippedBank)
        } catch {
            #expect(
                error.description
                    == "phases[1].cue (reflection): unknown sound \"gongg\"; use one of bowl, brown-noise, chime, click, gong, gong-end, gong-triple, woodblock, or a path to a sound file"
            )
        }
    }

    @Test func aFailedRenderLeavesAnExistingFileUntouchedAndNoPartialFile() throws {
        let scratch = try ScratchDirectory()
        let target = scratch.file("keep.wav")
        try "precious".write(toFile: target, atomically: true, encoding: .utf8)
        let broken = scratch.file("broken.wav")
        try "not audio".write(toFile: broken, atomically: true, encoding: .utf8)
        var pattern = BuiltInPatterns.twoPhase
        pattern.endCue = Cue(broken)
        #expect(throws: GongError.self) {
            try OfflineRender.run(RenderRequest(pattern: pattern, outputPath: target), bank: shippedBank)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted() == ["broken.wav", "keep.wav"])
    }

    /// The file a render writes as it goes is its own; a failure names the one asked for, as
    /// data, and never a path rewritten inside the words.
    @Test func aFileThatCannotBeCreatedIsTheOneAskedForAsData() throws {
        let target = "/nonexistent-gong-dir/x.wav"
        do {
            _ = try OfflineRender.run(
                RenderRequest(pattern: BuiltInPatterns.box, outputPath: target), bank: shippedBank)
            Issue.record("rendered to \(target)")
        } catch {
            guard case .output(let failure) = error else {
                Issue.record("not an output error: \(error)")
                return
            }
            #expect(failure.path == target)
            #expect(failure.kind == .cannotCreate)
            #expect(
                error.description == "cannot create '\(target)': directory '/nonexistent-gong-dir' does not exist")
        }
    }

    /// An open sit has no end to render to; what would give it one comes as data, in words that
    /// name no flag (the command line names its own).
    @Test func anOpenSitIsNoRenderAndSaysWhatWouldGiveItAnEnd() throws {
        var pattern = BuiltInPatterns.twoPhase
        pattern.length = .open
        let scratch = try ScratchDirectory()
        do {
            _ = try OfflineRender.run(
                RenderRequest(pattern: pattern, outputPath: scratch.file("open.wav")), bank: shippedBank)
            Issue.record("an open sit rendered")
        } catch {
            guard case .pattern(let failure) = error else {
                Issue.record("not a pattern error: \(error)")
                return
            }
            #expect(failure.remedy == .cyclesOrDuration)
            #expect(
                failure.description
                    == "length = \"open\": an open sit ends when it is stopped, and a render cannot be; use a number of cycles or a duration"
            )
        }
    }

    @Test func everyShippedSoundStartsOnItsStrikeAndEndsInSilence() throws {
        let names = shippedBank.availableSounds().map(\.name)
        #expect(names == ["bowl", "brown-noise", "chime", "click", "gong", "gong-end", "gong-triple", "woodblock"])
        // A bed loops under the session instead of ringing out: it neither strikes nor fades.
        for (name, path, _) in shippedBank.availableSounds() where name != "brown-noise" {
            let sound = try loadSound(path: path)
            #expect(abs(sound.samples[0]) >= 1e-3, "\(name) starts on its strike")
            #expect(sound.samples.last == 0, "\(name) fades to silence")
            #expect(sound.sampleRate == 48000)
        }
    }
}
