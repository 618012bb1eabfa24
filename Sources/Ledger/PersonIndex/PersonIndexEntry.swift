import LogEngine

/// One thing of the log that names a ``PersonName``: its event, and the leaf hash the name's
/// ``PersonHistory`` chains (the event's in the log's tree, or its row's in the event's row tree).
public struct PersonIndexEntry: Equatable, Sendable {
    public var name: PersonName
    public var sequence: UInt64
    public var leaf: SHA256Hash

    public init(name: PersonName, sequence: UInt64, leaf: SHA256Hash) {
        self.name = name
        self.sequence = sequence
        self.leaf = leaf
    }

    /// What `event` (with the rows the ledger keeps beside it attached) adds to the index,
    /// its log leaf hash being `leaf`, in the order the index takes it (schemas/audit-evidence.md,
    /// "Person index"):
    ///
    /// 1. each user identifier of its `identifiers` (`account_id`, `sender_sub`, `transfer_sub`,
    ///    `recipient_sub`, in that order), with the event's leaf;
    /// 2. for a "handoff issued", "handoff received" or "handoff acknowledged", its package
    ///    (`handoff_manifest`, its `manifest_sha256`), with the event's leaf;
    /// 3. for a batch event keeping its rows beside it, each row in order: a handoff row's
    ///    `account_id` (when not empty) then its `transfer_sub`, an apply row's account as
    ///    `account_id`, each with the row's leaf.
    ///
    /// A batch event holding its rows in its own JSON (a v1 package's, an apply batch's before
    /// rows were kept beside it) adds nothing for its rows: they cannot be shown one at a time.
    public static func entries(of event: RecordedEvent, leaf: SHA256Hash) -> [PersonIndexEntry] {
        let sequence = event.sequence
        var entries = IdentifierKind.userKinds.compactMap { kind in
            event.identifiers[kind].map { PersonIndexEntry(name: PersonName(kind: kind.rawValue, value: $0), sequence: sequence, leaf: leaf) }
        }
        if let package = packageDigest(of: event.body) {
            entries.append(PersonIndexEntry(name: .package(package), sequence: sequence, leaf: leaf))
        }
        func rows(_ kind: RowTree.Kind, _ lines: [[UInt8]], _ names: (Int) -> [PersonName]) {
            for (index, line) in lines.enumerated() {
                let rowLeaf = RowTree.leafHash(kind: kind, row: line)
                entries += names(index).map { PersonIndexEntry(name: $0, sequence: sequence, leaf: rowLeaf) }
            }
        }
        switch event.body {
        case .handoffRowsReceived(let chunk) where chunk.form == .v2:
            let (accounts, subs) = (chunk.accountIDs, chunk.transferSubs)
            rows(.handoffRow, chunk.rowLines) { i in
                (accounts[i].isEmpty ? [] : [PersonName(kind: "account_id", value: accounts[i])]) + [PersonName(kind: "transfer_sub", value: subs[i])]
            }
        case .applyIntended(let batch) where batch.rowsRoot != nil:
            let accounts = batch.accountIDs
            rows(.applyIntendedRow, Array(batch.rowLines.prefix(batch.rowCount))) { [PersonName(kind: "account_id", value: accounts[$0])] }
        case .applySettled(let batch) where batch.rowsRoot != nil:
            let accounts = batch.accountIDs
            rows(.applySettledRow, batch.rowLines) { [PersonName(kind: "account_id", value: accounts[$0])] }
        default:
            break
        }
        return entries
    }

    /// The manifest digest a handoff event of a package names.
    static func packageDigest(of body: EventBody) -> String? {
        switch body {
        case .handoffIssued(let b): return b.manifestSHA256
        case .handoffReceived(let b): return b.manifestSHA256
        case .handoffAcknowledged(let b): return b.manifestSHA256
        default: return nil
        }
    }
}
