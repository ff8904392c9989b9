import Glibc

/// Owns the terminal during a live session: raw keys, a hidden cursor, and a status block
/// redrawn in place. Ctrl-C and Ctrl-Z still arrive as signals (ISIG stays on).
///
/// Keys and the view are separate: a tool may type keys on a terminal while reading JSON lines
/// from a pipe, and then nothing but JSON may reach that pipe.
public final class TerminalScreen {
    private let output: Int32
    private let input: Int32
    /// False when only the keys are read: nothing is ever written to `output`.
    public let drawsView: Bool
    private var saved = termios()
    private var isRaw = false
    private var drawn: [String] = []

    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, drawsView: Bool = true) {
        self.input = input
        self.output = output
        self.drawsView = drawsView
    }

    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    public var width: Int {
        var size = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Keys without Enter and without echo; hide the cursor.
    public func enter() {
        guard !isRaw, tcgetattr(input, &saved) == 0 else { return }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutablePointer(to: &raw.c_cc) { pointer in
            pointer.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
        }
        tcsetattr(input, TCSANOW, &raw)
        isRaw = true
        write("\u{1B}[?25l")
    }

    /// Puts the terminal back as it was: safe to call more than once.
    public func restore() {
        guard isRaw else { return }
        tcsetattr(input, TCSANOW, &saved)
        isRaw = false
        write("\u{1B}[?25h")
    }

    /// Leaves the status block on screen and restores the terminal (before Ctrl-Z stops us).
    public func suspend() {
        restore()
        write("\n")
        drawn = []
    }

    /// Back after `fg`: raw mode again, and a fresh block below whatever the shell printed.
    public func resume() {
        enter()
    }

    /// Draws `lines` in place of the previous block. Only the lines that changed are written,
    /// in one write, so nothing flickers.
    public func draw(_ lines: [String]) {
        write(StatusLines.redraw(from: drawn, to: lines))
        drawn = lines
    }

    /// Prints a line above the status block (which is then drawn again below it).
    public func log(_ line: String) {
        var text = drawn.isEmpty ? "" : "\u{1B}[\(drawn.count)F\u{1B}[J"
        text += line + "\n"
        write(text)
        let lines = drawn
        drawn = []
        if !lines.isEmpty { draw(lines) }
    }

    /// Ends the session view: the block stays, the cursor goes below it.
    public func finish() {
        drawn = []
        restore()
    }

    private func write(_ text: String) {
        guard drawsView else { return }
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Glibc.write(output, $0.baseAddress! + offset, $0.count - offset)
            }
            if written <= 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }
}

extension StatusLines {
    /// The bytes that turn the block `previous` into `next`: move to the block's first line,
    /// rewrite changed lines (clearing their ends), skip unchanged ones, clear leftovers.
    public static func redraw(from previous: [String], to next: [String]) -> String {
        var text = previous.isEmpty ? "" : "\u{1B}[\(previous.count)F"
        for (index, line) in next.enumerated() {
            if index < previous.count && previous[index] == line {
                text += "\u{1B}[1E"
            } else {
                text += "\r" + line + "\u{1B}[K\n"
            }
        }
        if previous.count > next.count { text += "\u{1B}[J" }
        return text
    }
}
