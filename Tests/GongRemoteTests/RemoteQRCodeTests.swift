import Glibc
import GongCore
import Testing

@testable import GongRemote

/// `gong remote pair`'s QR code, read back by a real decoder: zbarimg (Debian zbar-tools) on the
/// matrix drawn as an image, for each version and both error correction levels it uses.
@Suite struct RemoteQRCodeTests {
    /// The code as a PGM image, `scale` pixels a module, with the quiet zone.
    static func pgm(_ code: QRCode, scale: Int = 4) -> [UInt8] {
        let side = (code.size + 8) * scale
        var image = Array("P5\n\(side) \(side)\n255\n".utf8)
        for row in 0..<side {
            for column in 0..<side {
                let (y, x) = (row / scale - 4, column / scale - 4)
                let dark = y >= 0 && y < code.size && x >= 0 && x < code.size && code.modules[y][x]
                image.append(dark ? 0 : 255)
            }
        }
        return image
    }

    /// What zbarimg reads in the code, or why it read nothing: its exit status (4: no code found;
    /// 127: not run) and what it said on standard error.
    static func decoded(_ code: QRCode) throws -> Result<String, DecodeFailure> {
        var template = Array("/tmp/gong-qr-XXXXXX.pgm".utf8CString)
        let descriptor = mkstemps(&template, 4)
        try #require(descriptor >= 0)
        let path = String(nulTerminated: template)
        defer { unlink(path) }
        let image = pgm(code)
        _ = image.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        let errors = path + ".err"
        defer { unlink(errors) }
        guard let pipe = popen("/usr/bin/zbarimg --quiet --raw -Sdisable -Sqrcode.enable '\(path)' 2>'\(errors)'", "r")
        else {
            return .failure(DecodeFailure(status: -1, errno: errno, said: ""))
        }
        var output = ""
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), pipe) != nil { output += String(nulTerminated: line) }
        let status = pclose(pipe)
        let failed = errno
        guard status == 0 else {
            var said = ""
            if let file = fopen(errors, "r") {
                while fgets(&line, Int32(line.count), file) != nil { said += String(nulTerminated: line) }
                fclose(file)
            }
            return .failure(DecodeFailure(status: status, errno: status == -1 ? failed : 0, said: said))
        }
        return .success(String(output.dropLast()))
    }

    /// zbarimg's wait status as `pclose` gave it (-1 with `errno` when it could not wait), and its
    /// standard error.
    struct DecodeFailure: Error, CustomStringConvertible {
        let status: Int32
        let errno: Int32
        let said: String
        var description: String {
            status == -1
                ? "zbarimg could not be run or waited for (errno \(errno))"
                : "zbarimg's wait status \(status) (exit \(status >> 8), signal \(status & 0x7f)), it said: \(said)"
        }
    }

    @Test func zbarimgReadsTheAddressBackAtEveryVersion() throws {
        guard access("/usr/bin/zbarimg", X_OK) == 0 else {
            Issue.record("zbarimg is needed: scripts/install-deps.sh test installs zbar-tools")
            return
        }
        // Lengths that need versions 1 to 6 at M, and 6 at L.
        var seen: Set<Int> = []
        for length in [10, 20, 30, 50, 60, 80, 100, 106, 107, 134] {
            let base = "http://gong-box.local:8787/#code=12345678"
            let text = String(String(repeating: base, count: 4).prefix(length))
            let code = try #require(QRCode(text), "no code for \(length) bytes")
            #expect(code.size == code.version * 4 + 17)
            seen.insert(code.version)
            switch try Self.decoded(code) {
            case .success(let read): #expect(read == text, "version \(code.version), \(length) bytes")
            case .failure(let failure): Issue.record("version \(code.version), \(length) bytes: \(failure)")
            }
        }
        #expect(seen == Set(1...6))
        #expect(QRCode(String(repeating: "x", count: 135)) == nil)
    }

    @Test func thePairingAddressCarriesTheCodeInItsFragment() throws {
        #expect(
            QRCode.pairingAddress("http://box.local:8787/", code: "01234567") == "http://box.local:8787/#code=01234567")
        #expect(QRCode.pairingAddress("http://box:8787/#old", code: "01234567") == "http://box:8787/#code=01234567")
        let code = try #require(QRCode(QRCode.pairingAddress("http://meditation-room.local:8787/", code: "01234567")))
        #expect(code.version <= 4)
    }

    @Test func theTerminalDrawingIsTwoModuleRowsALineWithItsQuietZone() throws {
        let code = try #require(QRCode("http://gong-box.local:8787/#code=12345678"))
        let lines = code.terminalLines()
        #expect(lines.count == (code.size + 8 + 1) / 2)
        // Read back, the half blocks are the modules, light all round.
        var read: [[Bool]] = []
        for line in lines {
            let cells = Array(line.replacing("\u{1B}[30;107m", with: "").replacing("\u{1B}[0m", with: ""))
            #expect(cells.count == code.size + 8)
            read.append(cells.map { $0 == "▀" || $0 == "█" })
            read.append(cells.map { $0 == "▄" || $0 == "█" })
        }
        let light = [Bool](repeating: false, count: code.size + 8)
        let framed =
            Array(repeating: light, count: 4)
            + code.modules.map { Array(repeating: false, count: 4) + $0 + Array(repeating: false, count: 4) }
            + Array(repeating: light, count: 4)
        #expect(Array(read.prefix(framed.count)) == framed)
        #expect(read.dropFirst(framed.count).allSatisfy { $0 == light })
    }
}
