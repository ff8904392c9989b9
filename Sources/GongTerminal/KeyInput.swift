import Glibc

/// What a key press asks for.
public enum Key: Equatable, Sendable {
    case togglePause, skip, stop
}

public enum KeyInput {
    /// Reads whatever is waiting on `descriptor` without blocking (the terminal is in raw mode
    /// with VMIN 0) and maps it to keys.
    public static func read(from descriptor: Int32 = STDIN_FILENO) -> [Key] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, 64) }
        guard count > 0 else { return [] }
        return keys(in: Array(buffer[0..<count]))
    }

    /// Space pauses or resumes, s skips, q stops; escape sequences (arrows, function keys) are
    /// skipped whole so their letters are never taken for commands.
    public static func keys(in bytes: [UInt8]) -> [Key] {
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x1B {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") {
                    index += 1
                    // Parameters, then one final byte in @…~.
                    while index < bytes.count, !(0x40...0x7E).contains(bytes[index]) { index += 1 }
                    index += 1
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "): keys.append(.togglePause)
            case UInt8(ascii: "s"), UInt8(ascii: "S"): keys.append(.skip)
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): keys.append(.stop)
            default: break
            }
            index += 1
        }
        return keys
    }
}
