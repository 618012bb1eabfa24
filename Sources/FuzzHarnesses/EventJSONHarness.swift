import Ledger
import Projections

extension Harness {
    /// An event's JSON as it comes from another ledger (an altered copy's log record, an
    /// evidence bundle's `events/N.json`, a receipt's `handoff-received.json`): its envelope and
    /// body read, then shown as `query events` and a user's history show it, in every format.
    static let eventJSON = Harness("event-json", "an event's JSON read through the ledger's reader, then listed in every format") { input in
        let envelope = try input.withUnsafeBytes { try EventEnvelope(json: $0) }
        let event = try input.withUnsafeBytes { try RecordedEvent(json: $0) }
        HarnessCheck.expect(envelope.sequence == event.sequence && envelope.type == event.type, "the envelope and the event disagree")
        // What the ledger would store for it reads back as the same event.
        let canonical = event.canonicalJSON
        let again = try? canonical.withUnsafeBytes { try RecordedEvent(json: $0) }
        HarnessCheck.expect(again == event, "an event's canonical JSON does not read back as the event")
        let table = Answers.events.table([EventRow(event)])
        for format in [QueryTable.Format.table, .json, .csv] { _ = table.render(format) }
    }
}
