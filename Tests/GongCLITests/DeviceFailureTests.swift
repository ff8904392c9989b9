import Glibc
import GongAudio
import GongCore
import GongKit
import GongPractice
import Testing

@testable import gong

/// The command line words each reason a device gave as one line that says what to do; the
/// sound server is asked about only for the hint, and only when the line is said.
@Suite struct DeviceFailureTests {
    static func error(
        _ reason: AudioDeviceError.Reason, _ system: AudioDeviceError.System = .alsa, device: String = "plug",
        operation: String = "snd_pcm_open", detail: String = "", server: String? = nil
    ) -> AudioDeviceError {
        AudioDeviceError(
            reason, errno: 0, operation: operation, device: device, system: system, detail: detail, server: server)
    }

    static func line(_ error: AudioDeviceError, card: Bool = true, server: Bool = false) -> String {
        describe(error, soundCardPresent: { card }, soundServerAnswers: { server })
    }

    @Test(arguments: [
        (
            DeviceFailureTests.error(.noSuchDevice, detail: "No such file or directory"),
            "'gong devices' lists the devices"
        ),
        (DeviceFailureTests.error(.busy), "choose another device with --device"),
        (
            DeviceFailureTests.error(
                .busy, .snapcast, device: "snapcast:/run/gong", operation: "Server.GetStatus",
                detail: "the Snapcast stream 'gong' is playing: something else feeds its source"),
            "'gong' is playing: something else feeds its source; wait for it to end, or give gong a stream of its own"
        ),
        (DeviceFailureTests.error(.permissionDenied), "is your user in the 'audio' group?"),
        (
            DeviceFailureTests.error(.noServer, .pulseAudio, device: "pulse", server: "unix:/x"),
            "start one, or choose an ALSA device with --device"
        ),
        (
            DeviceFailureTests.error(.noServer, .pipeWire, device: "pipewire"),
            "start one, or choose another device with --device"
        ),
        (DeviceFailureTests.error(.noServer, .jack, device: "jack"), "start jackd, or choose another device"),
        (
            DeviceFailureTests.error(.noSuchDevice, .pulseAudio, device: "pulse:x", detail: "no such sink 'x'"),
            "'gong devices' lists them"
        ),
        (
            DeviceFailureTests.error(.noSuchDevice, .pipeWire, device: "pipewire:x", detail: "no such sink 'x'"),
            "'gong devices' lists them"
        ),
        (
            DeviceFailureTests.error(.noSuchDevice, .jack, device: "jack:a", detail: "no port a"),
            "'gong devices' lists JACK's playback ports"
        ),
        (
            DeviceFailureTests.error(.timedOut, .pulseAudio, device: "pulse", detail: "took no stream within 5 s"),
            "'pactl info' shows the server"
        ),
        (DeviceFailureTests.error(.timedOut, .pipeWire, device: "pipewire"), "PipeWire needs wireplumber"),
        (DeviceFailureTests.error(.disconnected), "'gong devices' lists the devices"),
        (DeviceFailureTests.error(.stalled), "try a longer --latency"),
        (
            DeviceFailureTests.error(.formatUnsupported, detail: "format int16 not supported"),
            "format int16 not supported; choose another with --format"
        ),
        (
            DeviceFailureTests.error(.channelsUnsupported, detail: "cannot play 9 channel(s)"),
            "choose another with --channels"
        ),
        (DeviceFailureTests.error(.rateUnsupported, detail: "cannot play at 7 Hz"), "choose another with --rate"),
        (DeviceFailureTests.error(.other, detail: "Input/output error"), "Input/output error")
    ])
    func eachReasonIsALineThatSaysWhatToDo(error: AudioDeviceError, advice: String) {
        let said = Self.line(error)
        #expect(said.hasPrefix("audio device '\(error.device)': ") && said.contains(advice), "\(said)")
        #expect(said.hasSuffix(" (\(error.operation))") && !said.contains("\n"), "\(said)")
    }

    @Test func everyReasonIsWorded() {
        for reason in AudioDeviceError.Reason.allCases {
            for system in AudioDeviceError.System.allCases {
                let said = Self.line(Self.error(reason, system))
                #expect(said.count > "audio device 'plug': ".count + 4, "\(reason) \(system): \(said)")
            }
        }
    }

    /// The lines the command line printed before the advice moved here, word for word.
    @Test func theLinesAreAsBefore() {
        #expect(
            Self.line(
                AlsaPCM.openFailure(-ENOENT, device: "nosuchdevice"))
                == "audio device 'nosuchdevice': no such device (No such file or directory); 'gong devices' lists the devices (snd_pcm_open)"
        )
        #expect(
            Self.line(
                Self.error(
                    .noServer, .pulseAudio, device: "pulse", operation: "pa_context_connect",
                    detail: "Connection refused", server: "unix:/nonexistent/gong-test"))
                == "audio device 'pulse': no PulseAudio server to play through at unix:/nonexistent/gong-test (Connection refused); start one, or choose an ALSA device with --device ('gong devices' lists them) (pa_context_connect)"
        )
        #expect(
            Self.line(
                Self.error(
                    .noSuchDevice, .pulseAudio, device: "pulse:nosuch", operation: "pa_context_get_sink_info_by_name",
                    detail: "no such sink 'nosuch'"))
                == "audio device 'pulse:nosuch': no such sink 'nosuch'; 'gong devices' lists them (pa_context_get_sink_info_by_name)"
        )
    }

    /// A card's name that will not open on a machine without a card: the hint says where to
    /// play instead, and only then is a server asked.
    @Test func aCardlessMachineGetsTheHintForWhereItCanPlay() {
        let failed = AlsaPCM.openFailure(-ENOENT, device: "hw:0,0")
        #expect(
            Self.line(failed, card: false, server: true)
                == "audio device 'hw:0,0': no such device (No such file or directory); no sound card found, but a sound server is running: use --device pulse (snd_pcm_open)"
        )
        #expect(
            Self.line(failed, card: false, server: false)
                == "audio device 'hw:0,0': no such device (No such file or directory); no sound card found and no PulseAudio or PipeWire server answered: use --device null, or render to a file with 'gong render' (snd_pcm_open)"
        )
        var asked = false
        _ = describe(
            failed, soundCardPresent: { true },
            soundServerAnswers: {
                asked = true; return true
            })
        _ = describe(
            AlsaPCM.openFailure(-ENOENT, device: "nosuch"), soundCardPresent: { false },
            soundServerAnswers: {
                asked = true; return true
            })
        #expect(!asked, "no server is asked where a card is present or the name is not a card's")
    }
}

/// What GongKit and GongCore leave as data, worded by the command line with the flag or command
/// that helps.
@Suite struct CommandLineWordingTests {
    @Test func eachPlaceOfTheSoundBankSaysWhyItWasSearched() {
        #expect(
            describe(SoundBank.Place("/usr/share/gong/sounds", .dataDirs)) == "/usr/share/gong/sounds ($XDG_DATA_DIRS)")
        #expect(describe(SoundBank.Place("/opt/g/share/gong/sounds", .installed)).hasSuffix("(installed beside gong)"))
    }

    @Test func aMissingBankNamesTheFlagThatGivesOne() {
        let none = SoundBankError(kind: .unknownSound, sound: "gong", usedBy: "start", searched: ["/a", "/b"])
        #expect(
            describe(none)
                == "start: unknown sound \"gong\"; no sound bank was found (searched /a, /b); pass --sounds DIR")
        let known = SoundBankError(kind: .unknownSound, sound: "gonk", usedBy: "end", available: ["bowl", "gong"])
        #expect(describe(known) == "end: unknown sound \"gonk\"; use one of bowl, gong, or a path to a sound file")
        #expect(!none.description.contains("--"))
    }

    @Test func aWrongHistoryHeaderNamesTheCommandThatWritesARightOne() throws {
        do {
            _ = try HistoryCSV.records(in: "date,nosuch\r\n", file: "sits.csv")
            Issue.record("a wrong header was read")
        } catch {
            #expect(error.expectedColumns == HistoryCSV.columns && !error.description.contains("gong "))
            let said = describe(error)
            #expect(
                said.hasPrefix("sits.csv:1: ") && said.hasSuffix("; use the columns gong history --csv writes"),
                "\(said)")
        }
    }

    @Test func theIntervalPatternIsListedWithTheFlagsThatChangeIt() {
        #expect(!BuiltInPatterns.interval.summary.contains("--"))
        #expect(
            listed(BuiltInPatterns.interval)
                == "a bowl every 5 min for 30 min, then the end gong (--set bell=N --duration M)")
        #expect(listed(BuiltInPatterns.box) == BuiltInPatterns.box.summary)
    }
}
