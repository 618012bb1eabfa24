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
        var received: [String: HandoffReceived] = [:]
        for (_, body) in try view.handoffsReceived() { received["\(body.checkpoint.origin) \(body.package)"] = body }
        struct Progress {
            var index: Int
            var first: HandoffRowsReceived
            var next = 0
            var digest: HandoffRowsDigest?
            var chunkRoots: [SHA256Hash] = []
        }
        var progress: [String: Progress] = [:]
        var storedRows = 0
        for sequence in try view.sequences(of: .handoffRowsReceived) {
            guard let raw = try view.record(sequence) else { continue }
            let decoded = try LogView.decode(raw, sequence: sequence)
            guard case .handoffRowsReceived(let rows) = decoded.body else { continue }
            // A v2 chunk's lines, as stored: lines that hash to its root are the lines received,
            // so they are hashed, not decoded.
            var lines: [[UInt8]] = []
            if rows.lacksRows {
                storedRows += rows.chunkRows
                do { lines = try view.storedRows(of: sequence, count: rows.chunkRows) } catch let error as LedgerError {
                    problem = (sequence, error.message)
                    return
                }
                guard RowTree(kind: .handoffRow, rows: lines).root == rows.rowsRoot else {
                    problem = (sequence, "event \(sequence): handoff rows: the stored rows do not hash to the chunk's rows_root: a row was changed")
                    return
                }
            }
            let key = rows.origin.map { "\($0) \(rows.package ?? 0)" } ?? "unsigned \(rows.fileSHA256)"
            let name = rows.origin.map { "package \(rows.package ?? 0) from \($0)" } ?? "unsigned list \(rows.fileSHA256)"
            func fail(_ text: String) { problem = (sequence, "\(name): \(text)") }
            var p = progress[key] ?? Progress(index: handoffs.count, first: rows, digest: rows.isSigned ? HandoffRowsDigest(form: rows.form) : nil)
            if progress[key] == nil { handoffs.append(Handoff(name: name, chunksRecorded: 0, chunkCount: rows.chunkCount, rows: rows.rowCount)) }
            guard rows.manifestSHA256 == p.first.manifestSHA256, rows.fileSHA256 == p.first.fileSHA256, rows.chunkCount == p.first.chunkCount,
                rows.rowCount == p.first.rowCount, rows.form == p.first.form
            else {
                fail("chunk \(rows.chunk) is of another manifest or file than chunk \(p.first.chunk)")
                return
            }
            let per = rows.form.rowsPerChunk
            guard rows.chunk == p.next, rows.firstRow == rows.chunk * per,
                rows.chunkRows == (rows.chunk + 1 == rows.chunkCount ? rows.rowCount - rows.firstRow : per)
            else {
                fail(
                    "chunk \(rows.chunk) (rows \(rows.firstRow) to \(rows.firstRow + rows.chunkRows)) is recorded where chunk \(p.next) was due"
                )
                return
            }
            if let manifest = rows.manifestSHA256 {
                guard let receipt = received[key], receipt.manifestSHA256 == manifest else {
                    fail("its rows are recorded, but not the package as received with manifest \(manifest)")
                    return
                }
                guard receipt.rowsSHA256 == rows.fileSHA256, receipt.rowCount == rows.rowCount else {
                    fail(
                        "the rows say \(rows.rowCount) rows hashing to \(rows.fileSHA256); the manifest received says \(receipt.rowCount) hashing to \(receipt.rowsSHA256)"
                    )
                    return
                }
                guard (receipt.rowsRoot != nil) == (rows.rowsRoot != nil) else {
                    fail("its rows are in \(rows.form.rawValue) form, the manifest received is not")
                    return
                }
                for line in lines { line.withUnsafeBytes { p.digest?.add(line: $0) } }
                for (i, transferSub) in rows.transferSubs.enumerated() {
                    p.digest?.add(accountID: rows.accountIDs[i], transferSub: transferSub, sequence: UInt64(rows.sequences[i]), salt: nil)
                }
                if let root = rows.rowsRoot { p.chunkRoots.append(root) }
            }
            p.next += 1
            handoffs[p.index].chunksRecorded = p.next
            if p.next == rows.chunkCount, var digest = p.digest {
                let rebuilt = digest.finalize()
                guard rebuilt == rows.fileSHA256 else {
                    fail(
                        "its \(rows.rowCount) rows as recorded hash to \(rebuilt), not to the manifest's rows-sha256 \(rows.fileSHA256): a row was changed after it was received"
                    )
                    return
                }
                if let signed = received[key]?.rowsRoot, Hex.encode(RowTree(leaves: p.chunkRoots).root.bytes) != signed {
                    fail("its chunks' row tree roots do not lead to the manifest's rows-root \(signed)")
                    return
                }
            }
            progress[key] = p
        }
        // The apply batches that keep their rows there: each one's rows hash to its root (lines
        // that do are the lines written: they need no decoding here).
        for type in [EventType.applyIntended, .applySettled] {
            for sequence in try view.sequences(of: type) {
                guard let raw = try view.record(sequence) else { continue }
                let body = try LogView.decode(raw, sequence: sequence).body
                guard body.keptRowCount > 0 else { continue }
                storedRows += body.keptRowCount
                do {
                    let lines = try view.storedRows(of: sequence, count: body.keptRowCount)
                    switch body {
                    case .applyIntended(let intent): try intent.checkStored(lines)
                    case .applySettled(let settled): try settled.checkStored(lines)
                    default: break
                    }
                } catch let error as LedgerError {
                    problem = (sequence, "event \(sequence): \(error.message)")
                    return
                }
            }
        }
        let held = try view.schema.rows.map { try view.transaction.count($0) } ?? 0
        if held != storedRows {
            problem = (
                try view.head().sequence,
                "the rows database holds \(held) rows; the batch events that keep their rows there name \(storedRows)"
            )
        }
    }
}
