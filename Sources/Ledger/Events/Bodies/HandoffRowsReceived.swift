/// Body of "handoff rows received" (team B): one chunk of a handoff's rows, taken into the log
/// before any call to Apple, so that every handed-over user exists on team B's side (keyed by
/// `transfer_sub`, with team A's `account_id` and the package number) from the moment the
/// package arrives.
///
/// A package's rows are recorded as consecutive chunks of at most ``rowsPerChunk`` rows, each
/// its own event (bounded at any package size). The rows are kept as parallel arrays in file
/// order; for a signed package, `rows.csv` as Handover writes it (the header, then each row as
/// a CSV line ended by CRLF) rebuilt from every chunk in order hashes to the manifest's
/// `rows-sha256`, which `verify` checks. The envelope names no user (an envelope holds one
/// identifier of each kind): the fold reads the users from the body.
public struct HandoffRowsReceived: Hashable, Sendable {
    /// The most rows one event holds.
    public static let rowsPerChunk = 1_000

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

    public init(
        origin: String?, package: Int?, manifestSHA256: String?, fileSHA256: String, chunk: Int, chunkCount: Int, rowCount: Int, firstRow: Int,
        accountIDs: [String], transferSubs: [String], sequences: [Int]
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("account_ids")
        w.beginArray()
        for id in accountIDs { w.string(id) }
        w.endArray()
        w.field("chunk", chunk)
        w.field("chunk_count", chunkCount)
        w.field("file_sha256", fileSHA256)
        w.field("first_row", firstRow)
        w.field("manifest_sha256", manifestSHA256)
        w.field("origin", origin)
        w.field("package", package)
        w.field("row_count", rowCount)
        w.key("sequences")
        w.beginArray()
        for s in sequences { w.int(s) }
        w.endArray()
        w.key("transfer_subs")
        w.beginArray()
        for s in transferSubs { w.string(s) }
        w.endArray()
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        let signed = r.has("manifest_sha256")
        self.init(
            origin: try r.optionalString("origin"), package: try r.has("package") ? r.int("package", in: HandoffManifest.packagesAllowed) : nil,
            manifestSHA256: try r.optionalString("manifest_sha256"), fileSHA256: try r.string("file_sha256"),
            chunk: try r.count("chunk"), chunkCount: try r.int("chunk_count", in: 1...Int(Int32.max)),
            rowCount: try r.int("row_count", in: 0...Int(Int32.max)),
            firstRow: try r.int("first_row", in: 0...Int(Int32.max)), accountIDs: try r.stringArray("account_ids"),
            transferSubs: try r.stringArray("transfer_subs"),
            sequences: try r.countArray("sequences"))
        guard (origin != nil) == signed, (package != nil) == signed else {
            throw LedgerError(.malformedRecord, "handoff rows: origin, package and manifest_sha256 go together")
        }
        guard chunk < chunkCount, accountIDs.count == transferSubs.count, sequences.count == (signed ? transferSubs.count : 0),
            transferSubs.count <= Self.rowsPerChunk, firstRow + transferSubs.count <= rowCount
        else {
            throw LedgerError(
                .malformedRecord,
                "handoff rows: chunk \(chunk) of \(chunkCount), rows \(firstRow) + \(transferSubs.count) of \(rowCount), arrays of unequal length")
        }
    }
}
