import Basics

/// A part of an event stored as one JSON object (a body, or an object inside one), declared once
/// by its field list: ``fields(_:_:)`` is both how it is written and how it is read.
///
/// ```swift
/// extension TokenRejected: FieldObject {
///     static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
///         Self(reason: try c.field("reason", v?.reason), detail: try c.field("detail", v?.detail),
///              payloadSHA256: try c.field("payload_sha256", v?.payloadSHA256))
///     }
/// }
/// ```
///
/// The writer emits the keys in canonical order whatever the order of the calls, so an object
/// cannot be written with its keys out of order.
protocol FieldObject: FieldValue {
    /// Runs `c` over each field of the object: `v` is the object when writing, nil when reading;
    /// returns the object made of the values the calls return.
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self
}

extension FieldObject {
    static var expected: String { "an object" }

    static func read(_ key: StaticString, of object: FieldReader) throws -> Self? {
        try object.optionalObject(key).map(Self.init(reading:))
    }

    /// The object `r` holds.
    init(reading r: FieldReader) throws {
        var r = r
        self = try Self.fields(&r, nil)
    }

    func write(to w: inout JSONWriter) {
        var writer = SortedObjectWriter(continuing: &w)
        do { _ = try Self.fields(&writer, self) } catch { preconditionFailure("writing \(Self.self) cannot fail: \(error)") }
        writer.finish(into: &w)
    }
}
