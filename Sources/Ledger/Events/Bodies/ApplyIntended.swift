import Basics
import Crypto
import LogEngine

/// Body of "apply intended" (team B): one batch of an apply run, recorded before its
/// transaction is sent to the app's database: for each user's account (by `account_id`), one
/// cell per column the run plans for it (``ApplyCell``): the value the plan read, the value it is
/// to take and what the plan found. Only the cells planned `change` are written; the transaction
/// also writes a marker row holding ``sha256``, by which a rerun after a crash learns whether the
/// batch committed. The envelope names no user.
///
/// In v2 (salted rows), the accounts are not in the event's JSON: it holds their count and
/// Merkle root, and each account's line (``ApplyRowLine``) is stored beside the event in the
/// `rows` database, followed by one holders line per collision cell, so that one person's row can
/// be shown with its path to the root without anyone else's. Decoded from its JSON alone, such a
/// body lacks its rows (``lacksRows``) until ``attach(rowLines:)`` gives them back; a
/// ``LogView`` does that for every event it reads. A v1 body (written before 0.5.0) holds its
/// accounts in its JSON, each with one `recipient_sub` cell.
public struct ApplyIntended: Hashable, Sendable, RowCommittingBody {
    /// The most rows one batch holds.
    public static let maximumRows = 10_000

    /// One account of the batch: its key and its cells, one per column planned, in column order.
    public struct Row: Hashable, Sendable {
        public var account: String
        public var cells: [ApplyCell]

        public init(account: String, cells: [ApplyCell]) {
            self.account = account
            self.cells = cells
        }

        /// The cell of `column`, when the batch plans it for this account.
        public func cell(_ column: ApplyColumn) -> ApplyCell? { cells.first { $0.column == column } }
    }

    /// Where one cell sits: its account's index in the batch, and its column.
    public struct CellIndex: Hashable, Sendable, Comparable {
        public var row: Int
        public var column: ApplyColumn

        public init(row: Int, column: ApplyColumn) {
            self.row = row
            self.column = column
        }

        public static func < (a: CellIndex, b: CellIndex) -> Bool { (a.row, a.column) < (b.row, b.column) }
    }

    public var batch: Int
    /// The accounts, in the batch's order.
    public private(set) var rows: [Row]
    /// v2: each row's salt, and each collision cell's holders line's salt; empty in v1.
    public private(set) var salts: [[UInt8]]
    public private(set) var holderSalts: [CellIndex: [UInt8]]
    /// v2: the root of the accounts' row tree; nil in v1.
    public private(set) var rowsRoot: SHA256Hash?
    /// How many accounts, and collision cells, the batch holds (those of a v2 body read from its JSON alone included).
    public private(set) var rowCount: Int
    public private(set) var collisionCount: Int
    /// v2: the lines the rows hash to and the `rows` database holds (``rowLines``), made once.
    private var lines: [[UInt8]] = []

    /// A batch in v1 form (no salts; each row one `recipient_sub` cell with text values) or in v2
    /// form (a salt for each row and for each collision cell's holders; the root is computed).
    public init(batch: Int, rows: [Row], salts: [[UInt8]] = [], holderSalts: [CellIndex: [UInt8]] = [:]) {
        self.batch = batch
        self.rows = rows
        let collisions = Self.collisions(of: rows)
        precondition(
            salts.isEmpty
                ? rows.allSatisfy { $0.cells.count == 1 && $0.cells[0].column == .recipientSub }
                : salts.count == rows.count
                    && Set(holderSalts.keys) == Set(collisions),
            "a v1 batch has recipient_sub cells alone; a v2 batch salts each row and collision")
        self.salts = salts
        self.holderSalts = holderSalts
        rowCount = rows.count
        collisionCount = collisions.count
        guard !salts.isEmpty else { return }
        let (accountLines, holderLines) = makeLines()
        rowsRoot = RowTree(kind: .applyIntendedRow, rows: accountLines).root
        lines = accountLines + holderLines
    }

    /// A batch of `recipient_sub` cells alone, the form of versions that set no other column:
    /// each account's value read, value to take and planned outcome, and each collision's holders
    /// by row; salted (v2) when `salts` are given.
    public init(
        batch: Int, accountIDs: [String], oldValues: [String?], newValues: [String?], planned: [ApplyPlanned], holders: [Int: [String]] = [:],
        salts: [[UInt8]] = [], holderSalts: [Int: [UInt8]] = [:]
    ) {
        let rows = accountIDs.indices.map { i in
            Row(
                account: accountIDs[i],
                cells: [
                    ApplyCell(
                        column: .recipientSub, old: oldValues[i].map(ApplyValue.text), new: newValues[i].map(ApplyValue.text), planned: planned[i],
                        holders: holders[i] ?? [])
                ])
        }
        self.init(
            batch: batch, rows: rows, salts: salts,
            holderSalts: Dictionary(uniqueKeysWithValues: holderSalts.map { (CellIndex(row: $0.key, column: .recipientSub), $0.value) }))
    }

    /// The accounts' keys, in the batch's order.
    public var accountIDs: [String] { rows.map(\.account) }

    /// The cells planned `change`, in the order a batch's changes (and its marker's letters) take:
    /// by row, then by column.
    public var changes: [CellIndex] {
        rows.indices.flatMap { i in rows[i].cells.filter { $0.planned == .change }.map { CellIndex(row: i, column: $0.column) } }
    }

    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { rows.count != rowCount }

    /// v2: the lines the `rows` database holds for the event: each account's, then each
    /// collision cell's holders line in the order of their rows (and columns); empty in v1.
    public var rowLines: [[UInt8]] { rowsRoot == nil || lacksRows ? [] : lines }

    /// The accounts' lines, then one holders line for each collision cell.
    public var keptRowCount: Int { rowsRoot == nil ? 0 : rowCount + collisionCount }

    /// Each collision cell's place, in order.
    private static func collisions(of rows: [Row]) -> [CellIndex] {
        rows.indices.flatMap { i in rows[i].cells.filter { $0.planned == .collision }.map { CellIndex(row: i, column: $0.column) } }
    }

    /// Each account's v2 line and each collision cell's holders line, from the rows and the salts.
    private func makeLines() -> (rows: [[UInt8]], holders: [[UInt8]]) {
        var holderLines: [CellIndex: ApplyRowLine] = [:]
        for place in Self.collisions(of: rows) {
            let accounts = rows[place.row].cell(place.column)?.holders ?? []
            holderLines[place] = .holders(row: place.row, column: place.column, accounts: accounts, salt: holderSalts[place]!)
        }
        let lines = salts.indices.map { i in
            let cells = rows[i].cells.map { cell in
                ApplyRowLine.Cell(
                    column: cell.column, old: cell.old, new: cell.new, planned: cell.planned,
                    holdersSHA256: holderLines[CellIndex(row: i, column: cell.column)]?.sha256)
            }
            return ApplyRowLine.intended(account: rows[i].account, cells: cells, salt: salts[i]).bytes
        }
        return (lines, holderLines.keys.sorted().map { holderLines[$0]!.bytes })
    }

    /// Checks the lines the `rows` database holds for this v2 body without decoding every
    /// account: the accounts' lines hash to ``rowsRoot`` (so they are the lines written), and
    /// each holders line, in the order of their cells, is the one its collision cell commits to.
    /// What `verify` does.
    public func checkStored(_ lines: [[UInt8]]) throws {
        guard let rowsRoot, lines.count == rowCount + collisionCount else {
            throw malformed("\(lines.count) stored lines for \(rowCount) rows and \(collisionCount) collisions")
        }
        guard RowTree(kind: .applyIntendedRow, rows: lines[..<rowCount]).root == rowsRoot else {
            throw malformed("the stored rows do not hash to the batch's rows_root: a row was changed")
        }
        var previous: CellIndex?
        for line in lines[rowCount...] {
            let holders = ApplyRowLine(line, kind: .applyIntendedRow)
            guard case .holders(let row, let column, _, _)? = holders, row < rowCount,
                previous.map({ $0 < CellIndex(row: row, column: column) }) ?? true,
                case .intended(_, let cells, _)? = ApplyRowLine(lines[row], kind: .applyIntendedRow),
                let cell = cells.first(where: { $0.column == column }), cell.planned == .collision, cell.holdersSHA256 == holders?.sha256
            else { throw malformed("a stored holders line is not the one a collision cell commits to, in order") }
            previous = CellIndex(row: row, column: column)
        }
    }

    /// Gives a v2 body read from its JSON its rows, read from the `rows` database: the accounts'
    /// lines, which must hash to ``rowsRoot``, then one holders line for each collision cell, each
    /// the one its cell commits to.
    public mutating func attach(rowLines lines: [[UInt8]]) throws {
        try checkStored(lines)
        var parsed: [Row] = []
        var salts: [[UInt8]] = []
        var committed = 0
        for (i, line) in lines[..<rowCount].enumerated() {
            guard case .intended(let account, let cells, let salt)? = ApplyRowLine(line, kind: .applyIntendedRow) else {
                throw malformed("stored row \(i) is not an intended account's line")
            }
            committed += cells.filter { $0.holdersSHA256 != nil }.count
            parsed.append(
                Row(account: account, cells: cells.map { ApplyCell(column: $0.column, old: $0.old, new: $0.new, planned: $0.planned) }))
            salts.append(salt)
        }
        // Each holders line is the one its collision cell commits to (``checkStored(_:)``).
        var holderSalts: [CellIndex: [UInt8]] = [:]
        for line in lines[rowCount...] {
            guard case .holders(let row, let column, let accounts, let salt)? = ApplyRowLine(line, kind: .applyIntendedRow),
                let c = parsed[row].cells.firstIndex(where: { $0.column == column })
            else { continue }
            parsed[row].cells[c].holders = accounts
            holderSalts[CellIndex(row: row, column: column)] = salt
        }
        guard holderSalts.count == committed else { throw malformed("a collision cell's holders line is missing") }
        (rows, self.salts, self.holderSalts, self.lines) = (parsed, salts, holderSalts, lines)
    }

    private func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply intended batch \(batch): \(text)") }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String, batch: Int) -> String { "apply-intended:\(run):\(batch)" }

    /// SHA-256 of this body's canonical JSON, hex: what the batch's marker row holds.
    public var sha256: String {
        var w = JSONWriter(capacity: 64 * rows.count + 64)
        write(to: &w)
        return Hex.encode(SHA256.hash(data: w.bytes))
    }
}

extension ApplyIntended: FieldObject {
    static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
        let batch = try c.count("batch", v?.batch)
        if let rowsRoot = try c.optional("rows_root", v?.rowsRoot) {
            // v2: the rows are kept beside the event; their counts and root stand for them.
            var intended = Self(batch: batch, rows: [])
            intended.rowsRoot = rowsRoot
            intended.rowCount = try c.field("rows", v?.rowCount, in: 1...maximumRows)
            intended.collisionCount = try c.field("collision_count", v?.collisionCount, in: 0...intended.rowCount * ApplyColumn.allCases.count)
            return intended
        }
        // v1: one recipient_sub cell a row, with text values (the initialiser holds to it).
        let cells = v?.rows.map { $0.cells[0] }
        let accountIDs = try c.field("account_ids", v?.accountIDs)
        let planned = try c.field("planned", cells?.map(\.planned.rawValue)).map { name in
            guard let p = ApplyPlanned(rawValue: name), p != .kept else {
                throw LedgerError(.malformedRecord, "apply intended: unknown planned outcome")
            }
            return p
        }
        let collisions = try c.field(
            "collisions",
            cells.map { cells in cells.indices.filter { cells[$0].planned == .collision }.map { Collision(holders: cells[$0].holders, row: $0) } })
        var holders: [Int: [String]] = [:]
        for collision in collisions {
            guard (0..<accountIDs.count).contains(collision.row), holders[collision.row] == nil, planned.indices.contains(collision.row),
                planned[collision.row] == .collision
            else { throw Collision.malformed }
            holders[collision.row] = collision.holders
        }
        let oldValues = try values(&c, "old_nulls", "old_values", cells?.map { $0.old?.text })
        let newValues = try values(&c, "new_nulls", "new_values", cells?.map { $0.new?.text })
        guard accountIDs.count <= maximumRows, oldValues.count == accountIDs.count, newValues.count == accountIDs.count,
            planned.count == accountIDs.count, planned.filter({ $0 == .collision }).count == holders.count
        else {
            throw LedgerError(
                .malformedRecord,
                "apply intended: batch \(batch) has arrays of unequal length, more than \(maximumRows) rows, or a collision without its holders")
        }
        return Self(batch: batch, accountIDs: accountIDs, oldValues: oldValues, newValues: newValues, planned: planned, holders: holders)
    }

    /// v1: optional strings as two fields, never `null`: the values ("" for nil) and the indices of the nil ones.
    private static func values<C: FieldCoder>(
        _ c: inout C, _ nullsKey: StaticString, _ valuesKey: StaticString, _ given: [String?]?
    ) throws
        -> [String?]
    {
        let nulls = try c.field(nullsKey, given.map { given in given.indices.filter { given[$0] == nil } })
        var values: [String?] = try c.field(valuesKey, given.map { given in given.map { $0 ?? "" } })
        for i in nulls {
            guard i < values.count else { throw LedgerError(.malformedRecord, "apply intended: \(nullsKey) names row \(i) of \(values.count)") }
            values[i] = nil
        }
        return values
    }

    /// v1: a row planned `collision` and the accounts that hold the value it was to take.
    private struct Collision: FieldObject, FieldArrayElement {
        var holders: [String]
        var row: Int

        static let malformed = LedgerError(
            .malformedRecord, "apply intended: a collision is not {holders, row} of a row of the batch planned collision")

        static func fields<C: FieldCoder>(_ c: inout C, _ v: Self?) throws -> Self {
            Self(holders: try c.field("holders", v?.holders), row: try c.field("row", v?.row))
        }

        static var arrayExpected: String { "an array" }

        /// The collisions, each exactly `{holders, row}`.
        static func readArray(_ key: StaticString, of object: FieldReader) throws -> [Collision]? {
            guard object.has(key) else { return nil }
            return try object.array(key).map { item in
                guard let row = item["row"]?.intValue.map(Int.init), let keys = item["holders"]?.arrayValue?.compactMap(\.stringValue),
                    keys.count == item["holders"]?.arrayValue?.count, item.objectValue?.count == 2
                else { throw malformed }
                return Collision(holders: keys, row: row)
            }
        }
    }
}
