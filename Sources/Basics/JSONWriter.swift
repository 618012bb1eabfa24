/// Writes the ledger's canonical JSON straight into a byte buffer.
///
/// Canonical means: object keys in ascending byte order, no whitespace, integers in plain
/// decimal, absent optionals omitted (never `null`), strings escaped exactly as Python's
/// `json.dumps(..., ensure_ascii=False)` does. A caller writing keys one by one writes them in
/// sorted order; an event's parts are written through their field lists, whose writer sorts them.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8]

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    private mutating func separate() {
        if let last = bytes.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "["), last != UInt8(ascii: ":") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    /// Opens an object (as a value, or at the top level).
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
    }
    /// Closes the innermost object.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }
    /// Opens an array.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
    }
    /// Closes the innermost array.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Writes an object key; the value must follow.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes an object key given at run time (already known to be sorted by the caller).
    public mutating func dynamicKey(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }
    /// Writes an integer value.
    public mutating func int<I: BinaryInteger>(_ value: I) {
        separate()
        if value == 0 {
            bytes.append(48)
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        guard let magnitude = UInt64(exactly: value.magnitude) else {
            bytes.append(contentsOf: String(value.magnitude).utf8)
            return
        }
        // Digits from the right into a stack buffer: no array per number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = magnitude
            var start = 20
            while v > 0 {
                start -= 1
                digits[start] = UInt8(truncatingIfNeeded: 48 + v % 10)
                v /= 10
            }
            bytes.append(contentsOf: UnsafeMutableBufferPointer(rebasing: digits[start...]))
        }
    }
    /// Writes `null` (for a value a format holds as null; an absent optional is omitted instead).
    public mutating func null() {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }
    /// Writes a timestamp as its RFC 3339 string.
    public mutating func timestamp(_ value: Timestamp) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        value.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
    /// Appends bytes that are already a complete canonical JSON value.
    public mutating func raw(_ value: [UInt8]) {
        separate()
        bytes.append(contentsOf: value)
    }

    // Optional helpers: write the key only when there is a value.

    /// Writes `key: value` when `value` is not nil.
    public mutating func field(_ key: StaticString, _ value: String?) {
        if let value {
            self.key(key)
            string(value)
        }
    }
    /// Writes `key: value` when `value` is not nil.
    public mutating func field<I: BinaryInteger>(_ key: StaticString, _ value: I?) {
        if let value {
            self.key(key)
            int(value)
        }
    }
    /// Writes `key: value` when `value` is not nil.
    public mutating func field(_ key: StaticString, _ value: Bool?) {
        if let value {
            self.key(key)
            bool(value)
        }
    }
    /// Writes `key: value` when `value` is not nil.
    public mutating func field(_ key: StaticString, _ value: Timestamp?) {
        if let value {
            self.key(key)
            timestamp(value)
        }
    }

    /// `"key": [string, ...]`, in the sequence's order.
    public mutating func field(_ key: StaticString, strings values: some Sequence<String>) {
        self.key(key)
        strings(values)
    }
    /// Writes `[string, ...]`, in the sequence's order.
    public mutating func strings(_ values: some Sequence<String>) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }
    /// `"key": [integer, ...]`, in the sequence's order.
    public mutating func field<I: BinaryInteger>(_ key: StaticString, integers values: some Sequence<I>) {
        self.key(key)
        beginArray()
        for value in values { int(value) }
        endArray()
    }

    /// `"key": {name: count, ...}` with the names in canonical (UTF-8 byte) order.
    public mutating func field(_ key: StaticString, counts: [String: Int]) {
        self.key(key)
        self.counts(counts)
    }
    /// Writes `{name: count, ...}` with the names in canonical (UTF-8 byte) order.
    public mutating func counts(_ counts: [String: Int]) {
        beginObject()
        for name in counts.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            dynamicKey(name)
            int(counts[name]!)
        }
        endObject()
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for i in 0..<utf8.count {
                let c = utf8[i]
                guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i]))
                start = i + 1
                bytes.append(UInt8(ascii: "\\"))
                switch c {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), 48, 48, JSONWriter.hex[Int(c >> 4)], JSONWriter.hex[Int(c & 15)]])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
