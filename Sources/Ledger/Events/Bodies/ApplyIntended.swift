import Basics
import Crypto

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
public struct ApplyIntended: Hashable, Sendable {
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

    func write(to w: inout JSONWriter) {
        w.beginObject()
        if let rowsRoot {
            // v2: the rows are kept beside the event; their counts and root stand for them.
            w.field("batch", batch)
            w.field("collision_count", collisionCount)
            w.field("rows", rowCount)
            w.field("rows_root", Hex.encode(rowsRoot.bytes))
            w.endObject()
            return
        }
        // v1: one recipient_sub cell a row, with text values (the initialiser holds to it).
        let cells = rows.map { $0.cells[0] }
        w.field("account_ids", strings: accountIDs)
        w.field("batch", batch)
        w.key("collisions")
        w.beginArray()
        for (row, cell) in cells.enumerated() where cell.planned == .collision {
            w.beginObject()
            w.field("holders", strings: cell.holders)
            w.field("row", row)
            w.endObject()
        }
        w.endArray()
        ApplyIntended.writeValues(cells.map { $0.new?.text }, "new_nulls", "new_values", to: &w)
        ApplyIntended.writeValues(cells.map { $0.old?.text }, "old_nulls", "old_values", to: &w)
        w.field("planned", strings: cells.lazy.map(\.planned.rawValue))
        w.endObject()
    }

    /// Optional strings as two fields, never `null`: the values ("" for nil) and the indices of the nil ones.
    private static func writeValues(_ values: [String?], _ nullsKey: StaticString, _ valuesKey: StaticString, to w: inout JSONWriter) {
        w.field(nullsKey, integers: values.indices.lazy.filter { values[$0] == nil })
        w.field(valuesKey, strings: values.lazy.map { $0 ?? "" })
    }

    private static func readValues(_ r: FieldReader, _ nullsKey: StaticString, _ valuesKey: StaticString) throws -> [String?] {
        var values: [String?] = try r.stringArray(valuesKey)
        for i in try r.countArray(nullsKey) {
            guard i < values.count else { throw LedgerError(.malformedRecord, "apply intended: \(nullsKey) names row \(i) of \(values.count)") }
            values[i] = nil
        }
        return values
    }

    init(reading r: FieldReader) throws {
        if r.has("rows_root") {
            self.init(batch: try r.count("batch"), rows: [])
            rowsRoot = try r.rowsRoot()
            rowCount = try r.int("rows", in: 1...Self.maximumRows)
            collisionCount = try r.int("collision_count", in: 0...rowCount * ApplyColumn.allCases.count)
            return
        }
        let accountIDs = try r.stringArray("account_ids")
        let planned = try r.stringArray("planned").map { name in
            guard let p = ApplyPlanned(rawValue: name), p != .kept else {
                throw LedgerError(.malformedRecord, "apply intended: unknown planned outcome")
            }
            return p
        }
        var holders: [Int: [String]] = [:]
        for collision in try r.array("collisions") {
            guard let row = collision["row"]?.intValue.map(Int.init), (0..<accountIDs.count).contains(row), holders[row] == nil,
                planned.indices.contains(row), planned[row] == .collision,
                let keys = collision["holders"]?.arrayValue?.compactMap(\.stringValue), keys.count == collision["holders"]?.arrayValue?.count,
                collision.objectValue?.count == 2
            else {
                throw LedgerError(.malformedRecord, "apply intended: a collision is not {holders, row} of a row of the batch planned collision")
            }
            holders[row] = keys
        }
        let oldValues = try Self.readValues(r, "old_nulls", "old_values")
        let newValues = try Self.readValues(r, "new_nulls", "new_values")
        let batch = try r.count("batch")
        guard accountIDs.count <= Self.maximumRows, oldValues.count == accountIDs.count, newValues.count == accountIDs.count,
            planned.count == accountIDs.count, planned.filter({ $0 == .collision }).count == holders.count
        else {
            throw LedgerError(
                .malformedRecord,
                "apply intended: batch \(batch) has arrays of unequal length, more than \(Self.maximumRows) rows, or a collision without its holders")
        }
        self.init(batch: batch, accountIDs: accountIDs, oldValues: oldValues, newValues: newValues, planned: planned, holders: holders)
    }
}
