import CPulse
import Glibc
import Testing

@testable import GongAudio

/// Each driver's failures classed as reasons a program can act on, with the errno kept.
@Suite struct AudioDeviceErrorTests {
    @Test(arguments: [
        (EBUSY, AudioDeviceError.Reason.busy), (ENOENT, .noSuchDevice), (ENXIO, .noSuchDevice),
        (EACCES, .permissionDenied), (EPERM, .permissionDenied), (ECONNREFUSED, .noServer),
        (EHOSTDOWN, .noServer), (ETIMEDOUT, .timedOut), (ENODEV, .disconnected), (ESHUTDOWN, .disconnected),
        (ECONNRESET, .disconnected), (EPIPE, .disconnected), (EBADFD, .disconnected), (EAGAIN, .stalled),
        (EIO, .other), (0, .other)
    ])
    func aBareErrnoGivesItsReason(errno: Int32, reason: AudioDeviceError.Reason) {
        #expect(AudioDeviceError.Reason(errno: errno) == reason)
        let error = AudioDeviceError(code: -errno, operation: "test", device: "d", message: "said")
        #expect(error.reason == reason && error.errno == errno && error.code == -errno && error.detail == "said")
    }

    @Test(arguments: [
        (EHOSTDOWN, AudioDeviceError.Reason.noServer), (ENOENT, .noSuchDevice), (ETIMEDOUT, .timedOut),
        (ENODEV, .disconnected), (EINVAL, .channelsUnsupported), (ENOMEM, .other)
    ])
    func aFailedPipeWireOpenIsClassedByItsErrno(errno: Int32, reason: AudioDeviceError.Reason) {
        let error = PipeWirePCM.openFailure(-errno, said: "PipeWire said", device: "pipewire:x", target: "x")
        #expect(error.reason == reason && error.errno == errno && error.system == .pipeWire, "\(error)")
        #expect(error.detail == (errno == ENOENT ? "no such sink 'x'" : "PipeWire said"))
    }

    @Test(arguments: [
        (EHOSTDOWN, AudioDeviceError.Reason.noServer, "jack_client_open"),
        (ENOENT, .noSuchDevice, "jack_port_by_name"), (EINVAL, .channelsUnsupported, "jack_client_open"),
        (EIO, .other, "jack_connect")
    ])
    func aFailedJackOpenIsClassedByItsErrno(errno: Int32, reason: AudioDeviceError.Reason, operation: String) {
        let error = JackPCM.openFailure(-errno, said: "JACK said", device: "jack")
        #expect(error.reason == reason && error.errno == errno && error.operation == operation, "\(error)")
        #expect(error.system == .jack && error.detail == "JACK said")
    }

    @Test(arguments: [
        (PA_ERR_CONNECTIONREFUSED.rawValue, ECONNREFUSED), (PA_ERR_CONNECTIONTERMINATED.rawValue, ECONNRESET),
        (PA_ERR_KILLED.rawValue, ECONNRESET), (PA_ERR_NOENTITY.rawValue, ENOENT), (PA_ERR_ACCESS.rawValue, EACCES),
        (PA_ERR_TIMEOUT.rawValue, ETIMEDOUT), (PA_ERR_BUSY.rawValue, EBUSY), (PA_ERR_INVALID.rawValue, EINVAL),
        (PA_ERR_PROTOCOL.rawValue, ENODEV)
    ])
    func pulseAudiosCodesBecomeTheErrnoTheirReasonComesFrom(code: UInt32, errno: Int32) {
        #expect(pulseErrnoValue(Int32(code)) == errno)
    }

    @Test func theDescriptionIsDataWithoutAdvice() {
        let error = AudioDeviceError(
            .noServer, errno: ECONNREFUSED, operation: "pa_context_connect", device: "pulse", system: .pulseAudio,
            detail: "Connection refused", server: "unix:/nonexistent")
        #expect(
            error.description
                == "audio device 'pulse': no sound server answered (Connection refused) (pa_context_connect)")
        for reason in AudioDeviceError.Reason.allCases {
            #expect(!reason.summary.contains("--") && !reason.summary.contains("gong "), "\(reason)")
        }
    }
}
