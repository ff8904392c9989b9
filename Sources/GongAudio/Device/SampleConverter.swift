/// The buffers between the renderer and the device, allocated once: the real-time loop renders
/// a period into `renderBuffer` and hands `convert` 's result to the device.
///
/// For a float device they are one buffer and conversion costs nothing; for an integer device
/// the floats are converted into a second buffer of the device's format.
public struct SampleConverter: ~Copyable {
    public let format: SampleFormat
    public let capacitySamples: Int
    /// Where the renderer writes one period of interleaved floats.
    public let renderBuffer: UnsafeMutableBufferPointer<Float>
    /// What the device is given.
    public let bytes: UnsafeMutableRawPointer

    public init(format: SampleFormat, capacitySamples: Int) {
        self.format = format
        self.capacitySamples = capacitySamples
        bytes = .allocate(byteCount: capacitySamples * format.bytesPerSample, alignment: 16)
        if format == .float32 {
            renderBuffer = UnsafeMutableBufferPointer(
                start: bytes.bindMemory(to: Float.self, capacity: capacitySamples), count: capacitySamples)
        } else {
            renderBuffer = .allocate(capacity: capacitySamples)
        }
        renderBuffer.initialize(repeating: 0)
    }

    deinit {
        if format != .float32 { renderBuffer.deallocate() }
        bytes.deallocate()
    }

    /// Converts the first `count` samples of `renderBuffer` and returns what to hand the device.
    @_noAllocation @_noLocks
    public func convert(count: Int) -> UnsafeRawPointer {
        let source = UnsafePointer(renderBuffer.baseAddress.unsafelyUnwrapped)
        switch format {
        case .float32:
            break  // rendered in place
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
