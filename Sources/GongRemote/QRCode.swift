/// A QR code of a short text (ISO/IEC 18004), for `gong remote pair` to draw the pairing address
/// in the terminal: byte mode, error correction M (L when M does not fit), versions 1 to 6 (up
/// to 106 bytes at M, 134 at L: an address with a code is some 50). No library: the encoding is
/// small, and a phone's camera is the test (RemoteQRCodeTests decodes it with zbarimg).
public struct QRCode: Sendable, Equatable {
    /// Modules per side: 21 at version 1, 4 more each version.
    public let size: Int
    public let version: Int
    /// Row by row; true is dark.
    public private(set) var modules: [[Bool]]

    public enum Level: Sendable { case low, medium }

    /// The page's address with a pairing code in its fragment, which the page reads into its
    /// form: what `gong remote pair`'s code says to a camera.
    public static func pairingAddress(_ address: String, code: String) -> String {
        let page = address.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return (page ?? address) + "#code=" + code
    }

    /// The code of `text`'s UTF-8 bytes, or nil when it is too long for version 6.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let (version, level) = Self.fit(bytes.count) else { return nil }
        self.version = version
        size = version * 4 + 17
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        var function = modules
        Self.drawFunctionPatterns(&modules, &function, version: version)
        let codewords = Self.interleaved(Self.dataCodewords(bytes, version: version, level: level), version, level)
        Self.place(codewords, in: &modules, function: function)
        var best: (penalty: Int, modules: [[Bool]]) = (.max, modules)
        for mask in 0..<8 {
            var masked = modules
            Self.apply(mask: mask, to: &masked, function: function)
            Self.drawFormat(&masked, level: level, mask: mask)
            let penalty = Self.penalty(masked)
            if penalty < best.penalty { best = (penalty, masked) }
        }
        modules = best.modules
    }

    /// Two module rows a line with half blocks, dark on light whatever the terminal's colours
    /// (ANSI black on bright white), with the four-module quiet zone a reader needs.
    public func terminalLines() -> [String] {
        let quiet = 4
        let side = size + 2 * quiet
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (y, x) = (row - quiet, column - quiet)
            return y >= 0 && y < size && x >= 0 && x < size && modules[y][x]
        }
        var lines: [String] = []
        for row in stride(from: 0, to: side, by: 2) {
            var line = "\u{1B}[30;107m"
            for column in 0..<side {
                switch (dark(row, column), row + 1 < side && dark(row + 1, column)) {
                case (false, false): line += " "
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (true, true): line += "█"
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines
    }

    // MARK: Capacity

    /// Error correction codewords per block, and blocks, by version (index 0 unused).
    private static func eccPerBlock(_ level: Level) -> [Int] {
        level == .low ? [0, 7, 10, 15, 20, 26, 18] : [0, 10, 16, 26, 18, 24, 16]
    }
    private static func blocks(_ level: Level) -> [Int] {
        level == .low ? [0, 1, 1, 1, 1, 1, 2] : [0, 1, 1, 1, 2, 2, 4]
    }

    /// Codewords the symbol holds, data and error correction together.
    static func rawCodewords(_ version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            modules -= (25 * alignments - 10) * alignments - 55
        }
        return modules / 8
    }

    static func dataCapacity(_ version: Int, _ level: Level) -> Int {
        rawCodewords(version) - eccPerBlock(level)[version] * blocks(level)[version]
    }

    /// The smallest version that holds `count` bytes, at M when it can.
    static func fit(_ count: Int) -> (Int, Level)? {
        for level in [Level.medium, .low] {
            // Mode (4 bits) and count (8 bits) before the bytes.
            if let version = (1...6).first(where: { dataCapacity($0, level) * 8 >= 12 + count * 8 }) {
                return (version, level)
            }
        }
        return nil
    }

    // MARK: Codewords

    static func dataCodewords(_ bytes: [UInt8], version: Int, level: Level) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in (0..<count).reversed() { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, 8)
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCapacity(version, level) * 8
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var codewords = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while codewords.count < capacity / 8 {
            codewords.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        return codewords
    }

    /// The data split into blocks, each with its error correction, interleaved as the symbol
    /// carries them.
    static func interleaved(_ data: [UInt8], _ version: Int, _ level: Level) -> [UInt8] {
        let count = blocks(level)[version]
        let ecc = eccPerBlock(level)[version]
        let raw = rawCodewords(version)
        let shortBlocks = count - raw % count
        let shortLength = raw / count
        let divisor = ReedSolomon.divisor(degree: ecc)
        var split: [[UInt8]] = []
        var start = 0
        for index in 0..<count {
            let length = shortLength - ecc + (index < shortBlocks ? 0 : 1)
            var block = Array(data[start..<start + length])
            start += length
            let correction = ReedSolomon.remainder(block, divisor: divisor)
            // Short blocks get a gap, so data columns line up with the long ones.
            if index < shortBlocks { block.append(0) }
            split.append(block + correction)
        }
        var result: [UInt8] = []
        for column in 0..<split[0].count {
            for (index, block) in split.enumerated() where column != shortLength - ecc || index >= shortBlocks {
                result.append(block[column])
            }
        }
        return result
    }

    enum ReedSolomon {
        static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
            var z = 0
            for shift in (0..<8).reversed() {
                z = (z << 1) ^ ((z >> 7) * 0x11D)
                z ^= Int((y >> shift) & 1) * Int(x)
            }
            return UInt8(z)
        }

        static func divisor(degree: Int) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: degree)
            result[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for j in 0..<degree {
                    result[j] = multiply(result[j], root)
                    if j + 1 < degree { result[j] ^= result[j + 1] }
                }
                root = multiply(root, 2)
            }
            return result
        }

        static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: divisor.count)
            for byte in data {
                let factor = byte ^ result.removeFirst()
                result.append(0)
                for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
            }
            return result
        }
    }

    // MARK: Modules

    private static func drawFunctionPatterns(_ modules: inout [[Bool]], _ function: inout [[Bool]], version: Int) {
        let size = modules.count
        func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            function[y][x] = true
        }
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(cx + dx) && (0..<size).contains(cy + dy) {
                    let distance = max(abs(dx), abs(dy))
                    set(cx + dx, cy + dy, distance != 2 && distance != 4)
                }
            }
        }
        if version >= 2 {
            // Up to version 6 one alignment pattern, near the bottom right.
            let at = 4 * version + 10
            for dy in -2...2 {
                for dx in -2...2 { set(at + dx, at + dy, max(abs(dx), abs(dy)) != 1) }
            }
        }
        // The format areas are reserved now and drawn per mask; the dark module with them.
        drawFormat(&modules, level: .medium, mask: 0)
        for index in 0..<9 {
            function[index][8] = true
            function[8][index] = true
        }
        for index in 0..<8 {
            function[8][size - 1 - index] = true
            function[size - 1 - index][8] = true
        }
    }

    static func drawFormat(_ modules: inout [[Bool]], level: Level, mask: Int) {
        let size = modules.count
        let data = (level == .low ? 1 : 0) << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        func set(_ x: Int, _ y: Int, _ dark: Bool) { modules[y][x] = dark }
        for index in 0...5 { set(8, index, bit(index)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for index in 9..<15 { set(14 - index, 8, bit(index)) }
        for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
        set(8, size - 8, true)
    }

    /// The codewords' bits in the two-column zigzag, from the bottom right, around the
    /// function patterns.
    private static func place(_ codewords: [UInt8], in modules: inout [[Bool]], function: [[Bool]]) {
        let size = modules.count
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for offset in 0..<2 {
                    let x = right - offset
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !function[y][x], index < codewords.count * 8 else { continue }
                    modules[y][x] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    private static func apply(mask: Int, to modules: inout [[Bool]], function: [[Bool]]) {
        for y in modules.indices {
            for x in modules.indices where !function[y][x] {
                let flip =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// The standard's penalty without its finder-lookalike rule: runs of five or more alike,
    /// 2×2 blocks alike, and dark modules far from half. The mask with the least is drawn.
    static func penalty(_ modules: [[Bool]]) -> Int {
        let size = modules.count
        var penalty = 0
        for line in 0..<size {
            for horizontal in [true, false] {
                var run = 1
                for index in 1..<size {
                    let here = horizontal ? modules[line][index] : modules[index][line]
                    let before = horizontal ? modules[line][index - 1] : modules[index - 1][line]
                    if here == before {
                        run += 1
                        if run == 5 { penalty += 3 } else if run > 5 { penalty += 1 }
                    } else {
                        run = 1
                    }
                }
            }
        }
        for y in 0..<size - 1 {
            for x in 0..<size - 1 {
                let color = modules[y][x]
                if color == modules[y][x + 1] && color == modules[y + 1][x] && color == modules[y + 1][x + 1] {
                    penalty += 3
                }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let total = size * size
        penalty += max(0, (abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
        return penalty
    }
}
