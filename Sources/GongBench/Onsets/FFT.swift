import FoundationEssentials
import Glibc

/// An in-place iterative radix-2 complex FFT in Double: what the onset finder correlates with.
/// Swift on Linux has no Accelerate; a transform of 2^17 points takes a few milliseconds
/// optimised, and correlating a ten-minute recording with a cue takes a few dozen of them.
struct FFT {
    let size: Int
    private let cosines: [Double]
    private let sines: [Double]
    private let reversed: [Int]

    /// `size` must be a power of two, at least 2.
    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "an FFT's size is a power of two")
        self.size = size
        cosines = (0..<size / 2).map { cos(2 * .pi * Double($0) / Double(size)) }
        sines = (0..<size / 2).map { -sin(2 * .pi * Double($0) / Double(size)) }
        let bits = size.trailingZeroBitCount
        reversed = (0..<size).map { index in
            var result = 0
            for bit in 0..<bits where index & (1 << bit) != 0 { result |= 1 << (bits - 1 - bit) }
            return result
        }
    }

    /// The forward transform, or the inverse (scaled by 1/size) when `inverse`.
    func transform(real: inout [Double], imaginary: inout [Double], inverse: Bool = false) {
        precondition(real.count == size && imaginary.count == size)
        real.withUnsafeMutableBufferPointer { re in
            imaginary.withUnsafeMutableBufferPointer { im in
                for index in 0..<size where index < reversed[index] {
                    re.swapAt(index, reversed[index])
                    im.swapAt(index, reversed[index])
                }
                cosines.withUnsafeBufferPointer { cosines in
                    sines.withUnsafeBufferPointer { sines in
                        var length = 2
                        while length <= size {
                            let half = length / 2
                            let step = size / length
                            var start = 0
                            while start < size {
                                for offset in 0..<half {
                                    let twiddleRe = cosines[offset * step]
                                    let twiddleIm = inverse ? -sines[offset * step] : sines[offset * step]
                                    let a = start + offset
                                    let b = a + half
                                    let productRe = re[b] * twiddleRe - im[b] * twiddleIm
                                    let productIm = re[b] * twiddleIm + im[b] * twiddleRe
                                    re[b] = re[a] - productRe
                                    im[b] = im[a] - productIm
                                    re[a] += productRe
                                    im[a] += productIm
                                }
                                start += length
                            }
                            length *= 2
                        }
                    }
                }
                if inverse {
                    let scale = 1 / Double(size)
                    for index in 0..<size {
                        re[index] *= scale
                        im[index] *= scale
                    }
                }
            }
        }
    }

    /// The smallest power of two at least `count`.
    static func size(atLeast count: Int) -> Int {
        var size = 2
        while size < count { size *= 2 }
        return size
    }
}
