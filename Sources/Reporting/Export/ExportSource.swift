import Ledger
import Projections

/// Reads what an export writes, in one read transaction so users and events agree: the
/// events after a sequence number and the users whose state changed after it.
struct ExportSource {
    let ledger: Ledger
    let projection: UserProjection
    let includePersonalData: Bool

    /// Calls `event` for every event after `after`, then `user` for every user changed after
    /// `usersChangedAfter`; returns the last sequence number read.
    func read(after: UInt64, usersChangedAfter: UInt64, event: (ExportedEvent) throws -> Void, user: ([ExportCell]) throws -> Void) throws -> UInt64 {
        let sealer = includePersonalData ? ledger.sealer : nil
        return try projection.read(ledger) { snapshot, view in
            let last = try snapshot.checkpoint()
            if last > after {
                try view.transaction.withCursor(view.schema.log) { cursor in
                    var entry = try cursor.seek(atLeast: LedgerSchema.logKey(after + 1))
                    while let (key, value) = entry {
                        let sequence = BigEndian.uint64(key)
                        if sequence > last { break }
                        let recorded = try EventEnvelope(record: value, sequence: sequence)
                        try event(ExportedEvent(
                            sequence: sequence, recordedAt: recorded.recordedAt, occurredAt: recorded.occurredAt, type: recorded.type.rawValue,
                            schemaVersion: recorded.schemaVersion, identifiers: recorded.identifiers, runID: recorded.runID,
                            eventJSON: try eventJSON(UnsafeRawBufferPointer(rebasing: value[32...]), with: sealer),
                            chainHash: Hex.encode(UnsafeRawBufferPointer(rebasing: value[0..<32]))))
                        entry = try cursor.next()
                    }
                }
            }
            try withoutActuallyEscaping(user) { user in
                try ComplianceQueries(snapshot: snapshot, time: .now(), sealer: sealer).state(into: EachRow { row in
                    guard case .int(let changed) = row["last_sequence"], UInt64(changed) > usersChangedAfter else { return }
                    // Only an address in clear is exported: never "(sealed)" or "(erased)".
                    try user(zip(row.columns, row.cells).map { column, cell in
                        guard column == "email" else { return ExportCell(cell) }
                        if case .text(let email) = cell, email.utf8.contains(UInt8(ascii: "@")) { return .text(email) }
                        return .text(nil)
                    })
                })
            }
            return last
        }
    }

    /// The users columns: those of `handover query state`.
    static var userColumns: [String] { ComplianceQueries.stateColumns }

    /// The stored event JSON with each sealed value replaced by its address, or by null
    /// without a sealer or once the key is destroyed: in place on the canonical bytes, or
    /// through a parse for the odd value the fast path declines.
    private func eventJSON(_ stored: UnsafeRawBufferPointer, with sealer: Sealer?) throws -> [UInt8] {
        let replaced = try SealedValue.replacingSealedValues(in: stored) { sealed in
            guard let sealer, let address = try sealer.open(sealed) else { return Array("null".utf8) }
            var w = JSONWriter(capacity: address.utf8.count + 2)
            w.string(address)
            return w.bytes
        }
        if let replaced { return replaced }
        return try opening(try JSONValue.parse(stored), with: sealer).canonicalBytes
    }

    /// `value` with each sealed value (`{"alg","ct","kid"}`) replaced by its address, or by
    /// null without a sealer or once the key is destroyed.
    private func opening(_ value: JSONValue, with sealer: Sealer?) throws -> JSONValue {
        switch value {
        case .object(let fields):
            if fields.count == 3, fields["alg"]?.stringValue == SealedValue.algorithm,
               let kid = fields["kid"]?.stringValue, let ct = fields["ct"]?.stringValue {
                guard let sealer, let address = try sealer.open(SealedValue(keyID: kid, combined: ct)) else { return .null }
                return .string(address)
            }
            return .object(try fields.mapValues { try opening($0, with: sealer) })
        case .array(let items):
            return .array(try items.map { try opening($0, with: sealer) })
        default:
            return value
        }
    }
}

/// Hands each row of an answer to a closure as it is read.
private final class EachRow: RowSink {
    let body: (QueryTable.Row) throws -> Void
    init(_ body: @escaping (QueryTable.Row) throws -> Void) { self.body = body }
    func start(columns: [String]) {}
    func write(_ row: QueryTable.Row) throws { try body(row) }
    func finish() {}
}

extension ExportCell {
    init(_ cell: QueryTable.Cell) {
        switch cell {
        case .text(let s): self = .text(s)
        case .int(let i): self = .int(Int64(i))
        case .bool(let b): self = .bool(b)
        case .time(let t): self = .text(t.rfc3339)
        case .null: self = .text(nil)
        }
    }
}
