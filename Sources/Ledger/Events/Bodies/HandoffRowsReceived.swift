import Basics
import LogEngine

/// Body of "handoff rows received" (team B): one chunk of a handoff's rows, taken into the log
/// before any call to Apple, so that every handed-over user exists on team B's side (keyed by
/// `transfer_sub`, with team A's `account_id` and the package number) from the moment the
/// package arrives.
///
/// A package's rows are recorded as consecutive chunks of at most ``HandoffRowsForm/rowsPerChunk``
/// rows, each its own event (bounded at any package size). The rows are kept as parallel arrays
/// in file order; for a signed package, `rows.csv` as Handover writes it (the header, then each
/// row as a CSV line ended by CRLF) rebuilt from every chunk in order hashes to the manifest's
/// `rows-sha256`, which `verify` checks. The envelope names no user (an envelope holds one
/// identifier of each kind): the fold reads the users from the body.
///
/// The rows of a v2 package are not in the event's JSON: it holds their Merkle root
/// (``rowsRoot``, a node of the tree whose root the manifest signs) and count, and each row's
/// CSV line is stored beside the event in the `rows` database (``rowLines``), so that one row
/// can be shown with its path to the root without the others. Decoded from its JSON alone, such
/// a body lacks its rows (``lacksRows``) until ``attach(rowLines:)`` gives them back; a
/// ``LogView`` does that for every event it reads.
public struct HandoffRowsReceived: Hashable, Sendable, RowCommittingBody {

    /// The sender ledger's origin (the pinned key's name); nil for a bare CSV.
    public var origin: String?
    /// The package's number; nil for a bare CSV.
    public var package: Int?
    /// SHA-256 of the package's manifest, hex; nil for a bare CSV.
    public var manifestSHA256: String?
    /// SHA-256 of the rows file as read, hex (for a package, the manifest's `rows-sha256`).
    public var fileSHA256: String
    /// This chunk's number, from 0, and how many chunks the file makes.
    public var chunk: Int
    public var chunkCount: Int
    /// The file's row count, and the index (from 0) of this chunk's first row.
    public var rowCount: Int
    public var firstRow: Int
    /// Each row's `account_id` ("" where the row has none), `transfer_sub` and, for a package,
    /// the sender's event that generated it (empty for a bare CSV).
    public var accountIDs: [String]
    public var transferSubs: [String]
    public var sequences: [Int]
    /// v2: each row's salt; empty in v1.
    public var salts: [[UInt8]]
    /// v2: the chunk's row tree root; nil in v1.
    public var rowsRoot: SHA256Hash?
    /// How many rows this chunk holds (those of a v2 body decoded from its JSON alone included).
    public private(set) var chunkRows: Int

    /// The form of the rows: v2 when they commit to a root.
    public var form: HandoffRowsForm { rowsRoot == nil ? .v1 : .v2 }

    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { transferSubs.count != chunkRows }

    /// A chunk in v1 form (salts empty) or in v2 form (a salt for each row; the root is computed).
    public init(
        origin: String?, package: Int?, manifestSHA256: String?, fileSHA256: String, chunk: Int, chunkCount: Int, rowCount: Int, firstRow: Int,
        accountIDs: [String], transferSubs: [String], sequences: [Int], salts: [[UInt8]] = []
    ) {
        self.origin = origin
        self.package = package
        self.manifestSHA256 = manifestSHA256
        self.fileSHA256 = fileSHA256
        self.chunk = chunk
        self.chunkCount = chunkCount
        self.rowCount = rowCount
        self.firstRow = firstRow
        self.accountIDs = accountIDs
        self.transferSubs = transferSubs
        self.sequences = sequences
        precondition(salts.isEmpty || salts.count == transferSubs.count, "a v2 chunk has a salt for each row")
        self.salts = salts
        chunkRows = transferSubs.count
        rowsRoot = salts.isEmpty ? nil : RowTree(kind: .handoffRow, rows: lines()).root
    }

    /// v2: each row's CSV line as the `rows` database holds it (the row's leaf bytes); empty in v1.
    public var rowLines: [[UInt8]] { form == .v2 && !lacksRows ? lines() : [] }

    /// Each row's v2 line, from the arrays and the salts.
    private func lines() -> [[UInt8]] {
        salts.indices.map { i in
            var line: [UInt8] = []
            HandoffRowsForm.v2.appendRow(
                accountID: accountIDs[i], transferSub: transferSubs[i], sequence: UInt64(sequences[i]), salt: salts[i], to: &line)
            return line
        }
    }

    public var keptRowCount: Int { rowsRoot == nil ? 0 : chunkRows }

    public func checkStored(_ lines: [[UInt8]]) throws {
        guard let rowsRoot, lines.count == chunkRows else {
            throw LedgerError(.malformedRecord, "handoff rows: \(lines.count) stored rows for a chunk of \(chunkRows)")
        }
        guard RowTree(kind: .handoffRow, rows: lines).root == rowsRoot else {
            throw LedgerError(.malformedRecord, "handoff rows: the stored rows do not hash to the chunk's rows_root: a row was changed")
        }
    }

    /// Gives a v2 body read from its JSON its rows, read from the `rows` database: each must be
    /// a v2 row line, and together they must hash to ``rowsRoot``.
    public mutating func attach(rowLines lines: [[UInt8]]) throws {
        try checkStored(lines)
        var accountIDs: [String] = []
        var transferSubs: [String] = []
        var sequences: [Int] = []
        var salts: [[UInt8]] = []
        for line in lines {
            guard let row = HandoffRowLine(line, form: .v2), let accountID = row.accountIDText, let transferSub = row.transferSubText,
                let sequence = row.sequenceNumber, sequence <= UInt64(Int64.max), let salt = row.saltBytes
            else { throw LedgerError(.malformedRecord, "handoff rows: a stored row is not a v2 rows.csv line") }
            accountIDs.append(accountID)
            transferSubs.append(transferSub)
            sequences.append(Int(sequence))
            salts.append(salt)
        }
        (self.accountIDs, self.transferSubs, self.sequences, self.salts) = (accountIDs, transferSubs, sequences, salts)
    }

    /// Whether the rows came in a signed package (else a bare CSV).
    public var isSigned: Bool { manifestSHA256 != nil }

    /// The idempotency key of chunk `chunk` of a package (`origin`, `package`) or of a bare
    /// CSV with SHA-256 `fileSHA256`: each chunk is recorded once.
    public static func idempotencyKey(origin: String?, package: Int?, fileSHA256: String, chunk: Int) -> String {
        if let origin, let package { return "handoff-rows:\(origin):\(package):\(chunk)" }
        return "handoff-rows:unsigned:\(fileSHA256):\(chunk)"
    }

    /// This event's idempotency key.
    public var idempotencyKey: String { Self.idempotencyKey(origin: origin, package: package, fileSHA256: fileSHA256, chunk: chunk) }
}

extension HandoffRowsReceived: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        // v2 keeps its rows beside the event: their count and root stand for them.
        let rowsRoot = try c.optional("rows_root", v?.rowsRoot)
        let v2 = rowsRoot != nil
        var chunk = Self(
            origin: try c.optional("origin", v?.origin), package: try c.optional("package", v?.package, in: HandoffManifest.packagesAllowed),
            manifestSHA256: try c.optional("manifest_sha256", v?.manifestSHA256), fileSHA256: try c.field("file_sha256", v?.fileSHA256),
            chunk: try c.count("chunk", v?.chunk), chunkCount: try c.field("chunk_count", v?.chunkCount, in: 1...Int(Int32.max)),
            rowCount: try c.field("row_count", v?.rowCount, in: 0...Int(Int32.max)),
            firstRow: try c.field("first_row", v?.firstRow, in: 0...Int(Int32.max)), accountIDs: v2 ? [] : try c.field("account_ids", v?.accountIDs),
            transferSubs: v2 ? [] : try c.field("transfer_subs", v?.transferSubs), sequences: v2 ? [] : try c.field("sequences", v?.sequences))
        if let rowsRoot {
            chunk.rowsRoot = rowsRoot
            chunk.chunkRows = try c.field("rows", v?.chunkRows, in: 1...HandoffRowsForm.v2.rowsPerChunk)
        }
        guard C.isReading else { return chunk }
        let signed = chunk.manifestSHA256 != nil
        guard (chunk.origin != nil) == signed, (chunk.package != nil) == signed, signed || !v2 else {
            throw LedgerError(.malformedRecord, "handoff rows: origin, package and manifest_sha256 go together, and rows_root with them")
        }
        guard chunk.chunk < chunk.chunkCount, chunk.accountIDs.count == chunk.transferSubs.count,
            chunk.sequences.count == (signed ? chunk.transferSubs.count : 0), chunk.chunkRows <= chunk.form.rowsPerChunk,
            chunk.firstRow + chunk.chunkRows <= chunk.rowCount
        else {
            throw LedgerError(
                .malformedRecord,
                "handoff rows: chunk \(chunk.chunk) of \(chunk.chunkCount), rows \(chunk.firstRow) + \(chunk.chunkRows) of \(chunk.rowCount), arrays of unequal length"
            )
        }
        return chunk
    }
}
