import GongCore

/// Reads a pattern from a TOML file.
///
/// ```toml
/// name = "evening"            # optional: defaults to the file's name
/// summary = "a quiet evening sit"
/// warmup = "10s"              # silence before the first phase
/// start = "bowl"              # a cue: a sound name or file, or { sound = "bowl", gain = -6 }
/// end = "gong-end"
/// cycles = 1                  # or: duration = "20m" (whole cycles that fit)
///
/// [pace]                      # only for paced breathing: phases then take `share`
/// bpm = 6                     # breaths per minute; a ramp adds: to = 4.5, over = "10m"
///
/// [[phases]]
/// name = "meditation"
/// length = "20m"              # a duration (or `share = 4` in a paced pattern)
/// cue = "gong"
/// motion = "still"            # inhale, hold, exhale or still (drives the breathing bar)
/// bell = { every = "5m", cue = "bowl" }   # or random = ["3m", "8m"]: each gap drawn between the two
/// ```
///
/// Every problem is reported with the file, the line, the key, the value and what is allowed;
/// unknown keys are errors, so a misspelt `lenght` never silently becomes a default.
public enum PatternFile {
    public static func load(path: String) throws(PatternError) -> Pattern {
        let text: String
        do {
            text = try readTextFile(path)
        } catch {
            var unreadable = PatternError(
                location: path, problem: error.message, allowed: "a readable pattern file (.toml)")
            unreadable.kind = .unreadableFile
            throw unreadable
        }
        let fileName = String(path.split(separator: "/").last ?? Substring(path))
        let defaultName = fileName.hasSuffix(".toml") ? String(fileName.dropLast(5)) : fileName
        return try parse(text, path: path, defaultName: defaultName)
    }

    /// TOML text as a table; malformed TOML is an error naming the file and line. (Config
    /// files are read the same way, by GongPractice: hence `package`.)
    package static func table(_ text: String, path: String) throws(PatternError) -> TOMLTable {
        do {
            return try TOMLTable(string: text)
        } catch {
            throw PatternError(
                location: "\(path):\(error.line)", problem: "malformed TOML: \(error.description)",
                allowed: "TOML syntax (https://toml.io)")
        }
    }

    public static func parse(_ text: String, path: String, defaultName: String) throws(PatternError) -> Pattern {
        let table = try PatternFile.table(text, path: path)
        let reader = Reader(path: path, lines: TOMLLines(text))
        do {
            return try reader.pattern(table, defaultName: defaultName)
        } catch {
            // Problems found after parsing (validation) still get a line when the key can be found.
            if error.location == nil { throw error.located(reader.location(of: error.key)) }
            throw error
        }
    }

    private struct Reader {
        let path: String
        let lines: TOMLLines

        func location(of key: String?) -> String {
            guard let key, let line = lines.line(of: key) else { return path }
            return "\(path):\(line)"
        }

        func fail(_ key: String, _ value: String?, _ problem: String, allowed: String? = nil) -> PatternError {
            PatternError(location: location(of: key), key: key, value: value, problem: problem, allowed: allowed)
        }

        /// A TOML value as the person wrote it: strings without TOML's quotes.
        func display(_ value: TOMLValue) -> String {
            value.string ?? value.debugDescription
        }

        func checkKeys(_ table: TOMLTable, allowed: [String], in prefix: String) throws(PatternError) {
            for key in table.keys where !allowed.contains(key) {
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                throw fail(path, nil, "unknown key", allowed: "one of " + allowed.joined(separator: ", "))
            }
        }

        func pattern(_ table: TOMLTable, defaultName: String) throws(PatternError) -> Pattern {
            try checkKeys(
                table,
                allowed: [
                    "name", "summary", "warmup", "start", "end", "cycles", "duration", "pace", "phases", "bed"
                ],
                in: "")
            let name = try string(table, "name", key: "name") ?? defaultName
            let summary = try string(table, "summary", key: "summary") ?? ""
            let warmUp = try duration(table["warmup"], key: "warmup") ?? .zero
            let startCue = try cue(table["start"], key: "start")
            let endCue = try cue(table["end"], key: "end")
            let bed = try self.bed(table["bed"])

            var pace: Pace?
            if let value = table["pace"] {
                guard let paceTable = value.table else {
                    throw fail(
                        "pace", display(value), "must be a table", allowed: "[pace] with bpm (and to, over for a ramp)")
                }
                pace = try self.pace(paceTable)
            }

            var length: SessionLength
            switch (table["cycles"], table["duration"]) {
            case (.some, .some):
                throw fail(
                    "duration", nil, "cycles and duration cannot both be set", allowed: "one of cycles or duration")
            case (.some(let value), nil):
                guard let count = value.int else {
                    throw fail("cycles", display(value), "not a whole number", allowed: PatternLimits.cyclesAllowed)
                }
                length = .cycles(count)
            case (nil, .some(let value)):
                guard let seconds = try duration(value, key: "duration") else { throw fail("duration", nil, "missing") }
                length = .duration(seconds)
            case (nil, nil):
                length = .cycles(1)
            }

            guard let phaseArray = table["phases"]?.array else {
                throw fail(
                    "phases", table["phases"].map(display),
                    table["phases"] == nil ? "a pattern needs at least one phase" : "must be an array of tables",
                    allowed: "one or more [[phases]] with a name and a length")
            }
            var phases: [Phase] = []
            for index in 0..<phaseArray.count {
                guard let phaseTable = phaseArray[index].table else {
                    throw fail(
                        "phases[\(index)]", display(phaseArray[index]), "must be a table",
                        allowed: "[[phases]] with name and length")
                }
                phases.append(try phase(phaseTable, index: index, paced: pace != nil))
            }
            let open = phaseArray.indices.filter { phaseArray[$0].table?["length"]?.string == "open" }
            if let first = open.first {
                guard first == phaseArray.count - 1 else {
                    throw fail(
                        "phases[\(first)].length", "open", "only the last phase can be open",
                        allowed: "length = \"open\" on the last phase, or a duration such as 20m")
                }
                guard table["cycles"] == nil, table["duration"] == nil else {
                    throw fail(
                        table["cycles"] == nil ? "duration" : "cycles", nil,
                        "an open sit has no number of cycles or duration",
                        allowed: "remove it: an open phase lasts until you stop")
                }
                length = .open
            }
            var pattern = Pattern(
                name: name, summary: summary, warmUp: warmUp, startCue: startCue, phases: phases,
                length: length, pace: pace, endCue: endCue)
            pattern.bed = bed
            try pattern.validate()
            return pattern
        }

        func phase(_ table: TOMLTable, index: Int, paced: Bool) throws(PatternError) -> Phase {
            let key = "phases[\(index)]"
            try checkKeys(table, allowed: ["name", "length", "share", "cue", "motion", "bell"], in: key)
            let length: Rational
            if paced {
                guard table["length"] == nil else {
                    throw fail(
                        "\(key).length", nil, "a paced pattern measures phases in shares of a breath",
                        allowed: "share = 4 (with [pace] bpm), or remove [pace]")
                }
                guard let value = table["share"] else {
                    throw fail("\(key).share", nil, "missing", allowed: "a positive number such as 4")
                }
                guard let share = number(value), share.isPositive else {
                    throw fail(
                        "\(key).share", display(value), "must be a positive number",
                        allowed: "a positive number such as 4")
                }
                length = share
            } else {
                guard table["share"] == nil else {
                    throw fail(
                        "\(key).share", nil, "shares need a breathing rate",
                        allowed: "length = \"4s\", or add [pace] bpm = 6")
                }
                // An open phase lasts as long as a session may; `pattern` makes the session open.
                if table["length"]?.string == "open" {
                    return try phase(table, index: index, length: PatternLimits.maxSessionSeconds)
                }
                guard let seconds = try duration(table["length"], key: "\(key).length") else {
                    throw fail("\(key).length", nil, "missing", allowed: DurationText.allowed)
                }
                length = seconds
            }
            return try phase(table, index: index, length: length)
        }

        /// The rest of a phase, once its length is known.
        func phase(_ table: TOMLTable, index: Int, length: Rational) throws(PatternError) -> Phase {
            let key = "phases[\(index)]"
            guard let name = try string(table, "name", key: "\(key).name") else {
                throw fail("\(key).name", nil, "missing", allowed: "a name such as \"meditation\" or \"inhale\"")
            }
            var motion = BreathMotion.still
            if let text = try string(table, "motion", key: "\(key).motion") {
                guard let parsed = BreathMotion(rawValue: text) else {
                    throw fail("\(key).motion", text, "unknown motion", allowed: "one of inhale, hold, exhale, still")
                }
                motion = parsed
            }
            var bell: IntervalBell?
            if let value = table["bell"] {
                guard let bellTable = value.table else {
                    throw fail(
                        "\(key).bell", display(value), "must be a table",
                        allowed: "bell = { every = \"5m\", cue = \"bowl\" }")
                }
                try checkKeys(bellTable, allowed: ["every", "random", "cue"], in: "\(key).bell")
                let spacing = "every = \"5m\", or random = [\"3m\", \"8m\"] (the shortest and longest gap)"
                guard let bellCue = try cue(bellTable["cue"], key: "\(key).bell.cue") else {
                    throw fail(
                        "\(key).bell.cue", nil, "missing",
                        allowed: "a sound name such as bowl, or a path to a sound file")
                }
                switch (bellTable["every"], bellTable["random"]) {
                case (.some, .some):
                    throw fail("\(key).bell.random", nil, "every and random cannot both be set", allowed: spacing)
                case (nil, nil):
                    throw fail("\(key).bell.every", nil, "missing", allowed: spacing)
                case (.some(let value), nil):
                    guard let every = try duration(value, key: "\(key).bell.every") else {
                        throw fail("\(key).bell.every", nil, "missing", allowed: spacing)
                    }
                    bell = IntervalBell(every: every, cue: bellCue)
                case (nil, .some(let value)):
                    let randomKey = "\(key).bell.random"
                    guard let bounds = value.array, bounds.count == 2 else {
                        throw fail(randomKey, display(value), "must be two durations", allowed: spacing)
                    }
                    guard let shortest = try duration(bounds[0], key: randomKey),
                        let longest = try duration(bounds[1], key: randomKey)
                    else { throw fail(randomKey, display(value), "must be two durations", allowed: spacing) }
                    bell = IntervalBell(randomFrom: shortest, upTo: longest, cue: bellCue)
                }
            }
            return Phase(
                name, length: length, cue: try cue(table["cue"], key: "\(key).cue"), bell: bell, motion: motion)
        }

        func pace(_ table: TOMLTable) throws(PatternError) -> Pace {
            try checkKeys(table, allowed: ["bpm", "to", "over"], in: "pace")
            guard let value = table["bpm"] else {
                throw fail("pace.bpm", nil, "missing", allowed: PatternLimits.bpmAllowed)
            }
            guard let from = number(value) else {
                throw fail("pace.bpm", display(value), "not a number", allowed: PatternLimits.bpmAllowed)
            }
            guard let toValue = table["to"] else {
                guard table["over"] == nil else {
                    throw fail("pace.over", nil, "a ramp needs a target rate", allowed: "to = 4.5 with over")
                }
                return Pace(bpm: from)
            }
            guard let to = number(toValue) else {
                throw fail("pace.to", display(toValue), "not a number", allowed: PatternLimits.bpmAllowed)
            }
            guard let over = try duration(table["over"], key: "pace.over") else {
                throw fail("pace.over", nil, "a ramp needs to know how long it takes", allowed: "over = \"10m\"")
            }
            return Pace(from: from, to: to, over: over)
        }

        /// `bed = "brown-noise"`, or a table with `sound`, `gain`, `fade_in` and `fade_out`.
        func bed(_ value: TOMLValue?) throws(PatternError) -> Bed? {
            guard let value else { return nil }
            if let sound = value.string { return Bed(sound) }
            guard let table = value.table else {
                throw fail(
                    "bed", display(value), "not a bed",
                    allowed:
                        "a sound such as \"brown-noise\", or { sound = \"brown-noise\", gain = -18, fade_in = \"10s\", fade_out = \"20s\" }"
                )
            }
            try checkKeys(table, allowed: ["sound", "gain", "fade_in", "fade_out"], in: "bed")
            guard let sound = try string(table, "sound", key: "bed.sound") else {
                throw fail("bed.sound", nil, "missing", allowed: "a sound name such as brown-noise, or a path")
            }
            return Bed(
                sound, gainDB: try gain(table["gain"], key: "bed.gain") ?? Bed.defaultGainDB,
                fadeIn: try duration(table["fade_in"], key: "bed.fade_in") ?? Bed.defaultFadeIn,
                fadeOut: try duration(table["fade_out"], key: "bed.fade_out") ?? Bed.defaultFadeOut)
        }

        func cue(_ value: TOMLValue?, key: String) throws(PatternError) -> Cue? {
            guard let value else { return nil }
            if let sound = value.string { return Cue(sound) }
            guard let table = value.table else {
                throw fail(
                    key, display(value), "not a cue",
                    allowed: "a sound name such as \"gong\", a file path, or { sound = \"gong\", gain = -6 }")
            }
            try checkKeys(table, allowed: ["sound", "gain"], in: key)
            guard let sound = try string(table, "sound", key: "\(key).sound") else {
                throw fail(
                    "\(key).sound", nil, "missing", allowed: "a sound name such as gong, or a path to a sound file")
            }
            return Cue(sound, gainDB: try gain(table["gain"], key: "\(key).gain") ?? 0)
        }

        func gain(_ value: TOMLValue?, key: String) throws(PatternError) -> Double? {
            guard let value else { return nil }
            guard let decibels = value.double ?? value.int.map(Double.init) else {
                throw fail(key, display(value), "not a number", allowed: PatternLimits.gainAllowed)
            }
            return decibels
        }

        func string(_ table: TOMLTable, _ name: String, key: String) throws(PatternError) -> String? {
            guard let value = table[name] else { return nil }
            guard let text = value.string else {
                throw fail(key, display(value), "must be a string", allowed: "text in quotes")
            }
            return text
        }

        /// A duration string (`"4.5s"`) or a plain number of seconds.
        func duration(_ value: TOMLValue?, key: String) throws(PatternError) -> Rational? {
            guard let value else { return nil }
            if let text = value.string {
                if text.trimmingSpaces().hasPrefix("-") {
                    throw fail(key, text, "must be positive", allowed: DurationText.allowed)
                }
                guard let seconds = DurationText.seconds(text) else {
                    throw fail(key, text, "not a duration", allowed: DurationText.allowed)
                }
                return seconds
            }
            guard let seconds = number(value) else {
                throw fail(key, display(value), "not a duration", allowed: DurationText.allowed)
            }
            guard seconds >= .zero else {
                throw fail(key, display(value), "must be positive", allowed: DurationText.allowed)
            }
            return seconds
        }

        /// TOML integers exactly; TOML floats through their shortest decimal form, so `5.5`
        /// becomes exactly 11/2 and NaN or infinity become nothing.
        func number(_ value: TOMLValue) -> Rational? {
            if let integer = value.int { return Rational(Int64(integer)) }
            guard let double = value.double, double.isFinite else { return nil }
            let text = "\(double.magnitude)"
            guard !text.contains("e"), let magnitude = DurationText.decimal(text) else { return nil }
            return double < 0 ? Rational(-magnitude.numerator, magnitude.denominator) : magnitude
        }
    }
}

/// Finds the line a key was written on. The parsed values keep no source positions, so this reads
/// the text: `[[phases]]` headers are counted to find `phases[2]`, `[pace]` opens `pace.*`, and
/// inside a section the first line that assigns the key wins. (GongPractice's config file uses it
/// too.)
package struct TOMLLines {
    private let lines: [Substring]

    package init(_ text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    }

    package func line(of keyPath: String) -> Int? {
        var parts = keyPath.split(separator: ".").map(String.init)
        guard !parts.isEmpty else { return nil }
        var range = 0..<lines.count
        var fallback: Int?
        let first = parts[0]
        if let open = first.firstIndex(of: "["), first.hasSuffix("]"),
            let index = Int(first[first.index(after: open)..<first.index(before: first.endIndex)])
        {
            let table = String(first[..<open])
            var seen = -1
            var start: Int?
            for (number, line) in lines.enumerated() where header(line) == "[[\(table)]]" {
                seen += 1
                if seen == index { start = number; break }
            }
            guard let start else { return line(assigning: table, in: 0..<lines.count).map { $0 + 1 } }
            range = (start + 1)..<sectionEnd(after: start)
            fallback = start + 1
            parts.removeFirst()
        } else if parts.count > 1, let start = lines.firstIndex(where: { header($0) == "[\(first)]" }) {
            range = (start + 1)..<sectionEnd(after: start)
            fallback = start + 1
            parts.removeFirst()
        } else {
            range = 0..<sectionEnd(after: -1)
        }
        guard let key = parts.first else { return fallback }
        return line(assigning: key, in: range).map { $0 + 1 } ?? fallback
    }

    private func header(_ line: Substring) -> String? {
        let trimmed = line.trimmingSpaces()
        guard trimmed.hasPrefix("[") else { return nil }
        return String(trimmed.prefix { $0 != "#" }.filter { $0 != " " })
    }

    private func sectionEnd(after start: Int) -> Int {
        var index = start + 1
        while index < lines.count, header(lines[index]) == nil { index += 1 }
        return index
    }

    private func line(assigning key: String, in range: Range<Int>) -> Int? {
        range.first { number in
            let trimmed = lines[number].trimmingSpaces()
            guard trimmed.hasPrefix(key) else { return false }
            return trimmed.dropFirst(key.count).trimmingSpaces().hasPrefix("=")
        }
    }
}
