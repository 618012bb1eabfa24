import Ledger

/// The rows of a handoff as team B takes them into its log: a signed package's (checked
/// against its manifest) or a bare CSV's, recorded as "handoff rows received" chunks before
/// any call to Apple, so that every handed-over user exists on team B's side from then on.
public struct HandoffRows: Sendable {
    /// One handed-over user.
    public struct Row: Sendable, Equatable {
        public var transferSub: String
        public var accountID: String?
        /// The sender's "transfer ID generated" event; nil for a bare CSV's row.
        public var sequence: UInt64?
    }

    /// Which package the rows came in; nil for a bare CSV.
    public var origin: String?
    public var package: Int?
    public var manifestSHA256: String?
    /// SHA-256 of the rows file as read.
    public var fileSHA256: String
    public var rows: [Row]

    /// The rows of a package that passed every check (``HandoffAcceptance``).
    public init(_ verified: VerifiedHandoff, origin: String) {
        self.origin = origin
        package = verified.manifest.package
        manifestSHA256 = verified.manifestSHA256
        fileSHA256 = verified.manifest.rowsSHA256
        rows = verified.rows.map { Row(transferSub: $0.transferSub, accountID: $0.accountID, sequence: $0.sequence) }
    }

    /// The rows of a bare CSV of `transfer_sub`s (an `account_id` column is taken when present).
    public init(unsigned list: UserList) {
        fileSHA256 = list.sha256
        rows = list.users.map { Row(transferSub: $0.identifier, accountID: $0.accountID, sequence: nil) }
    }

    /// How many chunks the rows make.
    public var chunkCount: Int { max(1, (rows.count + HandoffRowsReceived.rowsPerChunk - 1) / HandoffRowsReceived.rowsPerChunk) }

    /// What ``record(in:)`` did.
    public struct Recorded: Sendable, Equatable {
        /// Chunks recorded now, and found recorded before (a receive run again or resumed).
        public var chunks = 0
        public var chunksBefore = 0
        public var rows = 0
    }

    /// Records every chunk not recorded yet, `batch` chunks per append, in order. A chunk
    /// another process records meanwhile must be of the same manifest (or file): another under
    /// the same package number is the sender's equivocation, refused as
    /// ``HandoffRefusal/Reason/conflictingPackage``.
    public func record(in ledger: Ledger, batch: Int = 16) async throws -> Recorded {
        var recorded = Recorded(rows: rows.count)
        let per = HandoffRowsReceived.rowsPerChunk
        var chunk = 0
        while chunk < chunkCount {
            let range = chunk..<min(chunk + batch, chunkCount)
            chunk = range.upperBound
            // Chunks recorded before (a package received again) are not written out again; a
            // chunk of another manifest can only be under the same key if this one's "handoff
            // received" was refused, so they are taken as they are.
            let missing = try ledger.read { view in
                try range.filter { n in try view.sequence(forIdempotencyKey: HandoffRowsReceived.idempotencyKey(origin: origin, package: package, fileSHA256: fileSHA256, chunk: n)) == nil }
            }
            recorded.chunksBefore += range.count - missing.count
            let drafts = missing.map { n in
                let slice = rows[min(n * per, rows.count)..<min((n + 1) * per, rows.count)]
                let body = HandoffRowsReceived(origin: origin, package: package, manifestSHA256: manifestSHA256, fileSHA256: fileSHA256, chunk: n, chunkCount: chunkCount,
                                               rowCount: rows.count, firstRow: n * per, accountIDs: slice.map { $0.accountID ?? "" }, transferSubs: slice.map(\.transferSub),
                                               sequences: slice.compactMap { $0.sequence.map { Int($0) } })
                return EventDraft(.handoffRowsReceived(body), idempotencyKey: body.idempotencyKey)
            }
            guard !drafts.isEmpty else { continue }
            for (draft, outcome) in zip(drafts, try await ledger.append(contentsOf: drafts)) {
                guard case .duplicate(let sequence) = outcome else { recorded.chunks += 1; continue }
                recorded.chunksBefore += 1
                guard case .handoffRowsReceived(let mine) = draft.body,
                      let event = try ledger.read({ try $0.event(sequence) }), case .handoffRowsReceived(let first) = event.body else {
                    throw LedgerError(.malformedRecord, "event \(sequence) holds the idempotency key of \(draft.idempotencyKey ?? "") but is not a \"handoff rows received\"")
                }
                guard first.manifestSHA256 == mine.manifestSHA256, first.fileSHA256 == mine.fileSHA256 else {
                    throw HandoffRefusal(.conflictingPackage, "package \(mine.package ?? 0)'s rows were taken in before from manifest \(first.manifestSHA256 ?? "-"); this one's is \(mine.manifestSHA256 ?? "-")")
                }
            }
        }
        return recorded
    }
}
