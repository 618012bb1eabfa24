import LMDB

/// A read model kept in the ledger's environment and updated in the same write transaction
/// as the events it folds, so it is never ahead of or behind the log.
///
/// The ledger calls ``fold(_:in:)`` with every batch it appends, in order. A folder keeps its
/// own checkpoint (the last sequence it folded); when another process appended without it,
/// the ledger first hands it the events it missed.
public protocol LedgerFolder: AnyObject, Sendable {
    /// Opens (creating when writable) the folder's databases.
    func attach(to environment: Environment) throws
    /// The last sequence number this folder has folded.
    func checkpoint(in transaction: ReadTransaction) throws -> UInt64
    /// Folds `events` (consecutive, ascending) and advances the checkpoint to the last one.
    func fold(_ events: [RecordedEvent], in transaction: WriteTransaction) throws
}
