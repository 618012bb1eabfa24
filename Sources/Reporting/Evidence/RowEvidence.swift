import Basics
import Ledger
import LogEngine
import Projections

/// One person's row of a batch event, proven alone by its audit path to the root the event's
/// JSON holds (schemas/audit-evidence.md, "Row commitments"), and written to an evidence bundle
/// as `rows/SEQ.json` (schemas/evidence-bundle.md). No other row is needed or shown.
///
/// - A row of a handoff package, in team B's "handoff rows received" event of its chunk: its path
///   in the chunk, then the chunk's among the package's chunks to the `rows-root` team A's
///   manifest signs.
/// - An account of an apply batch, in its "apply intended" or "apply settled" event.
public struct RowEvidence: Equatable, Sendable {
    /// The batch event holding the row.
    public var sequence: UInt64
    public var kind: RowTree.Kind
    /// The row's bytes, its leaf's after the tag line: a `rows.csv` line without its CRLF, or an
    /// apply account's JSON line.
    public var row: [UInt8]
    /// The row's index in its event's rows, from 0.
    public var index: Int
    /// The row's audit path among its event's rows.
    public var path: [SHA256Hash]
    /// A handoff row's chunk's audit path among the package's chunks; nil for an apply row.
    public var packagePath: [SHA256Hash]?

    public init(sequence: UInt64, kind: RowTree.Kind, row: [UInt8], index: Int, path: [SHA256Hash], packagePath: [SHA256Hash]? = nil) {
        self.sequence = sequence
        self.kind = kind
        self.row = row
        self.index = index
        self.path = path
        self.packagePath = packagePath
    }

    /// Row `index` of `rows` (kind `kind`) of event `sequence`, with its path in `tree`, their
    /// row tree (made here when not given).
    init(sequence: UInt64, kind: RowTree.Kind, rows: [[UInt8]], index: Int, tree: RowTree? = nil, packagePath: [SHA256Hash]? = nil) {
        self.init(
            sequence: sequence, kind: kind, row: rows[index], index: index, path: (tree ?? RowTree(kind: kind, rows: rows)).path(of: index),
            packagePath: packagePath)
    }

    /// `user`'s rows in the v2 "handoff rows received" events up to `last`, each with its paths;
    /// a row whose package was not wholly taken in (a chunk missing) has no path to the
    /// package's root and is left out.
    static func handoffRows(of user: UserState, through last: UInt64, snapshot: any ProjectionSnapshot, view: LogView) throws -> [RowEvidence] {
        guard let transferSub = user.transferSub else { return [] }
        return try snapshot.eventSequences(linkedTo: user.identifiers).filter { $0 <= last }.compactMap { sequence in
            guard let logged = try view.eventAsLogged(sequence), case .handoffRowsReceived(let chunk) = logged.body, chunk.form == .v2,
                case .handoffRowsReceived(let rows) = try view.withStoredRows(logged).body, let i = rows.transferSubs.firstIndex(of: transferSub),
                let roots = try view.packageChunkRoots(of: chunk, at: sequence)
            else { return nil }
            return RowEvidence(
                sequence: sequence, kind: .handoffRow, rows: rows.rowLines, index: i, packagePath: RowTree(leaves: roots).path(of: chunk.chunk))
        }
    }

    /// The user's rows of the v2 apply batch `applied` names: the account's line in the "apply
    /// intended" and in the "apply settled"; empty when either event holds its accounts in its
    /// JSON (v1), whose row is then only stated.
    static func applyRows(of applied: UserApplyRow, view: LogView) throws -> [RowEvidence] {
        // The row found the account at this index of both events; their lines are read as
        // stored, checked against their roots, and not decoded again.
        guard let intentSequence = applied.intentSequence, case .applySettled(let settled)? = try view.eventAsLogged(applied.sequence)?.body,
            case .applyIntended(let intent)? = try view.eventAsLogged(intentSequence)?.body, let settledRoot = settled.rowsRoot,
            let intentRoot = intent.rowsRoot
        else { return [] }
        let intended = Array(try view.storedRows(of: intentSequence, count: intent.rowCount + intent.collisionCount).prefix(intent.rowCount))
        let settledLines = try view.storedRows(of: applied.sequence, count: settled.rowCount)
        // Each tree is made once: checked against its root, then the row's path taken from it.
        let intentTree = RowTree(kind: .applyIntendedRow, rows: intended)
        let settledTree = RowTree(kind: .applySettledRow, rows: settledLines)
        guard intentTree.root == intentRoot, settledTree.root == settledRoot else {
            throw LedgerError(
                .malformedRecord, "apply run \(applied.run) batch \(applied.batch): the stored rows do not hash to the batch's rows_root")
        }
        return [
            RowEvidence(sequence: intentSequence, kind: .applyIntendedRow, rows: intended, index: applied.index, tree: intentTree),
            RowEvidence(sequence: applied.sequence, kind: .applySettledRow, rows: settledLines, index: applied.index, tree: settledTree),
        ]
    }

    /// The file's JSON (schemas/evidence-bundle.md, "rows/SEQ.json"): a handoff row's paths are
    /// `chunk_path` and `package_path`, an apply row's `path`.
    public var json: JSONValue {
        func hashes(_ list: [SHA256Hash]) -> JSONValue { .array(list.map { .string(Hex.encode($0.bytes)) }) }
        var members: [String: JSONValue] = [
            "seq": .int(Int64(sequence)), "kind": .string(kind.rawValue), "row": .string(String(decoding: row, as: UTF8.self)),
            "index": .int(Int64(index)),
        ]
        if let packagePath {
            members["chunk_path"] = hashes(path)
            members["package_path"] = hashes(packagePath)
        } else {
            members["path"] = hashes(path)
        }
        return .object(members)
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
        guard let seq = object["seq"]?.intValue, seq > 0, let kind = object["kind"]?.stringValue.flatMap(RowTree.Kind.init(rawValue:)),
            let row = object["row"]?.stringValue, let index = object["index"]?.intValue, index >= 0,
            object.count == (kind == .handoffRow ? 6 : 5)
        else {
            throw Malformed("not {seq, kind, row, index} with chunk_path and package_path (a handoff row) or path (an apply row)")
        }
        if kind == .handoffRow {
            self.init(
                sequence: UInt64(seq), kind: kind, row: Array(row.utf8), index: Int(index), path: try hashes("chunk_path"),
                packagePath: try hashes("package_path"))
        } else {
            self.init(sequence: UInt64(seq), kind: kind, row: Array(row.utf8), index: Int(index), path: try hashes("path"))
        }
    }

    /// Why a row file could not be read.
    public struct Malformed: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The root of the row's event its path leads to, as row ``index`` of `count` rows.
    public func root(count: Int) -> SHA256Hash? {
        RowTree.root(kind: kind, row: row, index: index, count: count, path: path)
    }

    /// The root of a handoff row's package its paths lead to, the row's chunk being chunk
    /// `chunk` of `chunkCount` of `count` rows.
    public func packageRoot(chunk: Int, chunkCount: Int, count: Int) -> SHA256Hash? {
        guard let packagePath else { return nil }
        return root(count: count).flatMap { RowTree.root(node: $0, index: chunk, count: chunkCount, path: packagePath) }
    }
}
