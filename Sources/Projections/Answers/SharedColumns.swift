import Basics
import Ledger

/// The facts more than one kind of row carries, each named and described once: an answer
/// over any row type declares such a column here, giving only how its row holds the value,
/// so the same fact has the same name, type and meaning in every answer and export.
public enum SharedColumns {
    public static func accountID<Row>(_ value: @escaping @Sendable (Row) -> String?) -> AnswerColumn<Row> {
        AnswerColumn("account_id", .text, "The team's own account identifier for the user, from the migration's input.") { .text(value($0)) }
    }
    public static func senderSub<Row>(_ value: @escaping @Sendable (Row) -> String?) -> AnswerColumn<Row> {
        AnswerColumn("sender_sub", .text, "The user's `sub` at the sending team (team A).") { .text(value($0)) }
    }
    public static func transferSub<Row>(_ value: @escaping @Sendable (Row) -> String?) -> AnswerColumn<Row> {
        AnswerColumn("transfer_sub", .text, "The transfer identifier Apple generated for the recipient team.") { .text(value($0)) }
    }
    public static func recipientSub<Row>(_ value: @escaping @Sendable (Row) -> String?) -> AnswerColumn<Row> {
        AnswerColumn("recipient_sub", .text, "The user's `sub` at the recipient team (team B).") { .text(value($0)) }
    }
    public static func email<Row>(_ value: @escaping @Sendable (Row) -> EmailValue) -> AnswerColumn<Row> {
        AnswerColumn(
            "email", .text, personal: true,
            "The latest address Apple reported, opened with the user's key; on screens `(sealed)`, `(sealed: no key)` or `(erased)` where it cannot be shown, in exports and output files null."
        ) { value($0).cell }
    }
    public static func isPrivateEmail<Row>(_ value: @escaping @Sendable (Row) -> Bool?) -> AnswerColumn<Row> {
        AnswerColumn("is_private_email", .boolean, "Whether the address is a private relay address.") { .bool(value($0)) }
    }
    public static func sequence<Row>(_ value: @escaping @Sendable (Row) -> UInt64) -> AnswerColumn<Row> {
        AnswerColumn("seq", .integer, optional: false, "The event's sequence number in the log.") { .int(Int(value($0))) }
    }
    public static func recordedAt<Row>(_ value: @escaping @Sendable (Row) -> Timestamp) -> AnswerColumn<Row> {
        AnswerColumn("recorded_at", .time, optional: false, "When the ledger recorded the event.") { .time(value($0)) }
    }
    public static func occurredAt<Row>(_ value: @escaping @Sendable (Row) -> Timestamp?) -> AnswerColumn<Row> {
        AnswerColumn("occurred_at", .time, "When it happened, if the source says (a notification's `event_time`, a token's `iat`).") {
            .time(value($0))
        }
    }
    public static func eventType<Row>(_ value: @escaping @Sendable (Row) -> String) -> AnswerColumn<Row> {
        AnswerColumn("type", .text, optional: false, "The event's type (schemas/events/TYPE.schema.json).") { .text(value($0)) }
    }
    public static func daysLeft<Row>(optional: Bool = true, _ value: @escaping @Sendable (Row) -> Int?) -> AnswerColumn<Row> {
        AnswerColumn("days_left", .integer, optional: optional, "Whole days left in the transfer window at the time asked; null without a window.") {
            .int(value($0))
        }
    }
    public static func lastErrorClass<Row>(optional: Bool = true, _ value: @escaping @Sendable (Row) -> String?) -> AnswerColumn<Row> {
        AnswerColumn(
            "last_error_class", .text, optional: optional,
            "The class of the last failure (invalid_request, rate_limited, …; `unknown` counts failures recorded without one); null after a success."
        ) { .text(value($0)) }
    }
    public static func users<Row>(_ value: @escaping @Sendable (Row) -> Int) -> AnswerColumn<Row> {
        AnswerColumn("users", .integer, optional: false, "How many users.") { .int(value($0)) }
    }
}
