import Basics
import LogEngine

/// A value an event holds in one field of its JSON: how it is written, and how it is read back.
///
/// Strings, integers, Booleans, times, arrays of strings, objects of counts, enumerations
/// (``FieldEnumeration``) and objects (``FieldObject``) are field values; an event's parts are
/// declared with them in ``FieldObject/fields(_:_:)``.
protocol FieldValue {
    /// What a reader expected, named in the error when the field is missing or is not this:
    /// "a string".
    static var expected: String { get }
    /// The value of member `key` of `object`, or nil when it has no such member.
    static func read(_ key: StaticString, of object: FieldReader) throws -> Self?
    /// Writes the value (its key is written already).
    func write(to w: inout JSONWriter)
}

extension String: FieldValue {
    static var expected: String { "a string" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> String? { try object.optionalString(key) }
    func write(to w: inout JSONWriter) { w.string(self) }
}

extension Int: FieldValue {
    static var expected: String { "an integer" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> Int? { try object.optionalInt(key) }
    func write(to w: inout JSONWriter) { w.int(self) }
}

extension Bool: FieldValue {
    static var expected: String { "a Boolean" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> Bool? { try object.optionalBool(key) }
    func write(to w: inout JSONWriter) { w.bool(self) }
}

extension Timestamp: FieldValue {
    static var expected: String { "an RFC 3339 time" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> Timestamp? { try object.optionalTimestamp(key) }
    func write(to w: inout JSONWriter) { w.timestamp(self) }
}

/// A value an event keeps in arrays: strings, and integers of 0 or more (sequences, row numbers).
protocol FieldArrayElement: FieldValue {
    /// What a reader expected of the array: "an array of strings".
    static var arrayExpected: String { get }
    /// The array member `key` of `object` holds, or nil when it has no such member.
    static func readArray(_ key: StaticString, of object: FieldReader) throws -> [Self]?
}

extension String: FieldArrayElement {
    static var arrayExpected: String { "an array of strings" }
    static func readArray(_ key: StaticString, of object: FieldReader) throws -> [String]? {
        object.has(key) ? try object.stringArray(key) : nil
    }
}

extension Int: FieldArrayElement {
    static var arrayExpected: String { "an array of integers" }
    static func readArray(_ key: StaticString, of object: FieldReader) throws -> [Int]? {
        object.has(key) ? try object.countArray(key) : nil
    }
}

extension Array: FieldValue where Element: FieldArrayElement {
    static var expected: String { Element.arrayExpected }
    static func read(_ key: StaticString, of object: FieldReader) throws -> [Element]? { try Element.readArray(key, of: object) }
    func write(to w: inout JSONWriter) {
        w.beginArray()
        for element in self { element.write(to: &w) }
        w.endArray()
    }
}

/// An object of counts (`counts`): names in canonical (UTF-8 byte) order, each an integer from
/// 0 to 2^32 − 1.
extension Dictionary: FieldValue where Key == String, Value == Int {
    static var expected: String { "an object of counts" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> [String: Int]? {
        object.has(key) ? try object.intMap(key) : nil
    }
    func write(to w: inout JSONWriter) { w.counts(self) }
}

/// An enumeration stored as its raw string; a string that names none of its cases is refused.
protocol FieldEnumeration: FieldValue, RawRepresentable where RawValue == String {}

extension FieldEnumeration {
    // A missing member is reported as a missing string, as the raw value is one.
    static var expected: String { "a string" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> Self? {
        guard let raw = try object.optionalString(key) else { return nil }
        guard let value = Self(rawValue: raw) else { throw object.refuse(key, expected: "one of the known values") }
        return value
    }
    func write(to w: inout JSONWriter) { w.string(rawValue) }
}

/// A batch's row tree root, as 64 lowercase hex digits (`rows_root`).
extension SHA256Hash: FieldValue {
    static var expected: String { "a SHA-256 in lowercase hex" }
    static func read(_ key: StaticString, of object: FieldReader) throws -> SHA256Hash? {
        guard let text = try object.optionalString(key) else { return nil }
        guard let root = Hex.decode(text).flatMap({ SHA256Hash($0) }), Hex.encode(root.bytes) == text else {
            throw object.refuse(key, expected: expected)
        }
        return root
    }
    func write(to w: inout JSONWriter) { w.string(Hex.encode(bytes)) }
}
