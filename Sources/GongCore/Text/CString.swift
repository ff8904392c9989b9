extension String {
    /// The text a C call wrote into `buffer`, up to its first NUL (all of it if none), decoded as
    /// UTF-8 with anything invalid replaced: `String(cString:)` on an array, which Swift 6.2
    /// deprecated, and which read past an array with no NUL in it.
    public init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
