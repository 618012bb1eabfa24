import Basics
import Crypto
import LogEngine

/// One line an apply batch event keeps beside it in the `rows` database (schemas/ledger-format.md,
/// "Rows kept beside their event"): a canonical JSON object, salted. An account's line is a leaf of
/// the batch's row tree; a collision's holders line is not: the account's line commits to it by
/// its SHA-256, so that a person's row can be shown without the other accounts it collided with.
///
/// An account's line holds one cell per column the batch plans for it: the `recipient_sub`
/// cell's members at the top level (`old`, `new`, `planned`, `holders_sha256`; so a batch of
/// that column alone is written as versions that knew no other), each other column's as an
/// object under the column's name. An `email` cell's values are sealed with the user's data key.
public enum ApplyRowLine: Equatable, Sendable {
    /// One cell of an account's intended line: the values as ``ApplyCell`` has them, and for a
    /// collision the SHA-256 of its holders line (hex) instead of the holders.
    public struct Cell: Equatable, Sendable {
        public var column: ApplyColumn
        public var old: ApplyValue?
        public var new: ApplyValue?
        public var planned: ApplyPlanned
        public var holdersSHA256: String?

        public init(column: ApplyColumn, old: ApplyValue?, new: ApplyValue?, planned: ApplyPlanned, holdersSHA256: String?) {
            self.column = column
            (self.old, self.new) = (old, new)
            self.planned = planned
            self.holdersSHA256 = holdersSHA256
        }
    }

    /// One account as planned: its key and its cells, in column order.
    case intended(account: String, cells: [Cell], salt: [UInt8])
    /// The accounts holding a collision cell's new value; `row` is the account's index in the batch.
    case holders(row: Int, column: ApplyColumn, accounts: [String], salt: [UInt8])
    /// One account as settled: each cell's outcome when the batch committed (nil when it did not).
    case settled(account: String, outcomes: [ApplyCellOutcome]?, salt: [UInt8])

    /// The line's bytes: canonical JSON, its keys written in sorted order.
    public var bytes: [UInt8] {
        var w = JSONWriter(capacity: 192)
        w.beginObject()
        switch self {
        case .intended(let account, let cells, let salt):
            // account, email, email_forwarding, then the recipient_sub cell's own members, salt.
            w.field("account", account)
            for cell in cells where cell.column != .recipientSub {
                w.dynamicKey(cell.column.rawValue)
                w.beginObject()
                Self.writeMembers(of: cell, to: &w)
                w.endObject()
            }
            if let sub = cells.first(where: { $0.column == .recipientSub }) { Self.writeMembers(of: sub, to: &w) }
            w.field("salt", Hex.encode(salt))
        case .holders(let row, let column, let accounts, let salt):
            if column != .recipientSub { w.field("column", column.rawValue) }
            w.field("holders", strings: accounts)
            w.field("row", row)
            w.field("salt", Hex.encode(salt))
        case .settled(let account, let outcomes, let salt):
            w.field("account", account)
            let byColumn = outcomes ?? []
            for column in [ApplyColumn.email, .emailForwarding] {
                if let cell = byColumn.first(where: { $0.column == column }) { w.field(Self.outcomeMember(column), cell.outcome.rawValue) }
            }
            if let sub = byColumn.first(where: { $0.column == .recipientSub }) { w.field("outcome", sub.outcome.rawValue) }
            w.field("salt", Hex.encode(salt))
        }
        w.endObject()
        return w.bytes
    }

    /// A cell's members in sorted order: `holders_sha256`, then (not for a kept cell) `new` and
    /// `old` (null for SQL NULL), then `planned`.
    private static func writeMembers(of cell: Cell, to w: inout JSONWriter) {
        w.field("holders_sha256", cell.holdersSHA256)
        if cell.planned != .kept {
            for (key, value) in [("new", cell.new), ("old", cell.old)] as [(StaticString, ApplyValue?)] {
                w.key(key)
                switch value {
                case nil: w.null()
                case .text(let text)?: w.string(text)
                case .sealed(let sealed)?: sealed.write(to: &w)
                }
            }
        }
        w.field("planned", cell.planned.rawValue)
    }

    /// The member of a settled line holding `column`'s outcome: `outcome` for `recipient_sub` (as
    /// versions that knew no other column wrote it), else the column's name.
    private static func outcomeMember(_ column: ApplyColumn) -> StaticString {
        switch column {
        case .recipientSub: "outcome"
        case .email: "email"
        case .emailForwarding: "email_forwarding"
        }
    }

    /// The index of `account`'s line among an apply batch event's stored lines, found without
    /// decoding any: an account's line (intended or settled) is canonical JSON whose first member
    /// is `account`, so it begins with `{"account":` and the key's JSON string then a comma, and
    /// no other account's line (nor a holders line) begins so.
    public static func index(ofAccount account: String, in lines: [[UInt8]]) -> Int? {
        let prefix = Array(#"{"account":"#.utf8) + JSONValue.string(account).canonicalBytes + [UInt8(ascii: ",")]
        return lines.firstIndex { $0.starts(with: prefix) }
    }

    /// SHA-256 of the line's bytes, hex: what an intended cell holds of its holders line.
    public var sha256: String { Hex.encode(SHA256.hash(data: bytes)) }

    /// The line `bytes` holds when it is one of kind `kind` (for ``RowTree/Kind/applyIntendedRow``,
    /// an account's line or a holders line), written exactly as ``bytes`` writes it.
    public init?(_ bytes: [UInt8], kind: RowTree.Kind) {
        guard let object = (try? JSONValue.parse(bytes))?.objectValue, let salt = object["salt"]?.stringValue.flatMap(Hex.decode),
            salt.count == RowTree.saltLength
        else { return nil }
        switch kind {
        case .applyIntendedRow where object["row"] != nil:
            guard let row = object["row"]?.intValue, row >= 0, row < Int64(ApplyIntended.maximumRows), let items = object["holders"]?.arrayValue
            else { return nil }
            let accounts = items.compactMap(\.stringValue)
            let column = object["column"].map { $0.stringValue.flatMap(ApplyColumn.init(rawValue:)) } ?? .recipientSub
            guard accounts.count == items.count, let column else { return nil }
            self = .holders(row: Int(row), column: column, accounts: accounts, salt: salt)
        case .applyIntendedRow:
            guard let account = object["account"]?.stringValue else { return nil }
            var cells: [Cell] = []
            for column in ApplyColumn.allCases {
                let fields = column == .recipientSub ? (object["planned"] == nil ? nil : object) : object[column.rawValue]?.objectValue
                guard let fields else { continue }
                guard let cell = Self.cell(column, fields) else { return nil }
                cells.append(cell)
            }
            guard !cells.isEmpty else { return nil }
            self = .intended(account: account, cells: cells, salt: salt)
        case .applySettledRow:
            guard let account = object["account"]?.stringValue else { return nil }
            var outcomes: [ApplyCellOutcome] = []
            for column in ApplyColumn.allCases {
                guard let member = object[Self.outcomeMember(column).description] else { continue }
                guard let outcome = member.stringValue.flatMap(ApplyOutcome.init(rawValue:)) else { return nil }
                outcomes.append(ApplyCellOutcome(column, outcome))
            }
            self = .settled(account: account, outcomes: outcomes.isEmpty ? nil : outcomes, salt: salt)
        case .handoffRow:
            return nil
        }
        // One way to write each line: no field the kind lacks, nothing written another way.
        guard self.bytes == bytes else { return nil }
    }

    /// The cell of `column` whose members are `fields`, nil when they are not one.
    private static func cell(_ column: ApplyColumn, _ fields: [String: JSONValue]) -> Cell? {
        guard let planned = fields["planned"]?.stringValue.flatMap(ApplyPlanned.init(rawValue:)) else { return nil }
        var old: ApplyValue?
        var new: ApplyValue?
        if planned != .kept {
            guard let o = fields["old"].flatMap({ ApplyValue.reading($0, for: column) }),
                let n = fields["new"].flatMap({ ApplyValue.reading($0, for: column) })
            else { return nil }
            (old, new) = (o, n)
        }
        let digest = fields["holders_sha256"]?.stringValue
        guard (digest != nil) == (fields["holders_sha256"] != nil), (digest != nil) == (planned == .collision) else { return nil }
        return Cell(column: column, old: old, new: new, planned: planned, holdersSHA256: digest)
    }
}
