import CGongTOML
import Glibc

/// A TOML document read by toml++ (Debian's libtomlplusplus), copied into Swift values.
///
/// Tables keep toml++'s order, their keys sorted, so the first unknown key named in an error is
/// always the same one. Arrays and tables also keep the text toml++ writes for them, which an
/// error shows when such a value is not what a key takes.
package struct TOMLTable: Sendable, Equatable, Sequence {
    package let entries: [(key: String, value: TOMLValue)]
    /// As toml++ writes it.
    package let text: String

    /// Parses a whole document.
    package init(string: String) throws(TOMLParseError) {
        var error = gong_toml_error()
        let parsed = string.utf8CString.withUnsafeBufferPointer { bytes in
            gong_toml_parse(bytes.baseAddress, bytes.count - 1, &error)
        }
        guard let root = parsed else {
            defer { free(error.description) }
            throw TOMLParseError(
                description: error.description.map { String(cString: $0) } ?? "cannot be parsed",
                line: Int(error.line))
        }
        defer { gong_toml_free(root) }
        self.init(root, text: "")
    }

    fileprivate init(_ node: OpaquePointer, text: String) {
        entries = (0..<gong_toml_count(node)).map { index in
            var length = 0
            let key = gong_toml_key(node, index, &length)
            return (Self.text(key, length), TOMLValue(gong_toml_element(node, index)))
        }
        self.text = text
    }

    fileprivate static func text(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let bytes else { return "" }
        return bytes.withMemoryRebound(to: UInt8.self, capacity: length) { start in
            String(decoding: UnsafeBufferPointer(start: start, count: length), as: UTF8.self)
        }
    }

    package var keys: [String] { entries.map(\.key) }

    package subscript(key: String) -> TOMLValue? { entries.first { $0.key == key }?.value }

    package func makeIterator() -> some IteratorProtocol<(key: String, value: TOMLValue)> { entries.makeIterator() }

    package static func == (left: TOMLTable, right: TOMLTable) -> Bool {
        left.keys == right.keys && left.entries.map(\.value) == right.entries.map(\.value)
    }
}

/// One value of a TOML document.
package enum TOMLValue: Sendable, Equatable, CustomDebugStringConvertible {
    case string(String)
    case integer(Int64)
    case float(Double)
    case boolean(Bool)
    /// A date, a time or both, as TOML writes it: gong reads none, but names them in errors.
    case dateTime(String)
    /// The elements, and the array as toml++ writes it.
    case array([TOMLValue], text: String)
    case table(TOMLTable)

    fileprivate init(_ node: OpaquePointer!) {
        switch gong_toml_type_of(node) {
        case GONG_TOML_TABLE:
            self = .table(TOMLTable(node, text: Self.text(of: node)))
        case GONG_TOML_ARRAY:
            self = .array(
                (0..<gong_toml_count(node)).map { TOMLValue(gong_toml_element(node, $0)) }, text: Self.text(of: node))
        case GONG_TOML_STRING:
            var length = 0
            let bytes = gong_toml_string(node, &length)
            self = .string(TOMLTable.text(bytes, length))
        case GONG_TOML_INTEGER: self = .integer(gong_toml_integer(node))
        case GONG_TOML_FLOAT: self = .float(gong_toml_float(node))
        case GONG_TOML_BOOLEAN: self = .boolean(gong_toml_boolean(node))
        default: self = .dateTime(Self.text(of: node))
        }
    }

    private static func text(of node: OpaquePointer) -> String {
        guard let text = gong_toml_text(node) else { return "" }
        defer { free(text) }
        return String(cString: text)
    }

    package var string: String? { if case .string(let text) = self { text } else { nil } }
    package var int: Int? { if case .integer(let value) = self { Int(value) } else { nil } }
    /// A float only: an integer is not taken for one.
    package var double: Double? { if case .float(let value) = self { value } else { nil } }
    package var bool: Bool? { if case .boolean(let value) = self { value } else { nil } }
    package var array: [TOMLValue]? { if case .array(let elements, _) = self { elements } else { nil } }
    package var table: TOMLTable? { if case .table(let table) = self { table } else { nil } }

    /// The value as written in an error: strings quoted, numbers as Swift prints them, arrays
    /// and tables as toml++ writes them.
    package var debugDescription: String {
        switch self {
        case .string(let text): "\"" + text + "\""
        case .integer(let value): String(value)
        case .float(let value): String(value)
        case .boolean(let value): String(value)
        case .dateTime(let text): text
        case .array(_, let text): text
        case .table(let table): table.text
        }
    }
}

/// Text that is not TOML: toml++'s words, and the line (from 1) where it stopped.
package struct TOMLParseError: Error, Sendable {
    package let description: String
    package let line: Int
}
