import FoundationEssentials

/// A JSON value of any shape: a control request, a line of options, a reply gong reads a few
/// fields of. Read and written with Foundation's Codable JSON, which FoundationEssentials has
/// (its `JSONSerialization` would bring ICU's data into every binary).
public enum AnyJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([AnyJSON])
    case object([String: AnyJSON])

    /// Nil when `data` is not JSON, or is JSON but neither an object nor an array (as
    /// `JSONSerialization` refuses a bare value).
    public init?(parsing data: some Collection<UInt8>) {
        guard let value = try? JSONDecoder().decode(AnyJSON.self, from: Data(data)) else { return nil }
        switch value {
        case .object, .array: self = value
        default: return nil
        }
    }

    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> AnyJSON? {
        if case .object(let members) = self { members[key] } else { nil }
    }

    public var object: [String: AnyJSON]? { if case .object(let members) = self { members } else { nil } }
    public var array: [AnyJSON]? { if case .array(let elements) = self { elements } else { nil } }
    public var string: String? { if case .string(let text) = self { text } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var double: Double? { if case .number(let value) = self { value } else { nil } }
    /// A number with no fraction that fits an `Int`.
    public var int: Int? { double.flatMap { Int(exactly: $0) } }

    /// Compact JSON, keys sorted as `JSONSerialization`'s `.sortedKeys` sorts them (see
    /// `keyPrecedes`), so what gong writes reads as it did when it wrote through Foundation.
    public func text(sortedKeys: Bool = true) -> String {
        switch self {
        case .object(let members):
            let keys = sortedKeys ? members.keys.sorted(by: Self.keyPrecedes) : Array(members.keys)
            let pairs = keys.map { key in
                Self.scalarText(.string(key)) + ":" + members[key]!.text(sortedKeys: sortedKeys)
            }
            return "{" + pairs.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + elements.map { $0.text(sortedKeys: sortedKeys) }.joined(separator: ",") + "]"
        default:
            return Self.scalarText(self)
        }
    }

    /// A string, number, boolean or null as `JSONEncoder` writes it (escapes as
    /// `JSONSerialization` does, `/` included).
    private static func scalarText(_ value: AnyJSON) -> String {
        // Every scalar encodes (a non-finite number is written null: JSON has none).
        guard let data = try? JSONEncoder().encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The order of `JSONSerialization`'s `.sortedKeys` (a numeric, case-insensitive comparison):
    /// letters regardless of case, runs of digits by their value (`a9` before `a10`), and the
    /// characters exactly only where that finds no difference.
    static func keyPrecedes(_ first: String, _ second: String) -> Bool {
        var left = Array(first.unicodeScalars)[...]
        var right = Array(second.unicodeScalars)[...]
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
        while let a = left.first, let b = right.first {
            if isDigit(a) && isDigit(b) {
                let leftRun = left.prefix(while: isDigit).drop { $0 == "0" }
                let rightRun = right.prefix(while: isDigit).drop { $0 == "0" }
                left = left.drop(while: isDigit)
                right = right.drop(while: isDigit)
                if leftRun.count != rightRun.count { return leftRun.count < rightRun.count }
                if let (x, y) = zip(leftRun, rightRun).first(where: { $0 != $1 }) { return x < y }
                continue
            }
            let (x, y) = (a.properties.lowercaseMapping, b.properties.lowercaseMapping)
            if x != y { return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) }
            left.removeFirst()
            right.removeFirst()
        }
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return first.unicodeScalars.lexicographicallyPrecedes(second.unicodeScalars)
    }
}

extension AnyJSON: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([AnyJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: AnyJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            guard value.isFinite else { return try container.encodeNil() }
            // Whole numbers as integers, as JSONSerialization writes an integer it read.
            if let whole = Int(exactly: value) { try container.encode(whole) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension AnyJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(dictionaryLiteral elements: (String, AnyJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// A whole number (a count, a moment in seconds).
    public init(_ value: some BinaryInteger) { self = .number(Double(value)) }
}
