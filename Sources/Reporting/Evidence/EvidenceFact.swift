import Basics
import Ledger

/// One link of a person's story in an evidence bundle, and whether the bundle proves it: an
/// event (by its inclusion proof), the person's row of a handoff package (by its paths to the
/// roots the log and the package sign), or their row of an apply batch (stated: the manifest
/// says what the ledger holds; the batch's events name other people and are not in the bundle).
public struct EvidenceFact: Equatable, Sendable {
    public enum Kind: Sendable {
        case event
        case row
        case apply
    }

    public var kind: Kind
    /// The event the fact is about: the event itself, the rows event holding the row, the
    /// "apply settled" of the batch.
    public var sequence: UInt64

    public init(_ kind: Kind, _ sequence: UInt64) {
        self.kind = kind
        self.sequence = sequence
    }

    /// Whether the bundle's files prove the fact.
    public var proven: Bool { kind != .apply }

    /// The bundle's file that holds it.
    public var file: String {
        switch kind {
        case .event: "events/\(sequence).json"
        case .row: "rows/\(sequence).json"
        case .apply: "manifest.json"
        }
    }

    /// The facts of a bundle holding `events`, `rows` and `apply` rows (each by sequence), in
    /// the story's order: by sequence, an event before the row it holds.
    public static func story(events: [UInt64], rows: [UInt64], apply: [UInt64]) -> [EvidenceFact] {
        let facts = events.map { EvidenceFact(.event, $0) } + rows.map { EvidenceFact(.row, $0) } + apply.map { EvidenceFact(.apply, $0) }
        return facts.sorted { ($0.sequence, $0.order) < ($1.sequence, $1.order) }
    }

    private var order: Int {
        switch kind {
        case .event: 0
        case .row: 1
        case .apply: 2
        }
    }

    /// The fact as the manifest's `facts` lists it.
    public var json: JSONValue { .object(["seq": .int(Int64(sequence)), "file": .string(file), "proven": .bool(proven)]) }
}
