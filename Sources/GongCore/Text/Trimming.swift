extension StringProtocol {
    /// Without the spaces and tabs at either end: what typing leaves around a word or a value.
    /// Line breaks stay (Foundation's `.whitespaces`, without Foundation).
    public func trimmingSpaces() -> String {
        trimming { $0.isWhitespace && !$0.isNewline }
    }

    /// Without the white space, line breaks included, at either end (a tool's output line).
    public func trimmingWhitespace() -> String {
        trimming(where: \.isWhitespace)
    }

    /// Without the characters at either end that `isTrimmed` picks.
    public func trimming(where isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(self[first...last])
    }

    /// Cut or filled with spaces to `length` characters: a column of a table.
    public func padded(to length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}
