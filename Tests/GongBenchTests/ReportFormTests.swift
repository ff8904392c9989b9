import FoundationEssentials
import Testing

@testable import GongBench

/// The forms every bench report shares: its text in columns, its JSON with every key.
@Suite struct ReportFormTests {
    @Test func namesAlignLeftAndFiguresRightInColumnsAsWideAsTheirWidestCell() {
        let lines = alignedColumns([
            ["method", "found", "p99"],
            ["gong", "120/120", "0 fr"],
            ["sleep loop", "98/120", "1234 fr"]
        ])
        #expect(
            lines == [
                "method        found      p99",
                "gong        120/120     0 fr",
                "sleep loop   98/120  1234 fr"
            ])
    }

    @Test func aStatisticNobodyMeasuredIsWrittenAsNullNotLeftOut() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(Distribution(count: 0)), as: UTF8.self)
        #expect(
            text
                == #"{"beyondRange":0,"buckets":[],"count":0,"max":null,"mean":null,"min":null,"p50":null,"p99":null,"p999":null}"#
        )
    }
}
