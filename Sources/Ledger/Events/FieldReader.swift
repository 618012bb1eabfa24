/// Reads typed fields out of a parsed JSON object, naming the field in every error.
struct FieldReader {
    let fields: [String: JSONValue]
    let context: String

    init(_ value: JSONValue, context: String) throws {
        guard let fields = value.objectValue else { throw LedgerError(.malformedRecord, "\(context): expected an object") }
        self.fields = fields
        self.context = context
    }

    private func fail(_ key: String, _ expected: String) -> LedgerError {
        LedgerError(.malformedRecord, "\(context).\(key): expected \(expected)")
    }

    func string(_ key: String) throws -> String {
        guard let s = fields[key]?.stringValue else { throw fail(key, "a string") }
        return s
    }
    func optionalString(_ key: String) throws -> String? {
        guard let v = fields[key] else { return nil }
        guard let s = v.stringValue else { throw fail(key, "a string") }
        return s
    }
    func int(_ key: String) throws -> Int {
        guard let i = fields[key]?.intValue else { throw fail(key, "an integer") }
        return Int(i)
    }
    func optionalInt(_ key: String) throws -> Int? {
        guard let v = fields[key] else { return nil }
        guard let i = v.intValue else { throw fail(key, "an integer") }
        return Int(i)
    }
    func optionalBool(_ key: String) throws -> Bool? {
        guard let v = fields[key] else { return nil }
        guard let b = v.boolValue else { throw fail(key, "a Boolean") }
        return b
    }
    func timestamp(_ key: String) throws -> Timestamp {
        guard let t = try optionalTimestamp(key) else { throw fail(key, "an RFC 3339 time") }
        return t
    }
    func optionalTimestamp(_ key: String) throws -> Timestamp? {
        guard let v = fields[key] else { return nil }
        guard let s = v.stringValue, let t = Timestamp(rfc3339: s) else { throw fail(key, "an RFC 3339 time") }
        return t
    }
    func object(_ key: String) throws -> FieldReader {
        guard let v = fields[key] else { throw fail(key, "an object") }
        return try FieldReader(v, context: "\(context).\(key)")
    }
    func optionalObject(_ key: String) throws -> FieldReader? {
        guard let v = fields[key] else { return nil }
        return try FieldReader(v, context: "\(context).\(key)")
    }
    func stringArray(_ key: String) throws -> [String] {
        guard let items = fields[key]?.arrayValue else { throw fail(key, "an array of strings") }
        return try items.map { item in
            guard let s = item.stringValue else { throw fail(key, "an array of strings") }
            return s
        }
    }
    /// An object of integers (`counts`).
    func intMap(_ key: String) throws -> [String: Int] {
        guard let object = fields[key]?.objectValue else { throw fail(key, "an object of integers") }
        return try object.mapValues { v in
            guard let i = v.intValue else { throw fail(key, "an object of integers") }
            return Int(i)
        }
    }
    func enumeration<E: RawRepresentable>(_ key: String, _ type: E.Type) throws -> E where E.RawValue == String {
        guard let e = E(rawValue: try string(key)) else { throw fail(key, "one of the known values") }
        return e
    }
}
