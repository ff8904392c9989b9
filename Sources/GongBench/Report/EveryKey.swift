extension KeyedEncodingContainer {
    /// Each value under its key, a nil one as `null`, so a reader finds the same keys in every
    /// report (the synthesized encoding leaves a nil key out).
    mutating func encodeEvery(_ fields: KeyValuePairs<Key, any Encodable>) throws {
        for (key, value) in fields { try encode(value, forKey: key) }
    }
}
