import Basics
import Ledger
import Projections

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

    public typealias Column = AnswerColumn<ExportedEvent>

    /// The columns, in the order every format writes them (``ExportAnswers/events``).
    static let columns: [Column] = [
        SharedColumns.sequence { $0.sequence }, SharedColumns.recordedAt { $0.recordedAt }, SharedColumns.occurredAt { $0.occurredAt },
        SharedColumns.eventType { $0.type },
        Column("schema_version", .integer, optional: false, "The version of the event type's schema the event was written under.") {
            .int($0.schemaVersion)
        },
        SharedColumns.accountID { $0.identifiers.accountID }, SharedColumns.senderSub { $0.identifiers.senderSub },
        SharedColumns.transferSub { $0.identifiers.transferSub }, SharedColumns.recipientSub { $0.identifiers.recipientSub },
        Column("jti", .text, "The notification's `jti` (notifications only).") { .text($0.identifiers.jti) },
        Column("run_id", .text, "The batch run that recorded the event.") { .text($0.runID) },
        Column(
            "event_json", .json, optional: false, personal: true,
            "The whole event as canonical JSON; sealed values opened (with personal data, while the user's key exists) or null."
        ) {
            .text(String(decoding: $0.eventJSON, as: UTF8.self))
        },
        Column("chain_hash", .text, optional: false, "The hex SHA-256 chain hash stored with the event.") { .text($0.chainHash) },
    ]

    /// One JSON-lines object in canonical form: the flat columns, with the event nested under
    /// `event_json`.
    public var jsonLine: [UInt8] { Self.layout.object(ExportAnswers.events.cells(self, skipping: Self.eventJSONIndex), json: eventJSON) }

    private static let layout = JSONLineLayout(columns: ExportAnswers.events.names, verbatim: "event_json")
    /// Where `event_json` stands: JSON lines nest the event as it is, without making it a string.
    private static let eventJSONIndex = ExportAnswers.events.names.firstIndex(of: "event_json")!
}
