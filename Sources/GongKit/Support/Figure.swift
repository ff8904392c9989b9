#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Numbers as gong prints them: the C library's `printf` conversions, so a figure reads the
/// same as it always has (rounded from its exact binary value, as `%.1f` rounds it) without
/// Foundation's `String(format:)`, which brings ICU's data into the binary.
public enum Figure {
    /// `digits` places after the point (`%.1f`); `signed` puts a `+` before a positive figure.
    public static func fixed(_ value: Double, _ digits: Int, signed: Bool = false) -> String {
        printf("%\(signed ? "+" : "").\(max(0, digits))f", value)
    }

    /// Six significant digits at most, without trailing zeros (`%g`): `-6`, `0.5`, `1e+06`.
    public static func general(_ value: Double, signed: Bool = false) -> String {
        printf(signed ? "%+g" : "%g", value)
    }

    /// `value` in decimal, zeros in front to `width` digits (`%02d`): `07`, `2026`.
    public static func zeroPadded(_ value: Int, _ width: Int) -> String {
        printf("%0\(max(1, width))ld", value)
    }

    private static func text(_ buffer: [CChar], _ length: Int) -> String {
        String(decoding: buffer[..<max(0, length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func printf(_ format: String, _ value: any CVarArg) -> String {
        withVaList([value]) { arguments in
            var buffer = [CChar](repeating: 0, count: 64)
            let length = Int(vsnprintf(&buffer, buffer.count, format, arguments))
            guard length >= buffer.count else { return text(buffer, length) }
            // A figure longer than the buffer (1e300 in %f): measured, then written in full.
            buffer = [CChar](repeating: 0, count: length + 1)
            return withVaList([value]) { again in
                _ = vsnprintf(&buffer, buffer.count, format, again)
                return text(buffer, length)
            }
        }
    }
}
