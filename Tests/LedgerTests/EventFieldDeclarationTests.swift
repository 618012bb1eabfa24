import Foundation
import LedgerSamples
import TestSupport
import Testing

@testable import Ledger

/// Each event body's fields are declared once, in its JSON schema (`schemas/events/`). The
/// Swift body's properties, what the canonical writer writes, what the reader reads back and
/// what the samples hold are each checked against that declaration, nested objects included,
/// so that a field added in one place and not the others fails here, naming the event and the
/// field.
@Suite("event fields against their schemas")
struct EventFieldDeclarationTests {
    static let schemas = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schemas/events").path

    /// The fields a Swift property is written as, where they are not the property's name in
    /// snake case, by type and property: a name of its own, or a value written as two fields
    /// (`old_values` with `old_nulls`) or inside an object (`settings`).
    static let fieldNames: [String: [String]] = [
        "CallFailure.kind": ["class"], "NotificationReceived.kind": ["notification_type"],
        "RunFinished.durationMilliseconds": ["duration_ms"], "AppleUnavailable.pausedMilliseconds": ["paused_ms"],
        "HandoffAcknowledged.recipientSequence": ["recipient_seq"],
        "LedgerCreated.onAccountDeleted": ["settings"], "LedgerCreated.windowDays": ["settings"],
        // A v1 apply batch's rows (each one recipient_sub cell) are written as parallel arrays.
        "ApplyIntended.rows": ["account_ids", "collisions", "new_nulls", "new_values", "old_nulls", "old_values", "planned"],
        "ApplySettled.rows": ["account_ids", "outcomes"], "HandoffRowsReceived.chunkRows": ["rows"],
        "ApplyIntended.rowCount": ["rows"], "ApplySettled.rowCount": ["rows"],
        "ApplyStarted.columns": ["email_column", "email_forwarding_column", "sub_column"],
        // Kept beside the event in the `rows` database (v2), never in its JSON.
        "HandoffRowsReceived.salts": [], "ApplyIntended.salts": [], "ApplyIntended.holderSalts": [], "ApplySettled.salts": [],
        "ApplyIntended.lines": [], "ApplySettled.lines": [],
    ]

    /// Properties written in one form of a body only, by type and property, with the field that
    /// says which form a body is in: a v2 batch body (with `rows_root`) writes its rows' count,
    /// and keeps the rows themselves beside the event; a v1 one holds them.
    static let formFields: [String: (marker: String, present: Bool)] = [
        "HandoffRowsReceived.accountIDs": ("rows_root", false), "HandoffRowsReceived.transferSubs": ("rows_root", false),
        "HandoffRowsReceived.sequences": ("rows_root", false), "HandoffRowsReceived.chunkRows": ("rows_root", true),
        "ApplyIntended.rowCount": ("rows_root", true), "ApplyIntended.collisionCount": ("rows_root", true),
        "ApplySettled.rowCount": ("rows_root", true),
    ]

    /// Flags written only when true (absent when false, so that a body without them reads as
    /// before), by type and property.
    static let flagsWrittenWhenTrue: Set<String> = ["ApplyStarted.sinceLast"]

    /// Fields written from other properties, with no property of their own, by type.
    static let derivedFields: [String: Set<String>] = ["TransferAccepted": ["deadline"]]

    /// Types written as one value in a form of their own (a sealed value's `alg`, `ct`, `kid`).
    static let opaqueTypes: Set<String> = ["SealedValue"]

    /// The fields of `property` of a value of type `type`.
    static func fields(_ type: String, _ property: String) -> [String] {
        fieldNames[type + "." + property] ?? [snakeCase(property)]
    }

    /// `camelCase` as `snake_case`: `rowsSHA256` is `rows_sha256`, `teamID` is `team_id`,
    /// `clientIDs` is `client_ids`.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        let characters = Array(name.replacingOccurrences(of: "IDs", with: "Ids"))
        for (i, c) in characters.enumerated() {
            if c.isUppercase, i > 0 {
                let previous = characters[i - 1]
                let nextIsLower = i + 1 < characters.count && characters[i + 1].isLowercase
                if previous.isLowercase || (previous.isUppercase && nextIsLower) { out += "_" }
            }
            out += c.lowercased()
        }
        return out
    }

    /// One schema, with its `$defs` to resolve references in.
    struct Schema {
        let type: EventType
        let root: [String: Any]

        init(_ type: EventType) throws {
            self.type = type
            let data = try Data(contentsOf: URL(fileURLWithPath: EventFieldDeclarationTests.schemas + "/\(type.rawValue).schema.json"))
            root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        /// `node` with a `$ref` followed.
        func resolved(_ node: [String: Any]) -> [String: Any] {
            guard let ref = node["$ref"] as? String, ref.hasPrefix("#/$defs/") else { return node }
            let defs = root["$defs"] as? [String: Any] ?? [:]
            return (defs[String(ref.dropFirst("#/$defs/".count))] as? [String: Any]).map(resolved) ?? node
        }

        var body: [String: Any] { resolved((root["properties"] as? [String: Any])?["body"] as? [String: Any] ?? [:]) }
    }

    /// A value's stored properties by name, optionals unwrapped (nil when absent).
    static func properties(of value: Any) -> [(name: String, value: Any?)] {
        Mirror(reflecting: value).children.compactMap { child in
            guard let name = child.label else { return nil }
            let inner = Mirror(reflecting: child.value)
            if inner.displayStyle == .optional { return (name, inner.children.first?.value) }
            return (name, child.value)
        }
    }

    /// Checks one object against its schema node: every property has its fields and every
    /// field its property; what was written is declared, and written when the value holds it;
    /// nested objects alike. Returns what does not hold; adds the fields written, by path, to
    /// `written`.
    static func check(
        _ value: Any, wrote: [String: Any], node: [String: Any], schema: Schema, path: String,
        written: inout [String: Set<String>]
    ) -> [String] {
        let event = schema.type.rawValue
        let type = String(describing: Swift.type(of: value))
        let declared = node["properties"] as? [String: Any] ?? [:]
        var problems: [String] = []
        var covered = derivedFields[type] ?? []
        for property in properties(of: value) {
            let names = fields(type, property.name)
            covered.formUnion(names)
            for field in names where declared[field] == nil {
                problems.append("\(event): the property \(type).\(property.name) has no field \(path)\(field) in schemas/events/\(event).schema.json")
            }
            // A field that holds several properties (`settings`) is checked as a whole.
            let shared = properties(of: value).filter { fields(type, $0.name).contains(names.first ?? "") }.count > 1
            guard names.count == 1, !shared, let field = names.first, let fieldNode = declared[field] as? [String: Any] else { continue }
            let form = formFields[type + "." + property.name]
            let unsetFlag = flagsWrittenWhenTrue.contains(type + "." + property.name) && property.value as? Bool == false
            if property.value != nil, !unsetFlag, wrote[field] == nil, form.map({ (wrote[$0.marker] != nil) == $0.present }) ?? true {
                problems.append("\(event): the writer leaves out \(path)\(field), which the sample holds")
            }
            guard let value = property.value, let wroteValue = wrote[field] else { continue }
            guard !opaqueTypes.contains(String(describing: Swift.type(of: value))) else { continue }
            let resolved = schema.resolved(fieldNode)
            if resolved["properties"] != nil, let object = wroteValue as? [String: Any] {
                problems += check(value, wrote: object, node: resolved, schema: schema, path: path + field + ".", written: &written)
            } else if let items = (resolved["items"] as? [String: Any]).map(schema.resolved), items["properties"] != nil,
                let elements = value as? [Any], let objects = wroteValue as? [Any]
            {
                for case let (element, object as [String: Any]) in zip(elements, objects) {
                    problems += check(element, wrote: object, node: items, schema: schema, path: path + field + "[].", written: &written)
                }
            }
        }
        for field in declared.keys.sorted() where !covered.contains(field) {
            problems.append("\(event): the schema's field \(path)\(field) has no property in \(type)")
        }
        for field in wrote.keys.sorted() where declared[field] == nil {
            problems.append("\(event): the writer writes \(path)\(field), which the schema does not declare")
        }
        written[path, default: []].formUnion(wrote.keys)
        return problems
    }

    /// The payload of a body (the struct the enum case holds); nil for a case without one.
    static func payload(_ body: EventBody) -> Any? { Mirror(reflecting: body).children.first?.value }

    @Test(
        "every event body: each property has its field in the schema and each field its property, the writer writes only what the schema declares, the reader reads back what was written, and some sample holds each field"
    )
    func fieldsMatchTheirSchemas() async throws {
        let dir = TemporaryDirectory()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity())
        defer { ledger.close() }
        let drafts = EventSamples.all() + EventSamples.variants()
        let outcomes = try await ledger.append(contentsOf: drafts)
        var schemas: [EventType: Schema] = [:]
        var written: [EventType: [String: Set<String>]] = [:]
        for (draft, outcome) in zip(drafts, outcomes) {
            let event = try #require(try ledger.read { try $0.event(outcome.sequence) })
            #expect(event.body == draft.body, "\(draft.type): the reader does not read back what the writer wrote")
            let schema = try schemas[draft.type] ?? Schema(draft.type)
            schemas[draft.type] = schema
            let stored = try #require(try JSONSerialization.jsonObject(with: Data(event.canonicalJSON)) as? [String: Any])
            guard let payload = Self.payload(draft.body) else { continue }
            let body = stored["body"] as? [String: Any] ?? [:]
            for problem in Self.check(
                payload, wrote: body, node: schema.body, schema: schema, path: "body.", written: &written[draft.type, default: [:]])
            {
                Issue.record(Comment(rawValue: problem))
            }
        }
        #expect(Set(schemas.keys) == Set(EventType.allCases), "a sample of every event type")
        // Each declared field is held by some sample, so that the checks above reach it.
        for (type, schema) in schemas.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let declared = Set((schema.body["properties"] as? [String: Any] ?? [:]).keys)
            let held = written[type]?["body."] ?? []
            for field in declared.subtracting(held).sorted() {
                Issue.record("\(type.rawValue): no sample in EventSamples holds body.\(field); add one to all() or variants()")
            }
        }
    }

    @Test("the check names a property the schema lacks, a field the Swift body lacks, and a field written but not declared")
    func theCheckCanFail() throws {
        struct HandoffIssued {
            var package = 1
            var targetTeam = "B"
            var extra = 2
        }
        let schema = try Schema(.handoffIssued)
        var written: [String: Set<String>] = [:]
        let problems = Self.check(
            HandoffIssued(), wrote: ["package": 1, "target_team": "B", "extra": 2], node: schema.body, schema: schema,
            path: "body.", written: &written)
        #expect(
            problems.contains(
                "handoff-issued: the property HandoffIssued.extra has no field body.extra in schemas/events/handoff-issued.schema.json"),
            "\(problems)")
        #expect(problems.contains("handoff-issued: the schema's field body.row_count has no property in HandoffIssued"), "\(problems)")
        #expect(problems.contains("handoff-issued: the writer writes body.extra, which the schema does not declare"), "\(problems)")
        let reader = Self.check(HandoffIssued(), wrote: ["package": 1], node: schema.body, schema: schema, path: "body.", written: &written)
        #expect(reader.contains("handoff-issued: the writer leaves out body.target_team, which the sample holds"), "\(reader)")
    }
}
