import GongCore
import Testing

/// Text a C call wrote into a buffer of its own (`gethostname`, `readlink`, `fgets`).
@Suite struct CStringTests {
    static func buffer(_ bytes: [UInt8], size: Int) -> [CChar] {
        (bytes + [UInt8](repeating: 0, count: max(0, size - bytes.count))).map { CChar(bitPattern: $0) }
    }

    @Test func theTextEndsAtTheFirstNul() {
        #expect(String(nulTerminated: Self.buffer(Array("box\0old".utf8), size: 16)) == "box")
        #expect(String(nulTerminated: Self.buffer([], size: 4)) == "")
    }

    /// `readlink` does not end what it writes with a NUL: a buffer it filled whole is read whole,
    /// not past its end.
    @Test func aBufferWithNoNulIsReadWhole() {
        #expect(String(nulTerminated: Self.buffer(Array("/usr/bin/gong".utf8), size: 13)) == "/usr/bin/gong")
    }

    @Test func bytesThatAreNotUTF8AreReplacedNotDropped() {
        #expect(String(nulTerminated: Self.buffer([0x72, 0xFF, 0x6D], size: 8)) == "r\u{FFFD}m")
    }
}
