import Basics
import LogEngine

/// What a ``FieldObject``'s field list is run with: a writer (``SortedObjectWriter``), which
/// writes each field of the object it is given, or a reader (``FieldReader``), which reads each
/// field of the stored object.
///
/// Each call names one field and its value in the object being written (nil when reading) and
/// returns the field's value: the one given when writing, the one read when reading. A field list
/// builds its object from what the calls return, so one list is both the encoding and the
/// decoding, and the order of its calls is free: the writer sorts the keys.
protocol FieldCoder {
    /// Whether the coder reads values (else it writes them).
    static var isReading: Bool { get }
    /// An optional field: written when `value` is not nil; read as nil when the member is absent.
    mutating func optional<T: FieldValue>(_ key: StaticString, _ value: T?) throws -> T?
    /// The error that the object (or its member `key`) is not what it must be: `problem` says how.
    func refuse(_ key: StaticString?, _ problem: String) -> LedgerError
}

extension FieldCoder {
    /// The error that member `key` is missing or holds something other than `expected`.
    func refuse(_ key: StaticString, expected: String) -> LedgerError { refuse(key, "expected \(expected)") }

    /// A field every object has.
    mutating func field<T: FieldValue>(_ key: StaticString, _ value: T?) throws -> T {
        guard let found = try optional(key, value) else { throw refuse(key, expected: T.expected) }
        return found
    }

    /// An integer within `allowed`: a number the code computes with (a day count, a size).
    /// Checked when read; a writer writes what it is given.
    mutating func field(_ key: StaticString, _ value: Int?, in allowed: ClosedRange<Int>) throws -> Int {
        guard let found = try optional(key, value, in: allowed) else { throw refuse(key, expected: Self.expected(allowed)) }
        return found
    }

    /// An optional integer within `allowed`.
    mutating func optional(_ key: StaticString, _ value: Int?, in allowed: ClosedRange<Int>) throws -> Int? {
        let found: Int?
        do { found = try optional(key, value) } catch { throw refuse(key, expected: Self.expected(allowed)) }
        guard let found else { return nil }
        guard !Self.isReading || allowed.contains(found) else { throw refuse(key, expected: Self.expected(allowed)) }
        return found
    }

    /// An integer that counts or sizes something: 0 or more.
    mutating func count(_ key: StaticString, _ value: Int?) throws -> Int {
        let found: Int?
        do { found = try optional(key, value) } catch { throw refuse(key, expected: "an integer of 0 or more") }
        guard let found, !Self.isReading || found >= 0 else { throw refuse(key, expected: "an integer of 0 or more") }
        return found
    }

    private static func expected(_ allowed: ClosedRange<Int>) -> String { "an integer from \(allowed.lowerBound) to \(allowed.upperBound)" }

    /// A field whose value is fixed (`SealedValue`'s algorithm): written as `constant`, and refused
    /// when read as anything else.
    mutating func constant(_ key: StaticString, _ constant: String) throws {
        guard try field(key, constant) == constant else { throw refuse(key, expected: constant) }
    }

    /// A flag written only when true (`since_last`); absent reads as false.
    mutating func flag(_ key: StaticString, _ value: Bool?) throws -> Bool {
        try optional(key, value == true ? true : nil) ?? false
    }
}

extension FieldReader: FieldCoder {
    static var isReading: Bool { true }

    mutating func optional<T: FieldValue>(_ key: StaticString, _ value: T?) throws -> T? { try T.read(key, of: self) }
}
