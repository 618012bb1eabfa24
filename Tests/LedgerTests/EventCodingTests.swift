import Foundation
import Testing
import TestSupport
@testable import Ledger

@Suite("Event encoding")
struct EventCodingTests {
    @Test("every event type round-trips through the ledger, in canonical form")
    func everyTypeRoundTrips() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let samples = EventSamples.all()
        #expect(Set(samples.map(\.type)) == Set(EventType.allCases))
        let outcomes = try await ledger.append(contentsOf: samples)
        for (draft, outcome) in zip(samples, outcomes) {
            let stored = try #require(try ledger.read { view in try view.record(outcome.sequence).map { Array($0[32...]) } })
            let event = try #require(try ledger.read { try $0.event(outcome.sequence) })
            #expect(event.body == draft.body, "\(draft.type)")
            #expect(event.identifiers == draft.identifiers)
            #expect(event.occurredAt == draft.occurredAt)
            #expect(event.idempotencyKey == draft.idempotencyKey)
            #expect(event.actor.runID == draft.runID)
            // The stored bytes are exactly the canonical encoding: sorted keys, no spaces.
            #expect(try JSONValue.parse(stored).canonicalBytes == stored, "\(draft.type) is not canonical")
            #expect(event.canonicalJSON == stored)
        }
    }

    @Test("strings are escaped as Python's json.dumps does")
    func escaping() throws {
        var w = JSONWriter()
        w.string("quote\" backslash\\ newline\n tab\t bell\u{07} é ✓ slash/")
        #expect(String(decoding: w.bytes, as: UTF8.self) == #""quote\" backslash\\ newline\n tab\t bell\u0007 é ✓ slash/""#)
        #expect(try JSONValue.parse(w.bytes) == .string("quote\" backslash\\ newline\n tab\t bell\u{07} é ✓ slash/"))
    }

    @Test("timestamps print and parse in RFC 3339 UTC with microseconds")
    func timestamps() throws {
        let t = try #require(Timestamp(rfc3339: "2026-02-28T23:59:59.123456Z"))
        #expect(t.rfc3339 == "2026-02-28T23:59:59.123456Z")
        #expect(Timestamp(rfc3339: "2026-03-01T01:00:00+02:00")?.rfc3339 == "2026-02-28T23:00:00.000000Z")
        #expect(Timestamp(rfc3339: "2026-11-22")?.rfc3339 == "2026-11-22T00:00:00.000000Z")
        #expect(Timestamp(rfc3339: "1969-12-31T23:59:59.5Z")?.microseconds == -500_000)
        #expect(Timestamp(rfc3339: "2026-02-30") == nil)
        #expect(Timestamp(rfc3339: "yesterday") == nil)
    }

    @Test("a draft with an identifier the indexes cannot hold is refused before anything is written")
    func invalidDraftRefused() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let bad = EventDraft(.transferIDExchangeFailed(TransferIDExchangeFailed(failure: Failure(kind: .other, message: "x"))), identifiers: Identifiers(transferSub: String(repeating: "t", count: 500)))
        let good = EventSamples.all()[9]
        await #expect(throws: LedgerError.self) { try await ledger.append(contentsOf: [good, bad]) }
        #expect(try ledger.read { try $0.head().sequence } == 1)
    }
}
