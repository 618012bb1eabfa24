import Basics
import Crypto
import Ledger
import LogEngine
import Projections

/// Step 5 of checking an evidence bundle (schemas/evidence-bundle.md, "Checking a bundle"): each
/// row of `rows/` against the event holding it and the roots it leads to, and that every row is
/// the bundle's person's. Each row's line of the story comes back.
enum BundleRowsCheck {
    typealias DoesNotHold = EvidenceBundleCheck.DoesNotHold

    /// Checks `rows` (each read from `rows/SEQ.json`, by SEQ) against `events` (the bundle's
    /// events, decoded, each already proven), `subject` the manifest's; the story's line of each.
    /// `revealed` holds the lines of `revealed/rows/` (a bundle written with `--reveal`): each must
    /// be its row with the sealed addresses opened, which its line then shows (not proven).
    static func run(
        _ rows: [UInt64: RowEvidence], events: [UInt64: RecordedEvent], subject: String?, revealed: [UInt64: [UInt8]] = [:]
    ) throws -> [UInt64: String] {
        var lines: [UInt64: String] = [:]
        var accounts = Set(events.values.compactMap(\.identifiers.accountID))
        // Handoff rows first: the account_id they prove is the person's too.
        for (sequence, proof) in rows.sorted(by: { $0.key < $1.key }) where proof.kind == .handoffRow {
            let (line, account) = try handoffRow(sequence, proof, events: events, subject: subject)
            lines[sequence] = line
            if !account.isEmpty { accounts.insert(account) }
        }
        for (sequence, proof) in rows where proof.kind != .handoffRow {
            let opened = try revealed[sequence].map { try addresses(of: proof.row, openedIn: $0, file: "revealed/rows/\(sequence).json") }
            lines[sequence] = try applyRow(sequence, proof, rows: rows, events: events, accounts: accounts, subject: subject, opened: opened)
        }
        if let stray = revealed.keys.sorted().first(where: { rows[$0] == nil || rows[$0]?.kind == .handoffRow }) {
            throw DoesNotHold(file: "revealed/rows/\(stray).json", reason: "there is no apply row rows/\(stray).json it opens")
        }
        // A batch event is in a bundle for the person's row: without it, a link was taken out.
        if let (sequence, _) = events.sorted(by: { $0.key < $1.key }).first(where: { $0.value.body.keptRowCount > 0 && rows[$0.key] == nil }) {
            throw DoesNotHold(
                file: "events/\(sequence).json", reason: "its rows are kept beside it, and rows/\(sequence).json (the person's row) is missing")
        }
        return lines
    }

    /// A row of the v2 "handoff rows received" event SEQ whose paths lead to that event's root
    /// and to the `rows-root` of the package's manifest, as the bundle's "handoff received" of
    /// that package holds it; the row names the bundle's person. Its line and its account_id.
    private static func handoffRow(
        _ sequence: UInt64, _ proof: RowEvidence, events: [UInt64: RecordedEvent], subject: String?
    ) throws -> (
        String, String
    ) {
        let file = "rows/\(sequence).json"
        guard proof.sequence == sequence else { throw DoesNotHold(file: file, reason: "its seq is not \(sequence)") }
        guard let event = events[sequence], case .handoffRowsReceived(let chunk) = event.body, let chunkRoot = chunk.rowsRoot,
            let origin = chunk.origin, let package = chunk.package, let digest = chunk.manifestSHA256
        else {
            throw DoesNotHold(file: file, reason: "events/\(sequence).json is not a \"handoff rows received\" of a signed v2 package")
        }
        guard proof.root(count: chunk.chunkRows) == chunkRoot else {
            throw DoesNotHold(file: file, reason: "its row and chunk_path do not lead to the rows_root of events/\(sequence).json")
        }
        let received = events.values.compactMap { e -> (body: HandoffReceived, sequence: UInt64)? in
            guard case .handoffReceived(let b) = e.body, b.package == package, b.manifestSHA256 == digest else { return nil }
            return (b, e.sequence)
        }
        guard received.count == 1, let (body, receivedSequence) = received.first else {
            throw DoesNotHold(
                file: file,
                reason: "events/ holds \(received.count) \"handoff received\" of package \(package) with manifest \(digest), where the row needs one")
        }
        // The root team A signed: the manifest's own line, not a field beside it.
        let manifestBytes = Array(body.manifest.utf8)
        guard Hex.encode(SHA256.hash(data: manifestBytes)) == digest,
            let manifest = try? HandoffManifest(text: try SignedNote(parsing: manifestBytes).text), let manifestRoot = manifest.rowsRoot,
            body.rowsRoot == manifestRoot, manifest.rowsSHA256 == chunk.fileSHA256, origin == manifest.checkpoint.origin
        else {
            throw DoesNotHold(
                file: "events/\(receivedSequence).json",
                reason:
                    "its manifest is not the signed v2 manifest of SHA-256 manifest_sha256 whose rows-root it records and whose rows events/\(sequence).json holds"
            )
        }
        let rowsPerChunk = HandoffRowsForm.v2.rowsPerChunk
        guard chunk.rowCount == manifest.rowCount, chunk.firstRow == chunk.chunk * rowsPerChunk,
            chunk.chunkCount == (manifest.rowCount + rowsPerChunk - 1) / rowsPerChunk,
            chunk.chunkRows == min(rowsPerChunk, chunk.rowCount - chunk.firstRow)
        else {
            throw DoesNotHold(
                file: "events/\(sequence).json", reason: "its chunk is not chunk \(chunk.chunk) of package \(package)'s \(manifest.rowCount) rows")
        }
        guard let root = proof.packageRoot(chunk: chunk.chunk, chunkCount: chunk.chunkCount, count: chunk.chunkRows),
            Hex.encode(root.bytes) == manifestRoot
        else {
            throw DoesNotHold(file: file, reason: "its package_path does not lead to package \(package)'s rows-root \(manifestRoot)")
        }
        guard let row = HandoffRowLine(proof.row, form: .v2), let account = row.accountIDText, let transferSub = row.transferSubText else {
            throw DoesNotHold(file: file, reason: "its row is not a v2 rows.csv line")
        }
        // The row is the person's: the transfer_sub the bundle's events name, else the subject.
        let named = Set(events.values.compactMap(\.identifiers.transferSub))
        guard named.isEmpty ? (subject == transferSub || subject == account) : named == [transferSub] else {
            throw DoesNotHold(file: file, reason: "its row is another person's: transfer_sub \(InertText.forScreen(transferSub))")
        }
        let line =
            "package \(package) from \(origin) lists row \(chunk.firstRow + proof.index + 1) of \(chunk.rowCount): "
            + (account.isEmpty ? "no account_id" : "account_id \(InertText.forScreen(account))")
            + ", transfer_sub \(InertText.forScreen(transferSub))"
            + " (in event \(sequence)'s rows_root and the package's signed rows-root)"
        return (line, account)
    }

    /// An account of the v2 apply batch event SEQ whose path leads to that event's root and
    /// that is the person's (an account the bundle's events or handoff rows name, else the
    /// subject); a settled row also has its intended row in the bundle, of the same run, batch
    /// and index, the settlement naming that intent's SHA-256.
    private static func applyRow(
        _ sequence: UInt64, _ proof: RowEvidence, rows: [UInt64: RowEvidence], events: [UInt64: RecordedEvent], accounts: Set<String>,
        subject: String?, opened: [SealedValue: String]?
    ) throws -> String {
        let file = "rows/\(sequence).json"
        guard proof.sequence == sequence else { throw DoesNotHold(file: file, reason: "its seq is not \(sequence)") }
        let event = events[sequence]
        let batch: (root: SHA256Hash?, rows: Int, number: Int)
        switch (proof.kind, event?.body) {
        case (.applyIntendedRow, .applyIntended(let b)?): batch = (b.rowsRoot, b.rowCount, b.batch)
        case (.applySettledRow, .applySettled(let b)?): batch = (b.rowsRoot, b.rowCount, b.batch)
        default:
            throw DoesNotHold(file: file, reason: "events/\(sequence).json is not the \(proof.kind.rawValue) row's apply event")
        }
        guard let event, let run = event.actor.runID, let root = batch.root, proof.root(count: batch.rows) == root else {
            throw DoesNotHold(file: file, reason: "its row and path do not lead to the rows_root of events/\(sequence).json")
        }
        guard let line = ApplyRowLine(proof.row, kind: proof.kind) else {
            throw DoesNotHold(file: file, reason: "its row is not a \(proof.kind.rawValue) line")
        }
        let position = "row \(proof.index + 1) of \(batch.rows), in event \(sequence)'s rows_root"
        switch line {
        case .intended(let account, let cells, _):
            try person(account, file: file, accounts: accounts, subject: subject)
            let parts = cells.map { cell in
                ApplyCellText.Part(cell.column, cell.planned.rawValue, values: cell.planned == .kept ? nil : (cell.old, cell.new))
            }
            let text = ApplyCellText.line(parts) { value in ApplyCellText.shown(value) { opened?[$0] } }
            let sealed = cells.contains { $0.column.isSealed && $0.planned != .kept }
            return "apply run \(InertText.forScreen(run)) batch \(batch.number) planned for account_id \(InertText.forScreen(account)): "
                + text + " (\(position))" + (opened == nil || !sealed ? "" : "; addresses as revealed/rows/\(sequence).json opens them, not proven")
        case .settled(let account, let outcomes, _):
            try person(account, file: file, accounts: accounts, subject: subject)
            guard case .applySettled(let settled) = event.body, (outcomes != nil) == settled.committed else {
                throw DoesNotHold(file: file, reason: "its row has outcomes exactly when the batch committed, and this one does not")
            }
            // The intent it settles: the same run's batch, the same account at the same index,
            // with a cell for each column the settlement gives an outcome.
            let intended = rows.values.first { other in
                guard other.kind == .applyIntendedRow, other.index == proof.index, let e = events[other.sequence], e.actor.runID == run,
                    case .applyIntended(let intent) = e.body, intent.batch == settled.batch, intent.sha256 == settled.intentSHA256,
                    case .intended(let intendedAccount, let cells, _)? = ApplyRowLine(other.row, kind: .applyIntendedRow)
                else { return false }
                return intendedAccount == account && outcomes.map { $0.map(\.column) == cells.map(\.column) } ?? true
            }
            guard intended != nil else {
                throw DoesNotHold(
                    file: file,
                    reason:
                        "no row of the intent it settles (run \(run) batch \(settled.batch), intent_sha256, the same index, account and columns)")
            }
            let text = outcomes.map { ApplyCellText.line($0.map { ApplyCellText.Part($0.column, $0.outcome.rawValue) }) { _ in "" } }
            return "apply run \(InertText.forScreen(run)) batch \(batch.number) settled for account_id \(InertText.forScreen(account)): "
                + (text ?? "did not commit") + " (\(position))"
        case .holders:
            throw DoesNotHold(file: file, reason: "its row is a holders line, which is no leaf")
        }
    }

    /// The address `revealed` (a line of `revealed/rows/`) gives each sealed value of `row`: the
    /// revealed line must be the row itself with each sealed value replaced by a string (its
    /// address) or null (its key destroyed), and nothing else changed.
    static func addresses(of row: [UInt8], openedIn revealed: [UInt8], file: String) throws -> [SealedValue: String] {
        var found: [SealedValue: String] = [:]
        func same(_ proven: JSONValue, _ shown: JSONValue) -> Bool {
            if case .object(let m) = proven, m.count == 3, m["alg"]?.stringValue == SealedValue.algorithm, let ct = m["ct"]?.stringValue,
                let kid = m["kid"]?.stringValue
            {
                switch shown {
                case .string(let address): found[SealedValue(keyID: kid, combined: ct)] = address
                case .null: break
                default: return false
                }
                return true
            }
            switch (proven, shown) {
            case (.object(let a), .object(let b)): return a.count == b.count && a.allSatisfy { key, value in b[key].map { same(value, $0) } ?? false }
            case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(same)
            default: return proven == shown
            }
        }
        guard let proven = try? JSONValue.parse(row), let shown = try? JSONValue.parseObject(untrusted: revealed), same(proven, .object(shown))
        else {
            throw DoesNotHold(file: file, reason: "it is not its row of rows/ with the sealed addresses opened and nothing else changed")
        }
        return found
    }

    /// That `account` is the bundle's person's.
    private static func person(_ account: String, file: String, accounts: Set<String>, subject: String?) throws {
        guard accounts.isEmpty ? subject == account : accounts.contains(account) else {
            throw DoesNotHold(file: file, reason: "its row is another person's: account \(InertText.forScreen(account))")
        }
    }
}
