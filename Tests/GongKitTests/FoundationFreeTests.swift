import Foundation
import GongAudio
import GongCore
import GongKit
import Testing

@testable import GongPractice

/// gong's own stand-ins for what only full Foundation has (it brings ICU's data into every
/// binary), held against Foundation itself here, where the tests may import it: what gong prints
/// must not change by a byte.
@Suite struct FoundationFreeTests {
    static let figures: [Double] = [
        0, -0.0, 0.05, 0.15, 0.25, 0.35, 1.45, 2.5, -2.5, 0.125, 1e-7, 123.456_789, -6, 12, 0.049_999_999,
        1_234_567.891, 1e21, -1e-5, 99.95, 100, 0.1 + 0.2, 3600.000_5, .pi
    ]

    @Test func figuresReadAsStringFormatWritesThem() {
        for value in Self.figures {
            for digits in 0...3 {
                #expect(Figure.fixed(value, digits) == String(format: "%.\(digits)f", value))
                #expect(Figure.fixed(value, digits, signed: true) == String(format: "%+.\(digits)f", value))
            }
            #expect(Figure.general(value) == String(format: "%g", value))
            #expect(Figure.general(value, signed: true) == String(format: "%+g", value))
        }
        for value in [0, 7, 59, 2026, 123_456, -3] {
            #expect(Figure.zeroPadded(value, 2) == String(format: "%02d", value))
            #expect(Figure.zeroPadded(value, 4) == String(format: "%04d", value))
        }
        #expect(Figure.fixed(1e300, 1) == String(format: "%.1f", 1e300))
    }

    @Test func jsonIsWrittenAsJSONSerializationWroteIt() throws {
        let text = #"""
            {"schema":1,"type":"bell","bell":"2026-03-29 02:00","due":1774746000,"number":3,"openMs":12.345,
             "offMs":-0.5,"ok":true,"none":null,"list":[1,2.5,"a/b","\u00e9\n\t\"q\""],"Zeta":0,"alpha":{"B":1,"a":2},
             "a10":1,"a9":2,"cpuMs":2.0}
            """#
        let data = Data(text.utf8)
        let parsed = try #require(AnyJSON(parsing: data))
        let foundation = try JSONSerialization.data(
            withJSONObject: try JSONSerialization.jsonObject(with: data), options: [.sortedKeys])
        #expect(parsed.text() == String(decoding: foundation, as: UTF8.self))
    }

    @Test func jsonParsingRefusesWhatJSONSerializationRefuses() {
        for text in ["", "nope", "{\"a\":", "7", "\"text\""] {
            #expect(AnyJSON(parsing: Array(text.utf8)) == nil, "\(text)")
        }
        #expect(AnyJSON(parsing: Array("[1, {\"a\": true}]".utf8)) == .array([1, ["a": true]]))
    }

    @Test func textIsTrimmedAsFoundationTrimsIt() {
        for text in ["", "  ", " a b ", "\ta\t", " x\n", "\n x \n", "é ", "a"] {
            #expect(text.trimmingSpaces() == text.trimmingCharacters(in: .whitespaces), "\(text)")
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text)")
            for length in [0, 1, 3, 8] {
                #expect(text.padded(to: length) == text.padding(toLength: length, withPad: " ", startingAt: 0))
            }
        }
    }

    /// As NSString's `deletingLastPathComponent` documents it (the Foundation here traps on some
    /// of these, so the answers are written out).
    @Test func aPathsDirectoryIsWhatDeletingItsLastComponentLeaves() {
        let expected = ["/a/b/c": "/a/b", "/a": "/", "/": "/", "a": "", "a/b": "a", "/a/b/": "/a", "": ""]
        for (path, directory) in expected { #expect(parentDirectory(of: path) == directory, "\(path)") }
    }

    @Test func civilDatesAreTheGregorianCalendars() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        // From 1696 (Foundation's calendar is Julian before 1582) to 4160.
        for day in stride(from: -100_000, through: 800_000, by: 997) {
            let parts = calendar.dateComponents(
                [.year, .month, .day], from: Date(timeIntervalSince1970: Double(day) * 86400))
            let (year, month, dayOfMonth) = CivilDate.from(day: day)
            #expect([year, month, dayOfMonth] == [parts.year, parts.month, parts.day])
            #expect(CivilDate.day(year: year, month: month, day: dayOfMonth) == day)
        }
        #expect(CivilDate.day(year: 2026, month: 2, day: 29) == nil)
        #expect(CivilDate.day(year: 2024, month: 2, day: 29) != nil)
        #expect(CivilDate.day(year: 2026, month: 13, day: 1) == nil)
    }

    @Test func berlinsOffsetsAreTheTzDatabases() throws {
        let berlin = try #require(LocalZone(identifier: "Europe/Berlin"))
        let foundation = try #require(TimeZone(identifier: "Europe/Berlin"))
        // Every hour across both of 2026's changes, and a stretch of other years.
        let instants =
            Array(stride(from: Int64(1_774_656_000), to: 1_774_828_800, by: 900))
            + Array(stride(from: Int64(1_792_800_000), to: 1_792_972_800, by: 900))
            + Array(stride(from: Int64(-1_000_000_000), to: 4_000_000_000, by: 9_876_543))
        for instant in instants {
            #expect(
                berlin.secondsFromGMT(at: instant)
                    == foundation.secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant))), "\(instant)")
        }
        #expect(LocalZone(identifier: "Nowhere/Atlantis") == nil)
        #expect(LocalZone(identifier: "../../etc/passwd") == nil)
    }

    /// The machine's own zone, as `TZ` or `/etc/localtime` sets it: run the tests with `TZ` set
    /// to try another. (Held against the tz database's zone of that name, not Foundation's
    /// `TimeZone.current`: that one is read once and kept, and a named zone's offsets are found
    /// with `TZ` set to it for a moment.)
    @Test func theMachinesZoneIsTheOneItsNameSays() throws {
        // TZ as the process started with it (another test may have it set to a named zone now).
        let environment = try String(contentsOfFile: "/proc/self/environ", encoding: .utf8)
        let tz = environment.split(separator: "\0").first { $0.hasPrefix("TZ=") }.map { String($0.dropFirst(3)) }
            .flatMap { $0.isEmpty ? nil : $0 }
        if let tz { #expect(LocalZone.current.identifier == (tz.hasPrefix(":") ? String(tz.dropFirst()) : tz)) }
        let zone = try #require(TimeZone(identifier: LocalZone.current.identifier))
        let named = try #require(LocalZone(identifier: "Asia/Tokyo"))
        for instant in stride(from: Int64(1_700_000_000), to: 1_900_000_000, by: 3_456_789) {
            let date = Date(timeIntervalSince1970: Double(instant))
            #expect(LocalZone.current.secondsFromGMT(at: instant) == zone.secondsFromGMT(for: date))
            // A named zone asked for in between leaves the machine's as it was.
            #expect(named.secondsFromGMT(at: instant) == 9 * 3600)
            #expect(LocalZone.current.secondsFromGMT(for: date) == zone.secondsFromGMT(for: date))
        }
    }
}
