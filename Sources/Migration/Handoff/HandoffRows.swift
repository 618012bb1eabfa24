import Ledger
import LogEngine

/// The rows of a handoff as team B takes them into its log: a signed package's (checked
/// against its manifest, read again chunk by chunk) or a bare CSV's, recorded as "handoff rows
/// received" chunks before any call to Apple, so that every handed-over user exists on team B's
/// side from then on.
public struct HandoffRows: Sendable {
    /// Which package the rows came in; nil for a bare CSV.
    public var origin: String?
    public var package: Int?
    public var manifestSHA256: String?
    /// SHA-256 of the rows file as read.
    public var fileSHA256: String
    /// How many rows there are.
    public let count: Int
    /// Their form: a package's (v2 rows are recorded with their salts and root, the rows beside
    /// the event); a bare CSV's rows are recorded in v1 form.
    public let form: HandoffRowsForm
    private let source: Source

    private enum Source: Sendable {
        /// A package's rows, read from its file a chunk at a time.
        case package(PackageRows)
        /// A bare CSV's users, held whole (the exchange reads such a list whole anyway).
        case unsigned([MigrationUser])
    }

    /// The rows of a package that passed every check (``HandoffAcceptance``).
    public init(_ verified: VerifiedHandoff, origin: String) {
        self.origin = origin
        package = verified.manifest.package
        manifestSHA256 = verified.manifestSHA256
        fileSHA256 = verified.rows.sha256
        count = verified.rows.count
        form = verified.rows.form
        source = .package(verified.rows)
    }

    /// The rows of a bare CSV of `transfer_sub`s (an `account_id` column is taken when present).
    public init(unsigned list: UserList) {
        fileSHA256 = list.sha256
        count = list.users.count
        form = .v1
        source = .unsigned(list.users)
    }

    /// How many chunks the rows make.
    public var chunkCount: Int { max(1, (count + form.rowsPerChunk - 1) / form.rowsPerChunk) }

    /// What ``record(in:batch:)`` did.
    public struct Recorded: Sendable, Equatable {
        /// Chunks recorded now, and found recorded before (a receive run again or resumed).
        public var chunks = 0
        public var chunksBefore = 0
        public var rows = 0
    }

    /// Records every chunk not recorded yet, `batch` chunks per append, in order, holding no
    /// more than two batches of rows at a time (one appending while the next is read). A chunk another process records meanwhile must be of
    /// the same manifest (or file): another under the same package number is the sender's
    /// equivocation, refused as ``HandoffRefusal/Reason/conflictingPackage``.
    public func record(in ledger: Ledger, batch: Int = 16) async throws -> Recorded {
        precondition(batch > 0, "a batch holds at least one chunk")
        var recorded = Recorded(rows: count)
        var chunks = try ChunkReader(self)
        var next = 0
        // One batch is appended while the next is read: the reading overlaps the writer's fold and commit.
        var appending: (drafts: [EventDraft], task: Task<[AppendOutcome], Error>)?
        do {
            while next < chunkCount {
                var read: [(chunk: Int, rows: [ChunkRow])] = []
                while read.count < batch, next < chunkCount {
                    read.append((next, try chunks.next()))
                    next += 1
                }
                // Chunks recorded before (a package received again) are not written out again; a
                // chunk of another manifest can only be under the same key if this one's "handoff
                // received" was refused, so they are taken as they are.
                let missing = try ledger.read { view in
                    try read.filter { try view.sequence(forIdempotencyKey: key($0.chunk)) == nil }
                }
                recorded.chunksBefore += read.count - missing.count
                let drafts = missing.map { chunk in
                    let body = HandoffRowsReceived(
                        origin: origin, package: package, manifestSHA256: manifestSHA256, fileSHA256: fileSHA256, chunk: chunk.chunk,
                        chunkCount: chunkCount,
                        rowCount: count, firstRow: chunk.chunk * form.rowsPerChunk, accountIDs: chunk.rows.map(\.accountID),
                        transferSubs: chunk.rows.map(\.transferSub), sequences: chunk.rows.compactMap { $0.sequence.map { Int($0) } },
                        salts: chunk.rows.compactMap(\.salt))
                    return EventDraft(.handoffRowsReceived(body), idempotencyKey: body.idempotencyKey)
                }
                if let previous = appending { try account(previous.drafts, try await previous.task.value, into: &recorded, in: ledger) }
                appending = drafts.isEmpty ? nil : (drafts, Task { try await ledger.append(contentsOf: drafts) })
            }
            if let last = appending { try account(last.drafts, try await last.task.value, into: &recorded, in: ledger) }
        } catch {
            // Whatever stops the recording, the batch in flight is waited for: nothing is left appending unseen.
            if let pending = appending { _ = try? await pending.task.value }
            throw error
        }
        return recorded
    }

    /// Counts what appending `drafts` did; a chunk found recorded by another process must be
    /// of the same manifest (or file).
    private func account(_ drafts: [EventDraft], _ outcomes: [AppendOutcome], into recorded: inout Recorded, in ledger: Ledger) throws {
        for (draft, outcome) in zip(drafts, outcomes) {
            guard case .duplicate(let sequence) = outcome else {
                recorded.chunks += 1
                continue
            }
            recorded.chunksBefore += 1
            guard case .handoffRowsReceived(let mine) = draft.body,
                let event = try ledger.read({ try $0.event(sequence) }), case .handoffRowsReceived(let first) = event.body
            else {
                throw LedgerError(
                    .malformedRecord,
                    "event \(sequence) holds the idempotency key of \(draft.idempotencyKey ?? "") but is not a \"handoff rows received\"")
            }
            guard first.manifestSHA256 == mine.manifestSHA256, first.fileSHA256 == mine.fileSHA256 else {
                throw HandoffRefusal(
                    .conflictingPackage,
                    "package \(mine.package ?? 0)'s rows were taken in before from manifest \(first.manifestSHA256 ?? "-"); this one's is \(mine.manifestSHA256 ?? "-")"
                )
            }
        }
    }

    private func key(_ chunk: Int) -> String {
        HandoffRowsReceived.idempotencyKey(origin: origin, package: package, fileSHA256: fileSHA256, chunk: chunk)
    }

    /// One row as a chunk event holds it: `account_id` ("" for none), `transfer_sub`, the
    /// sender's event (none for a bare CSV's row) and the row's salt (v2).
    private typealias ChunkRow = (accountID: String, transferSub: String, sequence: UInt64?, salt: [UInt8]?)

    /// The rows a chunk at a time, from either source.
    private struct ChunkReader {
        private var package: PackageRows.Chunks?
        private let users: [MigrationUser]
        private var chunk = 0

        init(_ rows: HandoffRows) throws {
            switch rows.source {
            case .package(let checked):
                package = try checked.chunks()
                users = []
            case .unsigned(let users):
                self.users = users
            }
        }

        mutating func next() throws -> [ChunkRow] {
            if package != nil {
                guard let chunk = try package?.next() else { throw LedgerError(.malformedRecord, "the package's rows ended before their last chunk") }
                return chunk.map { ($0.accountID ?? "", $0.transferSub, $0.sequence, $0.salt) }
            }
            let per = HandoffRowsForm.v1.rowsPerChunk
            defer { chunk += 1 }
            return users[min(chunk * per, users.count)..<min((chunk + 1) * per, users.count)].map { ($0.accountID ?? "", $0.identifier, nil, nil) }
        }
    }
}
