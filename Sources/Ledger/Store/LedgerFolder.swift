import LMDB

/// A read model kept in the ledger's environment and updated in the same write transaction
/// as the events it folds, so it is never ahead of or behind the log.
///
/// The ledger folds every batch it appends into it, in order: ahead of the transaction
/// through ``makeSpeculativeFold()`` when the folder has one (the writes applied in the
/// transaction), and through ``fold(_:in:)`` inside it otherwise, or when what was prepared
/// ahead no longer holds. A folder keeps its
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
    /// A new fold of this folder that works out its writes outside the write transaction
    /// (``SpeculativeFold``), or nil when it folds only inside it (``fold(_:in:)``). The ledger
    /// makes one whenever it starts preparing afresh; each is used by one thread.
    func makeSpeculativeFold() -> (any SpeculativeFold)?
}

/// A folder's fold worked out beside the commit before it: it reads what is committed through
/// a read transaction, beneath what it folded itself and has not yet seen committed, and
/// gathers its writes for the commit's transaction to apply.
///
/// The ledger checks, in the transaction that applies
/// the writes, that the log and the folder are still as the fold read them; when they are
/// not (another process wrote), it folds again inside the transaction with a new one.
public protocol SpeculativeFold: AnyObject {
    /// Folds `events`, which follow event `base` (the last event folded before, by this fold
    /// or committed), gathering the writes in `writes`. Returns the check the commit makes
    /// in its transaction before applying them (true: the folder's state there is the one
    /// read), or nil when this fold cannot fold them ahead of the transaction (what it holds
    /// or reads does not end at `base`: the folder is behind the log, or was rebuilt
    /// meanwhile): the ledger then prepares afresh, and folds inside the transaction.
    func fold(
        _ events: [RecordedEvent], after base: UInt64, reading transaction: ReadTransaction, into writes: inout WriteBatch
    ) throws
        -> (@Sendable (ReadTransaction) throws -> Bool)?
    /// Drops what it holds of the events through `sequence`: they are committed, and a read
    /// transaction begun from now on sees them.
    func forget(through sequence: UInt64)
}

extension LedgerFolder {
    /// No bulk load: the ledger folds the log event by event.
    public func loadLog(from environment: Environment, schema: LedgerSchema) throws -> UInt64? { nil }
    /// Folds only inside the write transaction.
    public func makeSpeculativeFold() -> (any SpeculativeFold)? { nil }
}
