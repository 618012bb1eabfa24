import LogEngine

#if canImport(Glibc)
import Basics
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ledger's reading of the fields of a stored event the log's indexes are built from
/// (`seq`, `recorded_at`, `type` and the idempotency key's index hash), in one pass that checks
/// the JSON's syntax and builds nothing: what `verify` reads of every event, handed to the
/// engine's check as ``LogRecordFormat/ledgerEvents``.
///
/// It reads the form the ledger writes. Anything else (an escaped time, an unknown type, a
/// repeated top-level key, no object at all) is not read here: the caller decodes that record
/// in full, which either reads it or names what is wrong.
extension IndexedFields {
    /// The fields of an event's stored JSON; nil when it is not in the ledger's own form.
    init?(json bytes: UnsafeRawBufferPointer) {
        // The top-level names read so far, to refuse one given twice (an event has about ten).
        guard let fields = withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: 16, { Self.read(bytes, names: $0) }) else { return nil }
        self = fields
    }

    /// The fields of an event decoded in full.
    init(_ event: RecordedEvent) {
        self.init(
            sequence: event.sequence, recordedAt: event.recordedAt, type: EventType.allCases.firstIndex(of: event.type)!,
            idempotencyHash: event.idempotencyKey.map { key in Array(key.utf8).withUnsafeBytes { LedgerSchema.idempotencyHash(utf8: $0) } })
    }

    private static func read(_ bytes: UnsafeRawBufferPointer, names: UnsafeMutableBufferPointer<Range<Int>>) -> IndexedFields? {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else { return nil }
        parser.index += 1
        var seq: Range<Int>?
        var recorded: Range<Int>?
        var type: Range<Int>?
        var key: Range<Int>?
        var count = 0
        while true {
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\""), count < names.count else { return nil }
            let nameStart = parser.index + 1
            do { try parser.skipString() } catch { return nil }
            let name = nameStart..<(parser.index - 1)
            guard !names.prefix(count).contains(where: { equal(bytes, $0, name) }) else { return nil }
            names[count] = name
            count += 1
            parser.skipWhitespace()
            guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: ":") else { return nil }
            parser.index += 1
            parser.skipWhitespace()
            let valueStart = parser.index
            do { try parser.skipValue(depth: 1) } catch { return nil }
            let value = valueStart..<parser.index
            if equal(bytes, name, "seq") {
                seq = value
            } else if equal(bytes, name, "recorded_at") {
                recorded = value
            } else if equal(bytes, name, "type") {
                type = value
            } else if equal(bytes, name, "idempotency_key") {
                key = value
            }
            parser.skipWhitespace()
            guard parser.index < bytes.count else { return nil }
            if bytes[parser.index] == UInt8(ascii: ",") {
                parser.index += 1
                continue
            }
            guard bytes[parser.index] == UInt8(ascii: "}") else { return nil }
            parser.index += 1
            break
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count, let seq, let recorded, let type else { return nil }
        guard let sequence = positiveInteger(bytes, seq),
            recorded.count == 29, bytes[recorded.lowerBound] == UInt8(ascii: "\""),
            let recordedAt = Timestamp(rfc3339UTF8: UnsafeRawBufferPointer(rebasing: bytes[(recorded.lowerBound + 1)..<(recorded.upperBound - 1)])),
            let eventType = eventType(bytes, type)
        else { return nil }
        var hash: UInt64?
        if let key {
            guard let keyHash = idempotencyHash(bytes, key) else { return nil }
            hash = keyHash
        }
        return IndexedFields(sequence: sequence, recordedAt: recordedAt, type: eventType, idempotencyHash: hash)
    }

    /// The index hash of the string value at `range`: of its bytes as they stand when it has
    /// no escapes, else of the string it decodes to.
    private static func idempotencyHash(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        let inner = UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)])
        guard inner.contains(UInt8(ascii: "\\")) else { return LedgerSchema.idempotencyHash(utf8: inner) }
        var parser = JSONParser(bytes: bytes)
        parser.index = range.lowerBound
        guard let decoded = try? parser.parseString() else { return nil }
        return Array(decoded.utf8).withUnsafeBytes { LedgerSchema.idempotencyHash(utf8: $0) }
    }

    /// A run of 1 to 18 ASCII digits, not 0.
    private static func positiveInteger(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> UInt64? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value: UInt64 = 0
        for i in range {
            let digit = bytes[i] &- 48
            guard digit < 10 else { return nil }
            value = value * 10 + UInt64(digit)
        }
        return value > 0 ? value : nil
    }

    /// The position in ``EventType/allCases`` of the type the quoted name at `range` names, if
    /// it names one without escapes.
    private static func eventType(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return nil }
        let name = (range.lowerBound + 1)..<(range.upperBound - 1)
        return typeNames.firstIndex { equal(bytes, name, $0) }
    }

    private static let typeNames: [[UInt8]] = EventType.allCases.map { Array($0.rawValue.utf8) }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && memcmp(bytes.baseAddress! + a.lowerBound, bytes.baseAddress! + b.lowerBound, a.count) == 0
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ a: Range<Int>, _ name: StaticString) -> Bool {
        a.count == name.utf8CodeUnitCount && memcmp(bytes.baseAddress! + a.lowerBound, name.utf8Start, a.count) == 0
    }

    private static func equal(_ bytes: UnsafeRawBufferPointer, _ a: Range<Int>, _ name: [UInt8]) -> Bool {
        a.count == name.count && name.withUnsafeBytes { memcmp(bytes.baseAddress! + a.lowerBound, $0.baseAddress!, a.count) == 0 }
    }
}
