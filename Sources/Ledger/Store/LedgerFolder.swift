import LMDB

/// A read model kept in the ledger's environment and updated in the same write transaction
/// as the events it folds, so it is never ahead of or behind the log.
///
/// The ledger calls ``fold(_:in:)`` with every batch it appends, in order. A folder keeps its
/// own checkpoint (the last sequence it folded); when another process appended without it,
/// the ledger first hands it the events it missed. A folder that has folded nothing, beside a
/// long log, may instead load the whole log at once (``loadLog(from:schema:scratch:)``).
public protocol LedgerFolder: AnyObject, Sendable {
    /// Opens (creating when writable) the folder's databases.
    func attach(to environment: Environment) throws
    /// The last sequence number this folder has folded.
    func checkpoint(in transaction: ReadTransaction) throws -> UInt64
    /// Folds `events` (consecutive, ascending) and advances the checkpoint to the last one.
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws
    /// Folds the whole log in bulk, faster than event by event, into a folder that has folded
    /// nothing yet; returns the events folded, or nil for a folder with no such way (then the
    /// ledger folds event by event). Events appended meanwhile by other processes may be left
    /// for the ordinary catch-up; `scratch` names a new directory the folder may use and must
    /// remove (nil: its own choice).
    func loadLog(from environment: Environment, schema: LedgerSchema, scratch: String?) throws -> UInt64?
}

extension LedgerFolder {
    /// No bulk load: the ledger folds the log event by event.
    public func loadLog(from environment: Environment, schema: LedgerSchema, scratch: String?) throws -> UInt64? { nil }
}
