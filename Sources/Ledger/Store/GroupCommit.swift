import LMDB
import LogEngine

/// What one group commit writes, in one write transaction on the ledger's writer thread
/// (``GroupCommitWriter``): the events appended to the log (``LogTail``), then folded into
/// every folder (after the events a folder missed, appended by a process without it), then
/// one commit and one fsync.
///
/// The transaction reads the log and the folders as they are committed: another process's
/// appends and a rebuild's switch of the projections are simply what it reads.
enum GroupCommit {
    /// Appends `events` in order and folds those recorded; one outcome per event.
    static func write(
        _ events: some Sequence<PreparedEvent>, environment: Environment, schema: LedgerSchema, actor: Actor, folders: [any LedgerFolder]
    ) throws -> [AppendOutcome] {
        try environment.write { txn in
            var tail = try LogTail(in: txn, schema: schema)
            var outcomes: [AppendOutcome] = []
            var recorded: [RecordedEvent] = []
            for event in events {
                switch try tail.append(event) {
                case .success(let sequence):
                    recorded.append(RecordedEvent(sequence: sequence, recordedAt: tail.recordedAt, actor: actor, draft: event.draft))
                    outcomes.append(.recorded(sequence: sequence, recordedAt: tail.recordedAt))
                case .failure(let duplicate):
                    outcomes.append(.duplicate(of: duplicate.sequence))
                }
            }
            try tail.finish()
            if let first = recorded.first?.sequence {
                for folder in folders {
                    try Ledger.catchUp(folder, through: first - 1, in: txn, schema: schema)
                    try folder.fold(recorded, in: txn)
                }
            }
            return outcomes
        }
    }
}
