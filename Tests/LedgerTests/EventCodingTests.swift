import Basics
import Foundation
import LedgerSamples
import LogEngine
import TestSupport
import Testing

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

    @Test("numbers a stored event's arithmetic uses are refused beyond their range: counts whose sum overflows, a window of 200,000,000 days")
    func numbersOutOfRange() throws {
        let actor = #"{"host":"vm","os_user":"root","tool":"handover/0.1.0"}"#
        func event(_ type: String, _ body: String) -> [UInt8] {
            Array(
                #"{"actor":\#(actor),"body":\#(body),"identifiers":{},"recorded_at":"2026-11-26T15:01:00.000000Z","schema_version":1,"seq":7,"type":"\#(type)"}"#
                    .utf8)
        }
        let cases: [(String, [UInt8], String)] = [
            (
                "counts",
                event(
                    "rejections-summarized",
                    #"{"counts":{"notifications":9223372036854775807,"sign-ins":1},"first_payload_sha256":"a","from":"2026-11-26T15:00:00.000000Z","last_payload_sha256":"b","source":"203.0.113.7","until":"2026-11-26T15:01:00.000000Z"}"#
                ),
                "event.body.counts: expected an object of counts from 0 to 4294967295"
            ),
            (
                "window",
                event(
                    "transfer-accepted",
                    #"{"accepted_at":"2026-11-06T00:00:00.000000Z","deadline":"2026-11-06T00:00:00.000000Z","window_days":200000000}"#),
                "event.body.window_days: expected an integer from 1 to 3650"
            ),
        ]
        for (name, bytes, message) in cases {
            #expect(throws: LedgerError.self, "\(name)") { try bytes.withUnsafeBytes { try RecordedEvent(json: $0) } }
            do { _ = try bytes.withUnsafeBytes { try RecordedEvent(json: $0) } } catch let error as LedgerError {
                #expect(error.message.contains(message), "\(name): \(error.message)")
            }
        }
    }

    @Test("stored events decode in place as a full parse reads them, and malformed ones are refused")
    func decodingInPlace() throws {
        for draft in EventSamples.all() {
            let event = RecordedEvent(
                sequence: 7, recordedAt: Timestamp(rfc3339: "2026-11-22T10:00:00.5Z")!, actor: Actor(osUser: "u", host: "h", tool: "handover/test"),
                draft: draft)
            let bytes = event.canonicalJSON
            var decoded = try bytes.withUnsafeBytes { try RecordedEvent(json: $0) }
            // A body whose rows are kept beside the event reads whole once given them.
            if decoded.body.lacksRows { try decoded.body.attach(rowLines: draft.body.storedRows) }
            #expect(decoded == event, "\(draft.type)")
        }
        let valid = Array(
            #"{"actor":{"host":"h","os_user":"u","tool":"t"},"body":{"keys_destroyed":0,"reason":"r"},"identifiers":{},"recorded_at":"2026-11-22T10:00:00.000000Z","schema_version":1,"seq":3,"type":"user-erased"}"#
                .utf8)
        #expect(try valid.withUnsafeBytes { try RecordedEvent(json: $0) }.sequence == 3)
        for broken in [#"{"actor":{"host":"h"}"#, #"{"seq":3,"seq":4}"#, "{\"body\":\"\u{01}\"}", #"{"a":tru}"#, #"{"a":1} x"#, #"["seq"]"#] {
            #expect(throws: LedgerError.self, "\(broken)") { try Array(broken.utf8).withUnsafeBytes { try RecordedEvent(json: $0) } }
        }
    }

    @Test("sealed values are replaced in place exactly as parsing, replacing and re-encoding does")
    func sealedValuesReplaced() throws {
        func reference(_ value: JSONValue, _ replacement: JSONValue) -> JSONValue {
            switch value {
            case .object(let fields)
            where fields.count == 3 && fields["alg"] == .string(SealedValue.algorithm) && fields["kid"]?.stringValue != nil
                && fields["ct"]?.stringValue != nil:
                return replacement
            case .object(let fields): return .object(fields.mapValues { reference($0, replacement) })
            case .array(let items): return .array(items.map { reference($0, replacement) })
            default: return value
            }
        }
        var sealedSeen = 0
        for draft in EventSamples.all() {
            let bytes = RecordedEvent(sequence: 1, recordedAt: .now(), actor: .currentProcess(), draft: draft).canonicalJSON
            for replacement in [JSONValue.null, .string("jane.doe+\"quoted\"@example.org")] {
                let fast = try #require(
                    bytes.withUnsafeBytes { raw in SealedValue.replacingSealedValues(in: raw) { _ in replacement.canonicalBytes } })
                #expect(fast == reference(try JSONValue.parse(bytes), replacement).canonicalBytes, "\(draft.type)")
                if fast != bytes { sealedSeen += 1 }
            }
        }
        #expect(sealedSeen >= 6, "the samples carry sealed values in several event types")
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
        let bad = EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .other, message: "x"))),
            identifiers: Identifiers(transferSub: String(repeating: "t", count: 500)))
        let good = EventSamples.all()[9]
        await #expect(throws: LedgerError.self) { try await ledger.append(contentsOf: [good, bad]) }
        #expect(try ledger.read { try $0.head().sequence } == 1)
    }
}
