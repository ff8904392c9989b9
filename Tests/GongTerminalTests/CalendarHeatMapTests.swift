import Testing

@testable import GongTerminal

@Suite struct CalendarHeatMapTests {
    @Test func shadesStepAtTenTwentyAndFortyMinutes() {
        #expect(
            [0, 0.5, 10, 10.1, 20, 39, 40, 41, 300].map(CalendarHeatMap.shade) == [
                "·", "░", "░", "▒", "▒", "▓", "▓", "█", "█"
            ])
    }

    /// Two weeks from Wednesday 2026-10-28 to Monday 2026-11-09: the first column starts on the
    /// Monday before, each day sits on its weekday's row, and November is named over its second week
    /// (October's name still runs over its first).
    @Test func eachDayIsOnItsWeekdayInItsWeek() {
        let dates = [
            "2026-10-28", "2026-10-29", "2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03",
            "2026-11-04", "2026-11-05", "2026-11-06", "2026-11-07", "2026-11-08", "2026-11-09"
        ]
        let minutes: [Double] = [20, 0, 0, 5, 45, 0, 0, 0, 0, 0, 0, 0, 15]
        let days = dates.indices.map {
            CalendarHeatMap.Day(date: dates[$0], minutes: minutes[$0], weekday: ($0 + 2) % 7)
        }
        let lines = CalendarHeatMap.render(days)
        #expect(lines.count == 9)
        #expect(lines[0] == "    Oct Nov")
        #expect(lines[1] == "Mon   · ▒")
        #expect(lines[3] == "Wed ▒ ·")
        #expect(lines[6] == "Sat ░ ·")
        #expect(lines[7] == "Sun █ ·")
        #expect(lines[8].hasPrefix("    · none  ░ <10m"))
    }
}
