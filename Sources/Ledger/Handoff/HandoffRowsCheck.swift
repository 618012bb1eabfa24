import Basics
import LogEngine

/// The handoff rows a ledger holds ("handoff rows received"), checked against what they claim:
/// each package's or list's chunks in order, one of each number, agreeing with each other,
/// and, for a signed package whose chunks are all recorded, the rows written again as Handover
/// writes `rows.csv` hash to the `rows-sha256` of the manifest recorded as received and, in v2,
/// the chunks' roots to its `rows-root`. (Each v2 chunk's rows hash to its own root whenever the
/// event is read.) The `rows` database holds exactly the rows the batch events that keep rows
/// there name, those of apply batches included, each batch's hashing to its root.
public struct HandoffRowsCheck: Sendable {
    /// One package's or list's rows as recorded.
    public struct Handoff: Sendable, Equatable {
        /// `package N from ORIGIN`, or `unsigned list <file SHA-256>`.
        public var name: String
        public var chunksRecorded: Int
        public var chunkCount: Int
        public var rows: Int
        /// Whether every chunk is recorded.
        public var isComplete: Bool { chunksRecorded == chunkCount }
    }

    /// Every handoff whose rows the log holds, in the order its first chunk was recorded.
    public var handoffs: [Handoff] = []
    /// The first contradiction found (the sequence of the event that shows it), if any.
    public var problem: (sequence: UInt64, text: String)?

    /// The incomplete handoffs: a receive stopped part-way, to be run again.
    public var incomplete: [Handoff] { handoffs.filter { !$0.isComplete } }

    /// Checks the rows in `view`'s log.
    public init(_ view: LogView) throws {
        do {
            var chunks = ChunkReader(received: try Self.packagesReceived(in: view))
            for sequence in try view.sequences(of: .handoffRowsReceived) { try chunks.take(sequence, from: view, into: &handoffs) }
            let applyRows = try Self.checkApplyBatches(in: view)
            let held = try view.schema.rows.map { try view.transaction.count($0) } ?? 0
            if held != chunks.storedRows + applyRows {
                throw Contradiction(
                    sequence: try view.head().sequence,
                    text: "the rows database holds \(held) rows; the batch events that keep their rows there name \(chunks.storedRows + applyRows)")
            }
        } catch let found as Contradiction {
            problem = (found.sequence, found.text)
        }
    }

    /// The first contradiction found, which ends the check.
    private struct Contradiction: Error {
        let sequence: UInt64
        let text: String
    }

    /// Each package as received ("handoff received"), by `<origin> <package>`.
    private static func packagesReceived(in view: LogView) throws -> [String: HandoffReceived] {
        var received: [String: HandoffReceived] = [:]
        for (_, body) in try view.handoffsReceived() { received["\(body.checkpoint.origin) \(body.package)"] = body }
        return received
    }

    /// The apply batches that keep their rows in the `rows` database: each one's rows hash to
    /// its root (lines that do are the lines written: they need no decoding here). Returns how
    /// many rows they keep there.
    private static func checkApplyBatches(in view: LogView) throws -> Int {
        var kept = 0
        for type in [EventType.applyIntended, .applySettled] {
            for sequence in try view.sequences(of: type) {
                guard let raw = try view.record(sequence) else { continue }
                let body = try LogView.decode(raw, sequence: sequence).body
                guard body.keptRowCount > 0 else { continue }
                kept += body.keptRowCount
                do {
                    try body.rowCommitting?.checkStored(try view.storedRows(of: sequence, count: body.keptRowCount))
                } catch let error as LedgerError {
                    throw Contradiction(sequence: sequence, text: "event \(sequence): \(error.message)")
                }
            }
        }
        return kept
    }

    /// Reads the "handoff rows received" events in order, following each package's or list's
    /// chunks.
    private struct ChunkReader {
        /// One package's or list's chunks read so far.
        struct Progress {
            var index: Int
            var first: HandoffRowsReceived
            var next = 0
            var digest: HandoffRowsDigest?
            var chunkRoots: [SHA256Hash] = []
        }
        let received: [String: HandoffReceived]
        var progress: [String: Progress] = [:]
        /// The rows the v2 chunks keep in the `rows` database.
        var storedRows = 0

        init(received: [String: HandoffReceived]) { self.received = received }

        /// Event `sequence`: its stored rows, its place among its handoff's chunks, its
        /// agreement with the package received and, at the last chunk, the whole handoff's
        /// digest and root.
        mutating func take(_ sequence: UInt64, from view: LogView, into handoffs: inout [Handoff]) throws {
            guard let raw = try view.record(sequence) else { return }
            guard case .handoffRowsReceived(let rows) = try LogView.decode(raw, sequence: sequence).body else { return }
            let lines = try storedLines(of: rows, at: sequence, in: view)
            let key = rows.origin.map { "\($0) \(rows.package ?? 0)" } ?? "unsigned \(rows.fileSHA256)"
            let name = rows.origin.map { "package \(rows.package ?? 0) from \($0)" } ?? "unsigned list \(rows.fileSHA256)"
            func contradiction(_ text: String) -> Contradiction { Contradiction(sequence: sequence, text: "\(name): \(text)") }
            var p = progress[key] ?? Progress(index: handoffs.count, first: rows, digest: rows.isSigned ? HandoffRowsDigest(form: rows.form) : nil)
            if progress[key] == nil { handoffs.append(Handoff(name: name, chunksRecorded: 0, chunkCount: rows.chunkCount, rows: rows.rowCount)) }
            guard rows.manifestSHA256 == p.first.manifestSHA256, rows.fileSHA256 == p.first.fileSHA256, rows.chunkCount == p.first.chunkCount,
                rows.rowCount == p.first.rowCount, rows.form == p.first.form
            else {
                throw contradiction("chunk \(rows.chunk) is of another manifest or file than chunk \(p.first.chunk)")
            }
            let per = rows.form.rowsPerChunk
            guard rows.chunk == p.next, rows.firstRow == rows.chunk * per,
                rows.chunkRows == (rows.chunk + 1 == rows.chunkCount ? rows.rowCount - rows.firstRow : per)
            else {
                throw contradiction(
                    "chunk \(rows.chunk) (rows \(rows.firstRow) to \(rows.firstRow + rows.chunkRows)) is recorded where chunk \(p.next) was due")
            }
            if let manifest = rows.manifestSHA256 {
                try checkAgainstReceipt(rows, lines: lines, manifest: manifest, key: key, progress: &p, contradiction)
            }
            p.next += 1
            handoffs[p.index].chunksRecorded = p.next
            if p.next == rows.chunkCount, var digest = p.digest {
                let rebuilt = digest.finalize()
                guard rebuilt == rows.fileSHA256 else {
                    throw contradiction(
                        "its \(rows.rowCount) rows as recorded hash to \(rebuilt), not to the manifest's rows-sha256 \(rows.fileSHA256): a row was changed after it was received"
                    )
                }
                if let signed = received[key]?.rowsRoot, Hex.encode(RowTree(leaves: p.chunkRoots).root.bytes) != signed {
                    throw contradiction("its chunks' row tree roots do not lead to the manifest's rows-root \(signed)")
                }
            }
            progress[key] = p
        }

        /// A v2 chunk's lines, as stored: lines that hash to its root are the lines received, so
        /// they are hashed, not decoded. None for a v1 chunk, whose rows are in its JSON.
        private mutating func storedLines(of rows: HandoffRowsReceived, at sequence: UInt64, in view: LogView) throws -> [[UInt8]] {
            guard rows.lacksRows else { return [] }
            storedRows += rows.chunkRows
            let lines: [[UInt8]]
            do { lines = try view.storedRows(of: sequence, count: rows.chunkRows) } catch let error as LedgerError {
                throw Contradiction(sequence: sequence, text: error.message)
            }
            guard RowTree(kind: .handoffRow, rows: lines).root == rows.rowsRoot else {
                throw Contradiction(
                    sequence: sequence,
                    text: "event \(sequence): handoff rows: the stored rows do not hash to the chunk's rows_root: a row was changed")
            }
            return lines
        }

        /// A signed package's chunk against the package received with manifest `manifest`; its
        /// rows added to the package's digest and its root to the package's chunk roots.
        private func checkAgainstReceipt(
            _ rows: HandoffRowsReceived, lines: [[UInt8]], manifest: String, key: String, progress p: inout Progress,
            _ contradiction: (String) -> Contradiction
        ) throws {
            guard let receipt = received[key], receipt.manifestSHA256 == manifest else {
                throw contradiction("its rows are recorded, but not the package as received with manifest \(manifest)")
            }
            guard receipt.rowsSHA256 == rows.fileSHA256, receipt.rowCount == rows.rowCount else {
                throw contradiction(
                    "the rows say \(rows.rowCount) rows hashing to \(rows.fileSHA256); the manifest received says \(receipt.rowCount) hashing to \(receipt.rowsSHA256)"
                )
            }
            guard (receipt.rowsRoot != nil) == (rows.rowsRoot != nil) else {
                throw contradiction("its rows are in \(rows.form.rawValue) form, the manifest received is not")
            }
            for line in lines { line.withUnsafeBytes { p.digest?.add(line: $0) } }
            for (i, transferSub) in rows.transferSubs.enumerated() {
                p.digest?.add(accountID: rows.accountIDs[i], transferSub: transferSub, sequence: UInt64(rows.sequences[i]), salt: nil)
            }
            if let root = rows.rowsRoot { p.chunkRoots.append(root) }
        }
    }
}
