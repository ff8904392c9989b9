import Testing

@testable import GongBench

@Suite struct TextTableTests {
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
}
