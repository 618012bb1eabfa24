import Basics
import LogEngine

/// An event as a caller hands it to ``Ledger/append(_:)``: everything but the sequence
/// number and recorded time, which the ledger's writer assigns (``Ledger/append(_:)``).
public struct EventDraft: Hashable, Sendable {
    public var body: EventBody
    public var identifiers: Identifiers
    /// When the source says it happened (Apple's `event_time`, a token's `iat`).
    public var occurredAt: Timestamp?
    /// A key unique across the ledger; a second append with it is a duplicate, not written.
    public var idempotencyKey: String?
    /// The batch run this event belongs to, if any.
    public var runID: String?

    public init(
        _ body: EventBody, identifiers: Identifiers = Identifiers(), occurredAt: Timestamp? = nil, idempotencyKey: String? = nil, runID: String? = nil
    ) {
        self.body = body
        self.identifiers = identifiers
        self.occurredAt = occurredAt
        self.idempotencyKey = idempotencyKey
        self.runID = runID
    }

    /// The event's type.
    public var type: EventType { body.type }

    /// The idempotency key of Apple's notification `jti`: a notification is recorded once,
    /// and the ledger finds it by its `jti` through this key.
    public static func notificationIdempotencyKey(jti: String) -> String { "notification:" + jti }

    /// Checks the rules the storage relies on: identifier and key lengths, no NUL bytes.
    func validate() throws {
        for id in identifiers.all {
            guard !id.value.isEmpty else { throw LedgerError(.invalidEvent, "\(id.kind.rawValue) is empty") }
            guard id.value.utf8.count <= Identifiers.maximumLength else {
                throw LedgerError(.invalidEvent, "\(id.kind.rawValue) is longer than \(Identifiers.maximumLength) bytes")
            }
            guard !id.value.utf8.contains(0) else { throw LedgerError(.invalidEvent, "\(id.kind.rawValue) contains a NUL byte") }
        }
        if let key = idempotencyKey {
            guard !key.isEmpty, key.utf8.count <= EventDraft.maximumIdempotencyKeyLength else {
                throw LedgerError(.invalidEvent, "idempotency key must be 1 to \(EventDraft.maximumIdempotencyKeyLength) bytes")
            }
        }
    }

    /// The longest idempotency key, in UTF-8 bytes: room for an identifier of the longest
    /// (``Identifiers/maximumLength``) behind a prefix such as `generate:TEAMID:`. The index
    /// files a key by its hash, so its length costs nothing there.
    public static let maximumIdempotencyKeyLength = 512

    /// The canonical JSON of every field up to and including `occurred_at`, without the
    /// closing brace: the fields the ledger assigns at commit sort after these.
    func encodedPrefix(actor: Actor) -> [UInt8] {
        var w = JSONWriter(capacity: 448)
        w.beginObject()
        var actor = actor
        actor.runID = runID
        w.key("actor")
        actor.write(to: &w)
        w.key("body")
        body.write(to: &w)
        w.field("idempotency_key", idempotencyKey)
        w.key("identifiers")
        identifiers.write(to: &w)
        w.field("occurred_at", occurredAt)
        return w.bytes
    }
}
