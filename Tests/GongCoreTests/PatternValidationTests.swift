import GongCore
import Testing

@Suite struct PatternValidationTests {
    static func error(_ change: (inout Pattern) -> Void, base: Pattern = BuiltInPatterns.box) -> PatternError? {
        var pattern = base
        change(&pattern)
        do {
            _ = try Timeline(pattern: pattern, sampleRate: 48000)
            return nil
        } catch {
            return error
        }
    }

    @Test func emptyPhaseListIsRejected() {
        let error = Self.error { $0.phases = [] }
        #expect(error?.key == "phases")
        #expect(error?.description.contains("at least one phase") == true)
    }

    @Test func zeroNegativeAndTinyPhaseLengthsAreRejectedWithTheirKey() {
        #expect(Self.error { $0.phases[1].length = .zero }?.key == "phases[1].length")
        #expect(Self.error { $0.phases[1].length = Rational(-4) }?.description.contains("must be positive") == true)
        #expect(
            Self.error { $0.phases[2].length = Rational(1, 100)! }?.description
                == "phases[2].length = \"0.01s\": is too short; use a duration of at least 0.25s")
    }

    @Test func absurdLengthsAndCyclesAreRejected() {
        #expect(Self.error { $0.length = .cycles(0) }?.key == "cycles")
        #expect(
            Self.error { $0.length = .cycles(1_000_000_000) }?.description
                == "cycles = 1000000000: is out of range; use a whole number of cycles from 1 to 100000")
        #expect(Self.error { $0.length = .duration(Rational(86400 * 30)) }?.key == "duration")
        #expect(Self.error { $0.length = .duration(3) }?.description.contains("shorter than one cycle (16s)") == true)
        #expect(
            Self.error(
                {
                    $0.phases[0].length = 80000; $0.length = .cycles(3)
                }, base: BuiltInPatterns.twoPhase)?.description.contains("too long") == true)
    }

    @Test func duplicateAndEmptyNamesAreRejected() {
        #expect(
            Self.error { $0.phases[1].name = "inhale" }?.description.contains("another phase has this name") == true)
        #expect(Self.error { $0.phases[0].name = "" }?.key == "phases[0].name")
    }

    @Test func outOfRangeGainsAndRatesAreRejected() {
        #expect(Self.error { $0.phases[0].cue = Cue("gong", gainDB: .nan) }?.key == "phases[0].cue.gain")
        #expect(Self.error { $0.endCue = Cue("gong", gainDB: 40) }?.key == "end.gain")
        #expect(
            Self.error({ $0.pace = Pace(bpm: 600) }, base: BuiltInPatterns.resonant)?.description
                == "pace.bpm = 600: is out of range; use a rate from 0.5 to 60 breaths per minute")
        #expect(Self.error({ $0.pace = Pace(bpm: 0) }, base: BuiltInPatterns.resonant) != nil)
    }

    @Test func aFastRateThatMakesPhasesTooShortIsRejected() {
        var pattern = BuiltInPatterns.resonant
        pattern.phases[0].length = 1
        pattern.phases[1].length = 100
        pattern.pace = Pace(bpm: 20)
        #expect(throws: PatternError.self) { try Timeline(pattern: pattern, sampleRate: 48000) }
    }

    @Test func unsupportedSampleRatesAreRejected() {
        #expect(throws: PatternError.self) { try Timeline(pattern: BuiltInPatterns.box, sampleRate: 7) }
    }

    @Test func moreThanSixtyFourPhasesAreRejected() {
        let error = Self.error { $0.phases = (0...64).map { Phase("p\($0)", length: 1) } }
        #expect(error?.description == "phases = 65: too many phases; use at most 64")
    }

    @Test func aWarmUpIsNeitherNegativeNorLongerThanASession() {
        #expect(
            Self.error { $0.warmUp = Rational(-5) }?.description
                == "warmup = \"-5s\": must not be negative; use \(DurationText.allowed)")
        let tooLong = Self.error { $0.warmUp = PatternLimits.maxSessionSeconds.adding(1)! }
        #expect(tooLong?.key == "warmup")
        #expect(
            tooLong?.description.hasSuffix(": is longer than a session may be; use a total length up to 24h") == true)
    }

    @Test func aPhaseInSecondsIsNoLongerThanASession() {
        #expect(
            Self.error { $0.phases[0].length = PatternLimits.maxSessionSeconds.adding(1)! }?.key == "phases[0].length")
    }

    @Test func intervalBellsNeedFixedPhasesAndGapsFromASecondToADay() {
        let bell = IntervalBell(every: 60, cue: Cue("bowl"))
        #expect(
            Self.error({ $0.phases[0].bell = bell }, base: BuiltInPatterns.resonant)?.description
                == "phases[0].bell: interval bells need phases of fixed length; use bells in patterns without a breathing rate"
        )
        #expect(
            Self.error(
                { $0.phases[0].bell = IntervalBell(every: Rational(1, 2)!, cue: Cue("bowl")) },
                base: BuiltInPatterns.twoPhase)?.description
                == "phases[0].bell.every = \"0.5s\": is out of range; use a duration from 1s to 24h")
        #expect(
            Self.error({ $0.phases[0].bell = IntervalBell(every: 60, cue: Cue("")) }, base: BuiltInPatterns.twoPhase)?
                .key
                == "phases[0].bell.cue")
    }

    @Test func aRampLastsNoLongerThanASession() {
        let ramp = Pace(from: 6, to: Rational(9, 2)!, over: PatternLimits.maxSessionSeconds.adding(1)!)
        #expect(Self.error({ $0.pace = ramp }, base: BuiltInPatterns.resonant)?.key == "pace.over")
    }
}

@Suite struct PatternOverrideTests {
    @Test func setChangesTwoPhaseLengths() throws {
        var overrides = PatternOverrides()
        overrides.phaseLengths = [.init(phase: "meditation", seconds: 1200), .init(phase: "reflection", seconds: 300)]
        let pattern = try BuiltInPatterns.twoPhase.applying(overrides)
        #expect(pattern.phases.map(\.length) == [1200, 300])
    }

    @Test func setNamingNoPhaseListsThePhases() {
        var overrides = PatternOverrides()
        overrides.phaseLengths = [.init(phase: "medtation", seconds: 1200)]
        #expect(
            throws: PatternError(
                override: .phaseLength, value: "medtation", problem: "two-phase has no phase of that name",
                allowed: "one of meditation, reflection")
        ) {
            try BuiltInPatterns.twoPhase.applying(overrides)
        }
    }

    /// Flags are the command line's words: GongCore names the override, and its sentences never
    /// mention a flag an embedding program does not have.
    @Test func overrideErrorsNameTheOverrideAndNoFlag() {
        func failure(_ pattern: Pattern, _ change: (inout PatternOverrides) -> Void) -> PatternError? {
            var overrides = PatternOverrides()
            change(&overrides)
            do { _ = try pattern.applying(overrides); return nil } catch { return error }
        }
        let cases: [(PatternError?, PatternOverrides.Field)] = [
            (failure(BuiltInPatterns.twoPhase) { $0.phaseLengths = [.init(phase: "x", seconds: 60)] }, .phaseLength),
            (
                failure(BuiltInPatterns.twoPhase) { $0.phaseLengths = [.init(phase: "meditation", seconds: 0)] },
                .phaseLength
            ),
            (failure(BuiltInPatterns.twoPhase) { $0.pace = Pace(bpm: 6) }, .pace),
            (failure(BuiltInPatterns.twoPhase) { $0.ratio = [1, 2] }, .ratio),
            (failure(BuiltInPatterns.box) { $0.ratio = [1, 2, 3] }, .ratio),
            (
                failure(BuiltInPatterns.box) {
                    $0.cycles = 2; $0.duration = 60
                }, .cycles
            ),
            (failure(BuiltInPatterns.box) { $0.duration = 3 }, .duration),
            (failure(BuiltInPatterns.box) { $0.cues = [.init(target: "nowhere", sound: "bowl")] }, .cue),
            (
                failure(BuiltInPatterns.box) {
                    $0.open = true; $0.cycles = 2
                }, .open
            ),
            (failure(BuiltInPatterns.twoPhase) { $0.bedGainDB = -12 }, .bed),
            (failure(BuiltInPatterns.twoPhase) { $0.seed = 7 }, .seed)
        ]
        for (error, field) in cases {
            #expect(error?.override == field, "\(String(describing: error))")
            #expect(error?.location == nil)
            #expect(error.map { !$0.description.contains("--") } == true, "\(String(describing: error))")
        }
        #expect(throws: PatternError.self) { try PatternText.phaseLength("meditation") }
        do { _ = try PatternText.phaseLength("meditation") } catch { #expect(!error.description.contains("--")) }
    }

    /// Where the overrides that would do are themselves the answer, they come as data, and the
    /// words beside them name no flag.
    @Test func overridesThatWouldDoComeAsDataWithWordsThatNameNoFlag() {
        var open = PatternOverrides()
        open.open = true
        open.duration = 600
        var gain = PatternOverrides()
        gain.bedGainDB = -12
        for (overrides, remedy) in [(open, PatternError.Remedy.openAlone), (gain, .bedWithGain)] {
            do {
                _ = try BuiltInPatterns.twoPhase.applying(overrides)
                Issue.record("\(remedy): applied")
            } catch {
                #expect(error.remedy == remedy)
                #expect(error.allowed == remedy.description)
                #expect(!error.description.contains("--"), "\(error)")
            }
        }
    }

    @Test func bpmOnANonBreathingPatternIsAnErrorNotIgnored() {
        var overrides = PatternOverrides()
        overrides.pace = Pace(bpm: 6)
        #expect(throws: PatternError.self) { try BuiltInPatterns.twoPhase.applying(overrides) }
    }

    @Test func bpmRescalesABoxToTheRequestedRate() throws {
        var overrides = PatternOverrides()
        overrides.pace = Pace(bpm: 5)
        overrides.cycles = 3
        let timeline = try Timeline(pattern: BuiltInPatterns.box.applying(overrides), sampleRate: 48000)
        // 12 s breaths split in four equal sides of 3 s
        #expect(timeline.phaseBoundaries.prefix(5).map(\.frame) == [0, 144_000, 288_000, 432_000, 576_000])
    }

    @Test func aTwoPartRatioSetsInhaleAndExhaleAndKeepsTheBreathLength() throws {
        var overrides = PatternOverrides()
        overrides.ratio = [4, 6]
        overrides.cycles = 1
        let timeline = try Timeline(pattern: BuiltInPatterns.coherent.applying(overrides), sampleRate: 48000)
        #expect(timeline.phaseBoundaries.map(\.frame) == [0, 4 * 48000])
        #expect(timeline.plannedEndFrame == 10 * 48000)
    }

    @Test func ratioAndBpmTogetherGiveResonantFourToSix() throws {
        var overrides = PatternOverrides()
        overrides.ratio = [4, 6]
        overrides.pace = Pace(bpm: Rational(11, 2)!)
        overrides.cycles = 2
        let timeline = try Timeline(pattern: BuiltInPatterns.resonant.applying(overrides), sampleRate: 44100)
        // breath 120/11 s; inhale 0.4 of it = 48/11 s
        let expected: [Int64] = [0, 48, 120, 168].map { (44100 * $0 * 2 + 11) / 22 }
        #expect(timeline.phaseBoundaries.map(\.frame) == expected)
    }

    @Test func ratioWithTheWrongNumberOfPartsSaysWhatThePatternHas() {
        var overrides = PatternOverrides()
        overrides.ratio = [1, 2, 3]
        #expect(throws: PatternError.self) { try BuiltInPatterns.box.applying(overrides) }
    }

    @Test func cuesCanPointAtFilesAndCyclesAndDurationConflict() throws {
        var overrides = PatternOverrides()
        overrides.cues = [.init(target: "end", sound: "~/bells/big.wav"), .init(target: "meditation", sound: "bowl")]
        let pattern = try BuiltInPatterns.twoPhase.applying(overrides)
        #expect(pattern.endCue?.sound == "~/bells/big.wav")
        #expect(pattern.endCue?.isFile == true)
        #expect(pattern.phases[0].cue?.sound == "bowl")
        var both = PatternOverrides()
        both.cycles = 2
        both.duration = 60
        #expect(throws: PatternError.self) { try BuiltInPatterns.box.applying(both) }
    }

    @Test func compactTextFormsParseOrSayWhatIsAllowed() throws {
        #expect(try PatternText.ratio("4:7:8") == [4, 7, 8])
        #expect(throws: PatternError.self) { try PatternText.ratio("4") }
        #expect(throws: PatternError.self) { try PatternText.ratio("4:-1") }
        #expect(try PatternText.pace("5.5", rampSeconds: nil) == Pace(bpm: Rational(11, 2)!))
        #expect(try PatternText.pace("6->4.5", rampSeconds: 600) == Pace(from: 6, to: Rational(9, 2)!, over: 600))
        #expect(throws: PatternError.self) { try PatternText.pace("6->4.5", rampSeconds: nil) }
        #expect(throws: PatternError.self) { try PatternText.pace("fast", rampSeconds: nil) }
        #expect(try PatternText.phaseLength("meditation=20m") == .init(phase: "meditation", seconds: 1200))
        #expect(throws: PatternError.self) { try PatternText.phaseLength("meditation=soon") }
        #expect(throws: PatternError.self) { try PatternText.phaseLength("meditation") }
    }
}
