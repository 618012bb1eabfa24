import ArgumentParser
import Basics
import Ledger
import LogEngine

/// The rows `handoff-pair --rows-form` adds on team B's side: the package's rows as received,
/// in chunks, and one apply run over every user in batches of 1,000, every account `applied`,
/// in the form asked for (v2 rows beside their events, or v1 in the events' JSON).
struct HandoffPairRows {
    let users: Int
    let form: HandoffRowsForm
    let origin: String
    /// Each row's salt (v2), made once so the file's digest, the root and the events agree.
    private let salts: [[UInt8]]

    init(users: Int, form: HandoffRowsForm, origin: String) {
        self.users = users
        self.form = form
        self.origin = origin
        salts = form == .v2 ? (0..<users).map { _ in RowTree.newSalt() } : []
    }

    private func salt(_ i: Int) -> [UInt8]? { salts.isEmpty ? nil : salts[i] }

    /// The `rows.csv` digest team A's manifest signs.
    var fileSHA256: String {
        var digest = HandoffRowsDigest(form: form)
        for i in 0..<users {
            digest.add(accountID: "acct-\(i)", transferSub: HandoffPairCommand.transferSub(i), sequence: UInt64(i + 2), salt: salt(i))
        }
        return digest.finalize()
    }

    /// The package's row tree root (v2), as its manifest signs it.
    var root: String? {
        guard form == .v2 else { return nil }
        return Hex.encode(RowTree(leaves: chunks(manifestSHA256: "").compactMap(\.rowsRoot)).root.bytes)
    }

    private func chunks(manifestSHA256: String) -> [HandoffRowsReceived] {
        let per = form.rowsPerChunk
        let count = (users + per - 1) / per
        let file = fileSHA256
        return (0..<count).map { c in
            let range = c * per..<min(users, (c + 1) * per)
            return HandoffRowsReceived(
                origin: origin, package: 1, manifestSHA256: manifestSHA256, fileSHA256: file, chunk: c, chunkCount: count, rowCount: users,
                firstRow: range.lowerBound, accountIDs: range.map { "acct-\($0)" }, transferSubs: range.map(HandoffPairCommand.transferSub),
                sequences: range.map { $0 + 2 }, salts: form == .v2 ? Array(salts[range]) : [])
        }
    }

    /// The "handoff rows received" events, a few chunks an append.
    func received(manifestSHA256: String) -> [[EventDraft]] {
        let drafts = chunks(manifestSHA256: manifestSHA256).map { EventDraft(.handoffRowsReceived($0), idempotencyKey: $0.idempotencyKey) }
        return stride(from: 0, to: drafts.count, by: 16).map { Array(drafts[$0..<min($0 + 16, drafts.count)]) }
    }

    /// One apply run over every user: its start, then each batch intended and settled.
    func applied() -> [[EventDraft]] {
        let run = "scale-apply"
        let started = ApplyStarted(
            targetKind: .sqlite, target: "/srv/app/app.sqlite", table: "accounts", keyColumn: "id", columns: PerColumn(recipientSub: "apple_sub"),
            condition: nil, undoOf: nil, userCount: users, batchSize: 1_000)
        var appends = [[EventDraft(.applyStarted(started), idempotencyKey: ApplyStarted.idempotencyKey(run: run), runID: run)]]
        for (batch, first) in stride(from: 0, to: users, by: 1_000).enumerated() {
            let range = first..<min(users, first + 1_000)
            let v2 = form == .v2
            let intent = ApplyIntended(
                batch: batch, accountIDs: range.map { "acct-\($0)" }, oldValues: range.map { "000\($0).sender" },
                newValues: range.map { "001\($0).recipient" }, planned: range.map { _ in .change },
                salts: v2 ? range.map { _ in RowTree.newSalt() } : [])
            let settled = ApplySettled(
                batch: batch, intentSHA256: intent.sha256, committed: true, recovered: false, undo: false, accountIDs: intent.accountIDs,
                outcomes: range.map { _ in .applied }, salts: v2 ? range.map { _ in RowTree.newSalt() } : [])
            appends.append([
                EventDraft(.applyIntended(intent), idempotencyKey: ApplyIntended.idempotencyKey(run: run, batch: batch), runID: run),
                EventDraft(.applySettled(settled), idempotencyKey: ApplySettled.idempotencyKey(run: run, batch: batch), runID: run),
            ])
        }
        return appends
    }
}

extension HandoffRowsForm: ExpressibleByArgument {}
