import GongKit
import GongPractice
import Testing

@Suite struct ControlLineSplitterTests {
    private func pieces(_ chunks: [String]) -> [ControlLineSplitter.Piece] {
        var splitter = ControlLineSplitter()
        var taken: [ControlLineSplitter.Piece] = []
        for chunk in chunks { splitter.feed(Array(chunk.utf8)) { taken.append($0) } }
        return taken
    }

    @Test func linesSplitAcrossReadsArriveWholeAndBlankLinesAreNothing() {
        #expect(
            pieces(["{\"command\":", " \"pause\"}\n\n{\"comm", "and\": \"stop\"}\n{\"unfinished"])
                == [.line("{\"command\": \"pause\"}"), .line("{\"command\": \"stop\"}")])
    }

    /// An over-long line is reported once, when it passes the cap, however it is cut into
    /// reads; its rest is skipped up to its newline, and the next line is read as usual.
    @Test func anOverLongLineIsReportedOnceAndTheNextLineStillArrives() {
        let cap = ControlProtocol.maxLineBytes
        let atCap = String(repeating: "a", count: cap)
        #expect(pieces([atCap + "\n"]) == [.line(atCap)])
        let long = String(repeating: "b", count: cap * 3)
        let halves = [String(long.prefix(cap / 2)), String(long.dropFirst(cap / 2)) + "\nnext\n"]
        #expect(pieces(halves) == [.tooLong, .line("next")])
        #expect(pieces([long, long, "\n", "after\n"]) == [.tooLong, .line("after")])
    }
}
