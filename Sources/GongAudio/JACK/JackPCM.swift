import Glibc
import GongCore

/// A JACK client named `gong` (being built: see issue 20). Until then opening it says so.
public final class JackPCM: PCM {
    public let configuration: PCMConfiguration

    public init(_ request: PCMRequest, ports: [String]) throws(AudioDeviceError) {
        throw AudioDeviceError(
            code: -ENOSYS, operation: "jack_client_open", device: request.device,
            message: "gong cannot play through JACK yet")
    }

    public func writeInterleaved(_ bytes: UnsafeRawPointer, frames: Int) -> Int { Int(-ENODEV) }
    public func wait(timeoutMs: Int32) -> Int32 { -ENODEV }
    public func recover(_ error: Int32) -> Int32 { -ENODEV }
    public func prepare() -> Int32 { -ENODEV }
    public func drain() -> Int32 { -ENODEV }
    public func drop() -> Int32 { -ENODEV }
    public func status() -> PCMStatus? { nil }
    public func close() {}
}
