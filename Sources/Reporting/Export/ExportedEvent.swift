import Ledger

/// One event as exports carry it: flat columns for filtering and joining, and the whole
/// event as JSON with personal data opened or withheld.
public struct ExportedEvent: Sendable {
    public var sequence: UInt64
    public var recordedAt: Timestamp
    public var occurredAt: Timestamp?
    public var type: String
    public var schemaVersion: Int
    public var identifiers: Identifiers
    public var runID: String?
    /// The whole event as canonical JSON; every sealed value is replaced by the address (with
    /// personal data, and only while the user's key exists) or by null.
    public var eventJSON: [UInt8]
    /// The stored chain hash, hex.
    public var chainHash: String

    /// The column names, in the order every format writes them.
    public static let columns = [
        "seq", "recorded_at", "occurred_at", "type", "schema_version", "account_id", "sender_sub", "transfer_sub",
        "recipient_sub", "jti", "run_id", "event_json", "chain_hash",
    ]

    /// The values in ``columns`` order.
    public var cells: [ExportCell] { cells(eventJSON: .text(String(decoding: eventJSON, as: UTF8.self))) }

    /// The values in ``columns`` order, with `eventJSON` in the `event_json` column.
    private func cells(eventJSON: ExportCell) -> [ExportCell] {
        [.int(Int64(sequence)), .text(recordedAt.rfc3339), .text(occurredAt?.rfc3339), .text(type), .int(Int64(schemaVersion)),
         .text(identifiers.accountID), .text(identifiers.senderSub), .text(identifiers.transferSub), .text(identifiers.recipientSub),
         .text(identifiers.jti), .text(runID), eventJSON, .text(chainHash)]
    }

    /// One JSON-lines object in canonical form: the flat columns, with the event nested under
    /// `event_json`.
    public var jsonLine: [UInt8] { Self.layout.object(cells(eventJSON: .text(nil)), json: eventJSON) }

    private static let layout = JSONLineLayout(columns: columns, verbatim: "event_json")
}

/// A value in an exported row: text, integer, Boolean or null.
public enum ExportCell: Sendable, Equatable {
    case text(String?)
    case int(Int64?)
    case bool(Bool?)

    /// The value as CSV text (null as empty).
    var csvText: String {
        switch self {
        case .text(let v): return v ?? ""
        case .int(let v): return v.map(String.init) ?? ""
        case .bool(let v): return v.map { $0 ? "true" : "false" } ?? ""
        }
    }

    /// Writes the value as JSON (null for a missing value).
    func write(to w: inout JSONWriter) {
        switch self {
        case .text(let v?): w.string(v)
        case .int(let v?): w.int(v)
        case .bool(let v?): w.bool(v)
        default: w.raw(Array("null".utf8))
        }
    }
}
