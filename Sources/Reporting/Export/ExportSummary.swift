import Basics
import Ledger

/// What one export run added.
public struct ExportSummary: Sendable, Equatable {
    public var format: ExportFormat
    public var path: String
    /// The first event this run could add (the previous export's last + 1).
    public var fromSequence: UInt64
    /// The last event in the output after this run.
    public var toSequence: UInt64
    public var eventsAdded: Int
    /// Rows kept beside events (``ExportedRow``) added: those of this run's events, and of the
    /// events the export already held when it was made before rows were exported.
    public var rowsAdded: Int
    /// Users inserted or replaced (SQLite), or rows in the rewritten users file.
    public var usersWritten: Int

    /// The event number an export's `meta` records under `key` (`last_sequence`,
    /// `users_sequence`); nil when absent. A value that is no event number (events are numbered
    /// below 2^63) is refused: it is no mark an export of this code wrote.
    static func mark(_ key: String, in meta: [String: String], path: String) throws -> UInt64? {
        guard let text = meta[key] else { return nil }
        guard let value = UInt64(text), value < UInt64(Int64.max) else {
            throw ExportError(.mismatch, "\(path) records \(key) \(InertText.forScreen(text)), which is no event number")
        }
        return value
    }

    /// Refuses to add to an export of another ledger or with another personal-data policy.
    static func checkMatches(_ meta: [String: String], identity: LedgerCreated, personalData: Bool, path: String) throws {
        guard meta["ledger_id"] == identity.ledgerID else {
            throw ExportError(
                .mismatch, "\(path) holds an export of ledger \(meta["ledger_id"] ?? "(unknown)"), not of this ledger (\(identity.ledgerID))")
        }
        let had = meta["personal_data"] == "1" || meta["personal_data"] == "true"
        guard had == personalData else {
            throw ExportError(
                .mismatch, "\(path) was exported \(had ? "with" : "without") --include-personal-data; add to it the same way, or export to a new path"
            )
        }
    }
}
