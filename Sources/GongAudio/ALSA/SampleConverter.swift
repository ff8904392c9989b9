/// Converts the renderer's interleaved floats to the device's format, in place into a buffer
/// allocated once: the real-time loop calls it every period.
public struct SampleConverter: ~Copyable {
    public let format: SampleFormat
    public let capacitySamples: Int
    public let bytes: UnsafeMutableRawPointer

    public init(format: SampleFormat, capacitySamples: Int) {
        self.format = format
        self.capacitySamples = capacitySamples
        bytes = .allocate(byteCount: capacitySamples * format.bytesPerSample, alignment: 16)
    }

    deinit { bytes.deallocate() }

    /// Converts `count` samples and returns the buffer to hand to the device.
    @_noAllocation @_noLocks
    public func convert(_ source: UnsafePointer<Float>, count: Int) -> UnsafeRawPointer {
        switch format {
        case .float32:
            bytes.copyMemory(from: source, byteCount: count * 4)
        case .int16:
            let destination = bytes.assumingMemoryBound(to: Int16.self)
            for index in 0..<count {
                let scaled = min(max(source[index] * 32768, -32768), 32767)
                destination[index] = Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
            }
        case .int32:
            let destination = bytes.assumingMemoryBound(to: Int32.self)
            for index in 0..<count {
                // Through Double: a Float cannot hold 2^31 − 1 exactly.
                let scaled = min(max(Double(source[index]) * 2_147_483_648, -2_147_483_648), 2_147_483_647)
                destination[index] = Int32(scaled + (scaled < 0 ? -0.5 : 0.5))
            }
        }
        return UnsafeRawPointer(bytes)
    }
}
