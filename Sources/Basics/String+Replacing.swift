extension String {
    /// The text with every occurrence of `target` replaced by `replacement`, found by its UTF-8
    /// bytes. Foundation's `replacingOccurrences(of:with:)` compares characters, and a quote
    /// followed by a combining mark is one character that is not a quote, though SQL and a shell
    /// read a quote there: quoting for them must find every one.
    public func replacingEvery(_ target: String, with replacement: String) -> String {
        let needle = Array(target.utf8)
        guard let head = needle.first else { return self }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var bytes = utf8[...]
        while let byte = bytes.first {
            if byte == head, bytes.starts(with: needle) {
                out.append(contentsOf: replacement.utf8)
                bytes = bytes.dropFirst(needle.count)
            } else {
                out.append(byte)
                bytes = bytes.dropFirst()
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
