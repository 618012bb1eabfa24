import Ledger
import Projections

/// One person's row of a handoff package, proven alone: the row as team A listed it and team B
/// received it, inside B's "handoff rows received" event (v2) of the row's chunk, with two
/// audit paths: the row's among its chunk's rows, to the event's `rows_root`; then the chunk's
/// among the package's chunks, to the package's `rows-root` that team A's manifest signs
/// (schemas/audit-evidence.md, "Row commitments"). An evidence bundle holds it as
/// `rows/SEQ.json` (schemas/evidence-bundle.md); no other row is needed or shown.
public struct HandoffRowEvidence: Equatable, Sendable {
    /// The "handoff rows received" event holding the row.
    public var sequence: UInt64
    /// The row's CSV line as `rows.csv` has it, without its CRLF, salt included.
    public var row: [UInt8]
    /// The row's index in its chunk, from 0.
    public var index: Int
    /// The row's audit path in its chunk, and its chunk's among the package's chunks.
    public var chunkPath: [SHA256Hash]
    public var packagePath: [SHA256Hash]

    /// The row tree kind of every row here.
    public static let kind = RowTree.Kind.handoffRow

    public init(sequence: UInt64, row: [UInt8], index: Int, chunkPath: [SHA256Hash], packagePath: [SHA256Hash]) {
        self.sequence = sequence
        self.row = row
        self.index = index
        self.chunkPath = chunkPath
        self.packagePath = packagePath
    }

    /// `user`'s rows in the v2 "handoff rows received" events up to `last`, each with its paths;
    /// a row whose package was not wholly taken in (a chunk missing) has no path to the
    /// package's root and is left out.
    static func rows(of user: UserState, through last: UInt64, snapshot: any ProjectionSnapshot, view: LogView) throws -> [HandoffRowEvidence] {
        guard let transferSub = user.transferSub else { return [] }
        return try snapshot.eventSequences(linkedTo: user.identifiers).filter { $0 <= last }.compactMap { sequence in
            guard case .handoffRowsReceived(let chunk)? = try view.event(sequence)?.body, chunk.form == .v2,
                let i = chunk.transferSubs.firstIndex(of: transferSub), let roots = try chunkRoots(of: chunk, view: view)
            else { return nil }
            return HandoffRowEvidence(
                sequence: sequence, row: chunk.rowLines[i], index: i, chunkPath: RowTree(kind: kind, rows: chunk.rowLines).path(of: i),
                packagePath: RowTree(leaves: roots).path(of: chunk.chunk))
        }
    }

    /// The roots of every chunk of `chunk`'s package, in order, from their events as logged
    /// (their rows not read); nil when one is not in the ledger.
    private static func chunkRoots(of chunk: HandoffRowsReceived, view: LogView) throws -> [SHA256Hash]? {
        var roots: [SHA256Hash] = []
        for c in 0..<chunk.chunkCount {
            let key = HandoffRowsReceived.idempotencyKey(origin: chunk.origin, package: chunk.package, fileSHA256: chunk.fileSHA256, chunk: c)
            guard let sequence = try view.sequence(forIdempotencyKey: key),
                case .handoffRowsReceived(let other)? = try view.eventAsLogged(sequence)?.body, let root = other.rowsRoot
            else { return nil }
            roots.append(root)
        }
        return roots
    }

    /// The file's JSON (schemas/evidence-bundle.md, "rows/SEQ.json").
    public var json: JSONValue {
        .object([
            "seq": .int(Int64(sequence)), "kind": .string(Self.kind.rawValue), "row": .string(String(decoding: row, as: UTF8.self)),
            "index": .int(Int64(index)), "chunk_path": .array(chunkPath.map { .string(Hex.encode($0.bytes)) }),
            "package_path": .array(packagePath.map { .string(Hex.encode($0.bytes)) }),
        ])
    }

    /// Reads a `rows/SEQ.json` file's JSON; the reason it is not one when it is not.
    public init(json object: [String: JSONValue]) throws(Malformed) {
        func hashes(_ name: String) throws(Malformed) -> [SHA256Hash] {
            guard let items = object[name]?.arrayValue, items.count <= 64 else { throw Malformed("\(name) is not an array of hashes") }
            var hashes: [SHA256Hash] = []
            for item in items {
                guard let text = item.stringValue, let hash = Hex.decode(text).flatMap({ SHA256Hash($0) }), Hex.encode(hash.bytes) == text else {
                    throw Malformed("\(name) holds something other than 64 lowercase hex digits")
                }
                hashes.append(hash)
            }
            return hashes
        }
        guard object.count == 6, let seq = object["seq"]?.intValue, seq > 0, object["kind"]?.stringValue == Self.kind.rawValue,
            let row = object["row"]?.stringValue, let index = object["index"]?.intValue, index >= 0
        else {
            throw Malformed("not {seq, kind \"\(Self.kind.rawValue)\", row, index, chunk_path, package_path}")
        }
        self.init(
            sequence: UInt64(seq), row: Array(row.utf8), index: Int(index), chunkPath: try hashes("chunk_path"),
            packagePath: try hashes("package_path"))
    }

    /// Why a row file could not be read.
    public struct Malformed: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The root of the row's chunk its path leads to, as row ``index`` of `count` rows.
    public func chunkRoot(count: Int) -> SHA256Hash? {
        RowTree.root(kind: Self.kind, row: row, index: index, count: count, path: chunkPath)
    }

    /// The root of the package its paths lead to, the row's chunk being chunk `chunk` of
    /// `chunkCount` of `count` rows.
    public func packageRoot(chunk: Int, chunkCount: Int, count: Int) -> SHA256Hash? {
        chunkRoot(count: count).flatMap { RowTree.root(node: $0, index: chunk, count: chunkCount, path: packagePath) }
    }
}
