import Crypto

/// One line an apply batch event keeps beside it in the `rows` database (schemas/ledger-format.md,
/// "Rows kept beside their event"): a canonical JSON object, salted. An account's line is a leaf of
/// the batch's row tree; a collision's holders line is not: the account's line commits to it by
/// its SHA-256, so that a person's row can be shown without the other accounts it collided with.
public enum ApplyRowLine: Equatable, Sendable {
    /// One account as planned: its key, the value read and the value to write (nil: NULL), what the
    /// plan found, and for a collision the SHA-256 of its holders line (hex).
    case intended(account: String, old: String?, new: String?, planned: ApplyPlanned, holdersSHA256: String?, salt: [UInt8])
    /// The accounts holding a collision row's new value; `row` is the row's index in the batch.
    case holders(row: Int, accounts: [String], salt: [UInt8])
    /// One account as settled: its outcome when the batch committed (nil when it did not).
    case settled(account: String, outcome: ApplyOutcome?, salt: [UInt8])

    /// The line's bytes.
    public var bytes: [UInt8] {
        var members: [String: JSONValue]
        switch self {
        case .intended(let account, let old, let new, let planned, let holdersSHA256, let salt):
            members = [
                "account": .string(account), "old": old.map(JSONValue.string) ?? .null, "new": new.map(JSONValue.string) ?? .null,
                "planned": .string(planned.rawValue), "salt": .string(Hex.encode(salt)),
            ]
            if let holdersSHA256 { members["holders_sha256"] = .string(holdersSHA256) }
        case .holders(let row, let accounts, let salt):
            members = ["row": .int(Int64(row)), "holders": .array(accounts.map(JSONValue.string)), "salt": .string(Hex.encode(salt))]
        case .settled(let account, let outcome, let salt):
            members = ["account": .string(account), "salt": .string(Hex.encode(salt))]
            if let outcome { members["outcome"] = .string(outcome.rawValue) }
        }
        return JSONValue.object(members).canonicalBytes
    }

    /// The index of `account`'s line among an apply batch event's stored lines, found without
    /// decoding any: an account's line (intended or settled) is canonical JSON whose first member
    /// is `account`, so it begins with `{"account":` and the key's JSON string then a comma, and
    /// no other account's line (nor a holders line) begins so.
    public static func index(ofAccount account: String, in lines: [[UInt8]]) -> Int? {
        let prefix = Array(#"{"account":"#.utf8) + JSONValue.string(account).canonicalBytes + [UInt8(ascii: ",")]
        return lines.firstIndex { $0.starts(with: prefix) }
    }

    /// SHA-256 of the line's bytes, hex: what an intended row holds of its holders line.
    public var sha256: String { Hex.encode(SHA256.hash(data: bytes)) }

    /// The line `bytes` holds when it is one of kind `kind` (for ``RowTree/Kind/applyIntendedRow``,
    /// an account's line or a holders line), written exactly as ``bytes`` writes it.
    public init?(_ bytes: [UInt8], kind: RowTree.Kind) {
        guard let object = (try? JSONValue.parse(bytes))?.objectValue, let salt = object["salt"]?.stringValue.flatMap(Hex.decode),
            salt.count == RowTree.saltLength
        else { return nil }
        func optionalString(_ name: String) -> String?? {
            switch object[name] {
            case .string(let s)?: return .some(s)
            case .null?: return .some(nil)
            default: return nil
            }
        }
        switch kind {
        case .applyIntendedRow where object["row"] != nil:
            guard let row = object["row"]?.intValue, row >= 0, row < Int64(ApplyIntended.maximumRows), let items = object["holders"]?.arrayValue
            else { return nil }
            let accounts = items.compactMap(\.stringValue)
            guard accounts.count == items.count else { return nil }
            self = .holders(row: Int(row), accounts: accounts, salt: salt)
        case .applyIntendedRow:
            guard let account = object["account"]?.stringValue, let old = optionalString("old"), let new = optionalString("new"),
                let planned = object["planned"]?.stringValue.flatMap(ApplyPlanned.init(rawValue:))
            else { return nil }
            let holdersSHA256 = object["holders_sha256"]?.stringValue
            guard (holdersSHA256 != nil) == (object["holders_sha256"] != nil) else { return nil }
            self = .intended(account: account, old: old, new: new, planned: planned, holdersSHA256: holdersSHA256, salt: salt)
        case .applySettledRow:
            guard let account = object["account"]?.stringValue else { return nil }
            let outcome = object["outcome"]?.stringValue.flatMap(ApplyOutcome.init(rawValue:))
            guard (outcome != nil) == (object["outcome"] != nil) else { return nil }
            self = .settled(account: account, outcome: outcome, salt: salt)
        case .handoffRow:
            return nil
        }
        // One way to write each line: no field the kind lacks, nothing written another way.
        guard self.bytes == bytes else { return nil }
    }
}
