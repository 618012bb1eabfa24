import LMDB
import LogEngine

/// A read model kept in the ledger's environment and updated in the same write transaction
/// as the events it folds, so it is never ahead of or behind the log.
///
/// The ledger folds every batch it appends into it, in order, in the batch's own write
/// transaction (``fold(_:in:)``). A folder keeps its
/// own checkpoint (the last sequence it folded); when another process appended without it,
/// the ledger first hands it the events it missed. A folder that has folded nothing, beside a
/// long log, may instead load the whole log at once (``loadLog(from:schema:)``).
public protocol LedgerFolder: AnyObject, Sendable {
    /// Opens (creating when writable) the folder's databases.
    func attach(to environment: Environment) throws
    /// The last sequence number this folder has folded.
    func checkpoint(in transaction: ReadTransaction) throws -> UInt64
    /// Folds `events` (consecutive, ascending) and advances the checkpoint to the last one.
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws
    /// Folds the whole log in bulk, faster than event by event, into a folder that has folded
    /// nothing yet; returns the events folded, or nil when it did not load (a folder with no
    /// such way, or one another process loaded meanwhile): the ledger then folds event by
    /// event what is left. Events appended meanwhile may also be left to that catch-up.
    func loadLog(from environment: Environment, schema: LedgerSchema) throws -> UInt64?
}

extension LedgerFolder {
    /// No bulk load: the ledger folds the log event by event.
    public func loadLog(from environment: Environment, schema: LedgerSchema) throws -> UInt64? { nil }
}
