import Crypto

/// What `apply` planned for one user's account before writing anything.
public enum ApplyPlanned: String, CaseIterable, Sendable, Hashable {
    /// The account takes the new value.
    case change
    /// The account holds it already: nothing to write.
    case already
    /// No account has the user's key (or none the operator's condition lets change).
    case noAccount = "no-account"
    /// Another account holds the new value: not written.
    case collision
}

/// What became of one user's account in an `apply` run: the user's state beside "migrated".
public enum ApplyOutcome: String, CaseIterable, Sendable, Hashable {
    /// The account held the planned old value and took the new one.
    case applied
    /// The account held the new value already.
    case already
    /// No account has the user's key (or none the condition lets change).
    case noAccount = "no-account"
    /// Another account holds the new value: not written.
    case collision
    /// The account no longer held the planned old value when written: not overwritten.
    case changedMeanwhile = "changed-meanwhile"
    /// An undo run restored the value the account held before.
    case undone

    /// The outcome of an entry planned `planned` and not written.
    public init?(unwritten planned: ApplyPlanned) {
        switch planned {
        case .change: return nil
        case .already: self = .already
        case .noAccount: self = .noAccount
        case .collision: self = .collision
        }
    }

    /// The byte stored in a user record; 0 is "none".
    public var storedByte: UInt8 {
        switch self {
        case .applied: return 1
        case .already: return 2
        case .noAccount: return 3
        case .collision: return 4
        case .changedMeanwhile: return 5
        case .undone: return 6
        }
    }

    /// The outcome `storedByte` stands for.
    public init?(storedByte: UInt8) {
        guard let found = Self.allCases.first(where: { $0.storedByte == storedByte }) else { return nil }
        self = found
    }
}

/// Body of "apply started" (team B): `apply --commit` (or `--undo`) began writing users' new
/// `sub` to the app's own accounts table. Its run ID is in the actor; the batches follow as
/// "apply intended" and "apply settled", and "run finished" (command `apply`) ends it.
public struct ApplyStarted: Hashable, Sendable {
    /// The kind of database written.
    public enum TargetKind: String, CaseIterable, Sendable {
        case sqlite
        case postgres
    }

    public var targetKind: TargetKind
    /// The database: a SQLite file's path, or a PostgreSQL URL without its user and password.
    public var target: String
    /// The accounts table and the mapping's columns, as the operator named them.
    public var table: String
    public var keyColumn: String
    public var subColumn: String
    /// The operator's own SQL condition on the rows that may change (`--where`).
    public var condition: String?
    /// For an undo: the apply run whose changes this one restores.
    public var undoOf: String?
    /// How many users the run considers.
    public var userCount: Int
    /// The most users one batch (one transaction in the app's database) holds.
    public var batchSize: Int

    public init(
        targetKind: TargetKind, target: String, table: String, keyColumn: String, subColumn: String, condition: String?, undoOf: String?,
        userCount: Int, batchSize: Int
    ) {
        self.targetKind = targetKind
        self.target = target
        self.table = table
        self.keyColumn = keyColumn
        self.subColumn = subColumn
        self.condition = condition
        self.undoOf = undoOf
        self.userCount = userCount
        self.batchSize = batchSize
    }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String) -> String { "apply-started:" + run }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.field("batch_size", batchSize)
        w.field("condition", condition)
        w.field("key_column", keyColumn)
        w.field("sub_column", subColumn)
        w.field("table", table)
        w.field("target", target)
        w.field("target_kind", targetKind.rawValue)
        w.field("undo_of", undoOf)
        w.field("user_count", userCount)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        self.init(
            targetKind: try r.enumeration("target_kind", TargetKind.self), target: try r.string("target"), table: try r.string("table"),
            keyColumn: try r.string("key_column"), subColumn: try r.string("sub_column"), condition: try r.optionalString("condition"),
            undoOf: try r.optionalString("undo_of"), userCount: try r.count("user_count"), batchSize: try r.int("batch_size", in: 1...Int(Int32.max)))
    }
}

/// Body of "apply intended" (team B): one batch of an apply run, recorded before its
/// transaction is sent to the app's database: for each user's account (by `account_id`), the
/// value the plan read, the value it is to take and what the plan found. Only the rows planned
/// `change` are written; the transaction also writes a marker row holding ``sha256``, by which
/// a rerun after a crash learns whether the batch committed. The envelope names no user.
///
/// In v2 (salted rows), the accounts are not in the event's JSON: it holds their count and
/// Merkle root, and each account's line (``ApplyRowLine``) is stored beside the event in the
/// `rows` database, followed by one holders line per collision, so that one person's row can be
/// shown with its path to the root without anyone else's. Decoded from its JSON alone, such a
/// body lacks its rows (``lacksRows``) until ``attach(rowLines:)`` gives them back; a
/// ``LogView`` does that for every event it reads.
public struct ApplyIntended: Hashable, Sendable {
    /// The most rows one batch holds.
    public static let maximumRows = 10_000

    public var batch: Int
    public var accountIDs: [String]
    /// The account's value as read (nil: NULL, or no account); the value it is to take (nil:
    /// NULL, which only an undo writes back).
    public var oldValues: [String?]
    public var newValues: [String?]
    public var planned: [ApplyPlanned]
    /// For each row planned `collision`, the keys of the accounts holding the new value.
    public var holders: [Int: [String]]
    /// v2: each row's salt, and each collision's holders line's salt; empty in v1.
    public private(set) var salts: [[UInt8]]
    public private(set) var holderSalts: [Int: [UInt8]]
    /// v2: the root of the accounts' row tree; nil in v1.
    public private(set) var rowsRoot: SHA256Hash?
    /// How many accounts, and collisions, the batch holds (those of a v2 body read from its JSON alone included).
    public private(set) var rowCount: Int
    public private(set) var collisionCount: Int

    /// A batch in v1 form (no salts) or in v2 form (a salt for each row and for each collision's
    /// holders; the root is computed).
    public init(
        batch: Int, accountIDs: [String], oldValues: [String?], newValues: [String?], planned: [ApplyPlanned], holders: [Int: [String]] = [:],
        salts: [[UInt8]] = [], holderSalts: [Int: [UInt8]] = [:]
    ) {
        self.batch = batch
        self.accountIDs = accountIDs
        self.oldValues = oldValues
        self.newValues = newValues
        self.planned = planned
        self.holders = holders
        precondition(
            salts.isEmpty || (salts.count == accountIDs.count && Set(holderSalts.keys) == Set(holders.keys)),
            "a v2 batch salts each row and collision")
        self.salts = salts
        self.holderSalts = holderSalts
        rowCount = accountIDs.count
        collisionCount = holders.count
        rowsRoot = salts.isEmpty ? nil : RowTree(kind: .applyIntendedRow, rows: lines().rows).root
    }

    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { accountIDs.count != rowCount }

    /// v2: the lines the `rows` database holds for the event: each account's, then each
    /// collision's holders line in row order; empty in v1.
    public var rowLines: [[UInt8]] {
        guard rowsRoot != nil, !lacksRows else { return [] }
        let (rows, holderLines) = lines()
        return rows + holderLines
    }

    /// Each account's v2 line and each collision's holders line, from the arrays and the salts.
    private func lines() -> (rows: [[UInt8]], holders: [[UInt8]]) {
        var holderLines: [Int: ApplyRowLine] = [:]
        for (row, accounts) in holders { holderLines[row] = .holders(row: row, accounts: accounts, salt: holderSalts[row]!) }
        let rows = salts.indices.map { i in
            ApplyRowLine.intended(
                account: accountIDs[i], old: oldValues[i], new: newValues[i], planned: planned[i], holdersSHA256: holderLines[i]?.sha256,
                salt: salts[i]
            ).bytes
        }
        return (rows, holderLines.keys.sorted().map { holderLines[$0]!.bytes })
    }

    /// Checks the lines the `rows` database holds for this v2 body without decoding every
    /// account: the accounts' lines hash to ``rowsRoot`` (so they are the lines written), and
    /// each holders line is the one its collision row commits to. What `verify` does.
    public func checkStored(_ lines: [[UInt8]]) throws {
        func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply intended batch \(batch): \(text)") }
        guard let rowsRoot, lines.count == rowCount + collisionCount else {
            throw malformed("\(lines.count) stored lines for \(rowCount) rows and \(collisionCount) collisions")
        }
        guard RowTree(kind: .applyIntendedRow, rows: lines[..<rowCount]).root == rowsRoot else {
            throw malformed("the stored rows do not hash to the batch's rows_root: a row was changed")
        }
        var seen = Set<Int>()
        for line in lines[rowCount...] {
            let holders = ApplyRowLine(line, kind: .applyIntendedRow)
            guard case .holders(let row, _, _)? = holders, row < rowCount, seen.insert(row).inserted,
                case .intended(_, _, _, .collision, let committed?, _)? = ApplyRowLine(lines[row], kind: .applyIntendedRow),
                committed == holders?.sha256
            else { throw malformed("a stored holders line is not the one a collision row commits to") }
        }
    }

    /// Gives a v2 body read from its JSON its rows, read from the `rows` database: the accounts'
    /// lines, which must hash to ``rowsRoot``, then one holders line for each collision, each
    /// the one its row commits to.
    public mutating func attach(rowLines lines: [[UInt8]]) throws {
        func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply intended batch \(batch): \(text)") }
        try checkStored(lines)
        var parsed = Self(batch: batch, accountIDs: [], oldValues: [], newValues: [], planned: [])
        var committedHolders: [Int: String] = [:]
        for (i, line) in lines[..<rowCount].enumerated() {
            guard
                case .intended(let account, let old, let new, let planned, let holdersSHA256, let salt)? = ApplyRowLine(line, kind: .applyIntendedRow)
            else { throw malformed("stored row \(i) is not an intended account's line") }
            parsed.accountIDs.append(account)
            parsed.oldValues.append(old)
            parsed.newValues.append(new)
            parsed.planned.append(planned)
            parsed.salts.append(salt)
            committedHolders[i] = holdersSHA256
        }
        // Each holders line is the one its collision row commits to (``checkStored(_:)``).
        for line in lines[rowCount...] {
            guard case .holders(let row, let accounts, let salt)? = ApplyRowLine(line, kind: .applyIntendedRow) else { continue }
            parsed.holders[row] = accounts
            parsed.holderSalts[row] = salt
        }
        guard parsed.holders.count == committedHolders.count else { throw malformed("a collision row's holders line is missing") }
        (accountIDs, oldValues, newValues, planned, holders) = (parsed.accountIDs, parsed.oldValues, parsed.newValues, parsed.planned, parsed.holders)
        (salts, holderSalts) = (parsed.salts, parsed.holderSalts)
    }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String, batch: Int) -> String { "apply-intended:\(run):\(batch)" }

    /// SHA-256 of this body's canonical JSON, hex: what the batch's marker row holds.
    public var sha256: String {
        var w = JSONWriter(capacity: 64 * accountIDs.count + 64)
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
        w.field("account_ids", strings: accountIDs)
        w.field("batch", batch)
        w.key("collisions")
        w.beginArray()
        for row in holders.keys.sorted() {
            w.beginObject()
            w.field("holders", strings: holders[row]!)
            w.field("row", row)
            w.endObject()
        }
        w.endArray()
        ApplyIntended.writeValues(newValues, "new_nulls", "new_values", to: &w)
        ApplyIntended.writeValues(oldValues, "old_nulls", "old_values", to: &w)
        w.field("planned", strings: planned.lazy.map(\.rawValue))
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
            self.init(batch: try r.count("batch"), accountIDs: [], oldValues: [], newValues: [], planned: [])
            rowsRoot = try r.rowsRoot()
            rowCount = try r.int("rows", in: 1...Self.maximumRows)
            collisionCount = try r.int("collision_count", in: 0...rowCount)
            return
        }
        let accountIDs = try r.stringArray("account_ids")
        let planned = try r.stringArray("planned").map { name in
            guard let p = ApplyPlanned(rawValue: name) else { throw LedgerError(.malformedRecord, "apply intended: unknown planned outcome") }
            return p
        }
        var holders: [Int: [String]] = [:]
        for collision in try r.array("collisions") {
            guard let row = collision["row"]?.intValue.map(Int.init), (0..<accountIDs.count).contains(row), holders[row] == nil,
                let keys = collision["holders"]?.arrayValue?.compactMap(\.stringValue), keys.count == collision["holders"]?.arrayValue?.count,
                collision.objectValue?.count == 2
            else {
                throw LedgerError(.malformedRecord, "apply intended: a collision is not {holders, row} of a row of the batch")
            }
            holders[row] = keys
        }
        self.init(
            batch: try r.count("batch"), accountIDs: accountIDs, oldValues: try Self.readValues(r, "old_nulls", "old_values"),
            newValues: try Self.readValues(r, "new_nulls", "new_values"), planned: planned, holders: holders)
        guard accountIDs.count <= Self.maximumRows, oldValues.count == accountIDs.count, newValues.count == accountIDs.count,
            planned.count == accountIDs.count
        else {
            throw LedgerError(.malformedRecord, "apply intended: batch \(batch) has arrays of unequal length or more than \(Self.maximumRows) rows")
        }
    }
}

/// Body of "apply settled" (team B): what became of one intended batch. When its transaction
/// committed, each user's outcome, in the intent's order; when it did not (the run was
/// interrupted before the commit), none, and the batch's users are planned again.
///
/// In v2 (salted rows), as for ``ApplyIntended``, each account's line (``ApplyRowLine``) is
/// stored beside the event and the JSON holds their count and root.
public struct ApplySettled: Hashable, Sendable {
    public var batch: Int
    /// The intent's ``ApplyIntended/sha256``.
    public var intentSHA256: String
    /// Whether the batch's transaction committed in the app's database.
    public private(set) var committed: Bool
    /// Whether this was learned from the batch's marker row by a later run, after the run
    /// that sent it was interrupted (else it is the sending run's own answer).
    public var recovered: Bool
    /// Whether the batch belongs to an undo run: only `undone` then changes a user's state.
    public var undo: Bool
    /// The intent's `account_id`s and, when committed, each one's outcome.
    public private(set) var accountIDs: [String]
    public private(set) var outcomes: [ApplyOutcome]
    /// v2: each row's salt; empty in v1.
    public private(set) var salts: [[UInt8]]
    /// v2: the root of the accounts' row tree; nil in v1.
    public private(set) var rowsRoot: SHA256Hash?
    /// How many accounts the batch holds (those of a v2 body read from its JSON alone included).
    public private(set) var rowCount: Int

    /// A settlement in v1 form (no salts) or in v2 form (a salt for each account; the root is computed).
    public init(
        batch: Int, intentSHA256: String, committed: Bool, recovered: Bool, undo: Bool, accountIDs: [String], outcomes: [ApplyOutcome],
        salts: [[UInt8]] = []
    ) {
        self.batch = batch
        self.intentSHA256 = intentSHA256
        self.committed = committed
        self.recovered = recovered
        self.undo = undo
        self.accountIDs = accountIDs
        self.outcomes = outcomes
        precondition(salts.isEmpty || salts.count == accountIDs.count, "a v2 settlement salts each account")
        self.salts = salts
        rowCount = accountIDs.count
        rowsRoot = salts.isEmpty ? nil : RowTree(kind: .applySettledRow, rows: lines()).root
    }

    /// Whether this is a v2 body read from its JSON alone, its rows not attached yet.
    public var lacksRows: Bool { accountIDs.count != rowCount }

    /// v2: each account's line, as the `rows` database holds it; empty in v1.
    public var rowLines: [[UInt8]] { rowsRoot == nil || lacksRows ? [] : lines() }

    private func lines() -> [[UInt8]] {
        salts.indices.map { i in ApplyRowLine.settled(account: accountIDs[i], outcome: committed ? outcomes[i] : nil, salt: salts[i]).bytes }
    }

    /// Gives a v2 body read from its JSON its rows, read from the `rows` database: each must be
    /// a settled account's line (with an outcome exactly when the batch committed), and together
    /// they must hash to ``rowsRoot``.
    public mutating func attach(rowLines lines: [[UInt8]]) throws {
        func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply settled batch \(batch): \(text)") }
        try checkStored(lines)
        var accountIDs: [String] = []
        var outcomes: [ApplyOutcome] = []
        var salts: [[UInt8]] = []
        for (i, line) in lines.enumerated() {
            guard case .settled(let account, let outcome, let salt)? = ApplyRowLine(line, kind: .applySettledRow), (outcome != nil) == committed
            else {
                throw malformed("stored row \(i) is not a settled account's line" + (committed ? " with its outcome" : " without an outcome"))
            }
            accountIDs.append(account)
            if let outcome { outcomes.append(outcome) }
            salts.append(salt)
        }
        (self.accountIDs, self.outcomes, self.salts) = (accountIDs, outcomes, salts)
    }

    /// Checks the lines the `rows` database holds for this v2 body without decoding them: one
    /// for each account, together hashing to ``rowsRoot`` (so they are the lines written).
    public func checkStored(_ lines: [[UInt8]]) throws {
        func malformed(_ text: String) -> LedgerError { LedgerError(.malformedRecord, "apply settled batch \(batch): \(text)") }
        guard let rowsRoot, lines.count == rowCount else { throw malformed("\(lines.count) stored rows for \(rowCount)") }
        guard RowTree(kind: .applySettledRow, rows: lines).root == rowsRoot else {
            throw malformed("the stored rows do not hash to the batch's rows_root: a row was changed")
        }
    }

    /// This event's idempotency key in run `run`.
    public static func idempotencyKey(run: String, batch: Int) -> String { "apply-settled:\(run):\(batch)" }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        if rowsRoot == nil {
            w.field("account_ids", strings: accountIDs)
        }
        w.field("batch", batch)
        w.field("committed", committed)
        w.field("intent_sha256", intentSHA256)
        if let rowsRoot {
            // v2: the rows are kept beside the event; their count and root stand for them.
            w.field("recovered", recovered)
            w.field("rows", rowCount)
            w.field("rows_root", Hex.encode(rowsRoot.bytes))
        } else {
            w.field("outcomes", strings: outcomes.lazy.map(\.rawValue))
            w.field("recovered", recovered)
        }
        w.field("undo", undo)
        w.endObject()
    }

    init(reading r: FieldReader) throws {
        if r.has("rows_root") {
            self.init(
                batch: try r.count("batch"), intentSHA256: try r.string("intent_sha256"), committed: try r.bool("committed"),
                recovered: try r.bool("recovered"), undo: try r.bool("undo"), accountIDs: [], outcomes: [])
            rowsRoot = try r.rowsRoot()
            rowCount = try r.int("rows", in: 1...ApplyIntended.maximumRows)
            return
        }
        let outcomes = try r.stringArray("outcomes").map { name in
            guard let o = ApplyOutcome(rawValue: name) else { throw LedgerError(.malformedRecord, "apply settled: unknown outcome") }
            return o
        }
        self.init(
            batch: try r.count("batch"), intentSHA256: try r.string("intent_sha256"), committed: try r.bool("committed"),
            recovered: try r.bool("recovered"),
            undo: try r.bool("undo"), accountIDs: try r.stringArray("account_ids"), outcomes: outcomes)
        guard accountIDs.count <= ApplyIntended.maximumRows, outcomes.count == (committed ? accountIDs.count : 0) else {
            throw LedgerError(.malformedRecord, "apply settled: batch \(batch) has \(outcomes.count) outcomes for \(accountIDs.count) rows")
        }
    }
}
