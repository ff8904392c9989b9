/// The last weeks of practice drawn as a calendar in the terminal, as code hosts draw
/// contributions: a column per week (Monday at the top), a cell per day, darker for more
/// minutes.
public enum CalendarHeatMap {
    /// One day: minutes sat, and 0 Monday … 6 Sunday.
    public struct Day: Sendable, Equatable {
        public var minutes: Double
        public var weekday: Int
        /// `YYYY-MM-DD`.
        public var date: String

        public init(date: String, minutes: Double, weekday: Int) {
            self.date = date
            self.minutes = minutes
            self.weekday = weekday
        }
    }

    /// The cell for no sitting, then for up to 10, 20 and 40 minutes, and for more.
    public static let shades: [Character] = ["·", "░", "▒", "▓", "█"]
    static let limits: [Double] = [0, 10, 20, 40]

    public static func shade(minutes: Double) -> Character {
        shades[limits.lastIndex { minutes > $0 }.map { $0 + 1 } ?? 0]
    }

    /// Rows to print: a line of month names over the weeks, one line per weekday, and a key.
    /// `days` run oldest first and end today; the first column starts on the Monday on or
    /// before the first day.
    public static func render(_ days: [Day]) -> [String] {
        guard let first = days.first else { return [] }
        let leading = first.weekday
        let cells: [Day?] = Array(repeating: nil, count: leading) + days.map { $0 }
        let weeks = (cells.count + 6) / 7
        let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        // Month names over the week in which each month begins (two characters a week).
        var header = Array(repeating: Character(" "), count: 4 + weeks * 2 + 3)
        var lastMonth = ""
        for week in 0..<weeks {
            guard let day = cells[(week * 7)..<min(cells.count, week * 7 + 7)].compactMap({ $0 }).first else {
                continue
            }
            let month = String(day.date.dropFirst(5).prefix(2))
            if month != lastMonth, let index = Int(month), (1...12).contains(index) {
                let start = 4 + week * 2
                // Where the name before still runs, it goes over the next week instead.
                if start == 4 || header[start - 1] == " " {
                    for (offset, letter) in months[index - 1].enumerated() where start + offset < header.count {
                        header[start + offset] = letter
                    }
                    lastMonth = month
                }
            }
        }
        var lines = [String(header).trimmingTrailingSpaces()]
        for weekday in 0..<7 {
            var line = names[weekday] + " "
            for week in 0..<weeks {
                let index = week * 7 + weekday
                line.append(index < cells.count ? cells[index].map { shade(minutes: $0.minutes) } ?? " " : " ")
                line.append(" ")
            }
            lines.append(line.trimmingTrailingSpaces())
        }
        lines.append(
            "    " + zip(shades, ["none", "<10m", "<20m", "<40m", "40m+"]).map { "\($0) \($1)" }.joined(separator: "  ")
        )
        return lines
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
