import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections

struct VerifyCommand: ParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute the hash chain and the Merkle tree over every event; exit 4 naming the first bad sequence number.",
        discussion: """
            With --checkpoint FILE (a checkpoint signed earlier by `handover checkpoint`), also check its \
            signature, that the first events still hash to its root, and a consistency proof that today's \
            log extends it. --format json prints what was found as one JSON object, failures included \
            (with --checkpoint, the consistency proof). A checkpoint that does not hold (its signature, \
            its events, or another ledger's checkpoint) exits 4; a --public-key named for another ledger \
            than the checkpoint's exits 2, naming both, and checks nothing.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var evidence: EvidenceOptions

    @Option(help: ArgumentHelp("An earlier checkpoint to check the log against.", valueName: "file"))
    var checkpoint: String?

    @Option(help: SummaryFormat.help)
    var format: SummaryFormat = .text

    @Flag(
        help:
            "Also check the projections every answer comes from (user records, identifier links, migrated_order, windows) by folding the log again outside the ledger."
    )
    var deep = false

    @Option(help: ArgumentHelp("With --deep: where to fold (a new directory, removed after; default: a temporary one).", valueName: "dir"))
    var scratch: String?

    @OptionGroup var foldMemory: FoldMemoryOption

    func validate() throws { try validateScratch(scratch) }

    func run() throws {
        let (ledger, projection) = deep ? try ledgerOptions.open(.readOnly, for: self) : (try ledgerOptions.openLog(.readOnly, for: self), nil)
        defer { ledger.close() }
        // JSON: one object whatever was found, printed before a failure ends the command.
        var found: [String: JSONValue] = [:]
        var failure: CLIExit?
        do {
            if let checkpoint { try audit(ledger, checkpointFile: checkpoint, into: &found) } else { try verifyLog(ledger, into: &found) }
            if let projection { try verifyProjections(ledger, projection, into: &found) }
        } catch let exit as CLIExit where exit.exitStatus == .integrity {
            failure = exit
        }
        if format == .json {
            // With --checkpoint, `holds` is the checkpoint's (schemas/audit-evidence.md); the
            // projections' own finding is under `projections`; the exit status says all.
            if checkpoint == nil { found["holds"] = .bool(failure == nil) }
            Console.data(String(decoding: InertText.json(JSONValue.object(found).canonicalBytes), as: UTF8.self))
        }
        if let failure { throw failure }
    }

    private func verifyLog(_ ledger: Ledger, into found: inout [String: JSONValue]) throws {
        let report = try ledger.verify()
        found["events"] = .int(Int64(report.eventCount))
        found["head_hash"] = .string(report.headHash)
        found["merkle_root"] = .string(Hex.encode(report.treeRoot))
        found["indexes_checked"] = .bool(report.indexesChecked)
        found["first_bad_sequence"] = report.firstBadSequence.map { .int(Int64($0)) } ?? .null
        found["problem"] = report.problem.map(JSONValue.string) ?? .null
        if report.isIntact {
            if format != .json {
                Console.out(
                    "OK: \(counted(report.eventCount, "event")), chain intact, head \(report.headHash), Merkle root \(Hex.encode(report.treeRoot))")
                if !report.indexesChecked {
                    Console.out(
                        "The log's indexes were not checked: this ledger is format 1; `\(ShellWord.handover("upgrade", ledger: ledgerOptions.directory))` rebuilds them."
                    )
                }
            }
            if report.indexesChecked { try verifyHandoffRows(ledger, into: &found) }
            return
        }
        let at = report.firstBadSequence.map { "at sequence \($0)" } ?? "in the indexes"
        throw CLIExit(
            .integrity,
            "ledger integrity failure \(at): \(report.problem ?? "")\n\(counted(report.eventCount, "event")) before it verified (last good head \(report.headHash))"
        )
    }

    /// The handoff rows the log holds against the manifests received (``HandoffRowsCheck``).
    private func verifyHandoffRows(_ ledger: Ledger, into found: inout [String: JSONValue]) throws {
        let check = try ledger.read { try HandoffRowsCheck($0) }
        found["handoff_rows"] = .object([
            "handoffs": .int(Int64(check.handoffs.count)), "rows": .int(Int64(check.handoffs.reduce(0) { $0 + $1.rows })),
            "incomplete": .array(check.incomplete.map { .string($0.name) }),
            "problem": check.problem.map { .string($0.text) } ?? .null,
        ])
        if let problem = check.problem {
            throw CLIExit(.integrity, "handoff rows do not hold at sequence \(problem.sequence): \(problem.text)")
        }
        guard format != .json, !check.handoffs.isEmpty else { return }
        let rows = check.handoffs.reduce(0) { $0 + $1.rows }
        Console.out(
            "OK: \(counted(check.handoffs.count, "handoff")) of \(counted(rows, "row")), each signed package's rows matching its manifest's rows-sha256"
        )
        for handoff in check.incomplete {
            Console.out(
                "note: \(handoff.name): \(handoff.chunksRecorded) of \(handoff.chunkCount) chunks of rows recorded; receive it again to record the rest"
            )
        }
    }

    /// The deep check: the projections against the log folded again in a scratch directory.
    private func verifyProjections(_ ledger: Ledger, _ projection: UserProjection, into found: inout [String: JSONValue]) throws {
        try foldMemory.noteIfSpilling(projection, ledger)
        // The person index is recomputed from the same reading of the log.
        let indexAudit = try PersonIndexAudit(ledger)
        let mismatch = try ProjectionAudit.run(
            ledger: ledger, projection: projection, scratch: scratch, foldMemory: foldMemory.bytes, progress: { _ in indexAudit.catchUp() },
            alsoReading: { try indexAudit.feed($1, from: $0) })
        let head = try ledger.read { try $0.head().sequence }
        found["projections"] = .object([
            "through_sequence": .int(Int64(head)), "mismatch": mismatch.map { .string("\($0)") } ?? .null, "holds": .bool(mismatch == nil),
        ])
        if let mismatch {
            throw CLIExit(
                .integrity,
                """
                derived data differs from what the log implies: \(mismatch)
                The log is the evidence and it verified; `\(ShellWord.handover("projections rebuild", ledger: ledgerOptions.directory))` folds the projections again from it.
                """)
        }
        if format == .text {
            Console.out(
                "OK: the projections (user records, identifier links, migrated_order, windows) equal the log folded again through event \(head)")
        }
        try verifyPersonIndex(try indexAudit.finish(), into: &found)
    }

    /// The person index recomputed from the events, against every committed root and the stored index.
    private func verifyPersonIndex(_ finding: PersonIndexFinding, into found: inout [String: JSONValue]) throws {
        found["person_index"] = .object([
            "commits": .int(Int64(finding.commits)), "indexed_size": finding.storedSize.map { .int(Int64($0)) } ?? .null,
            "problem": finding.problem.map(JSONValue.string) ?? .null, "holds": .bool(finding.problem == nil),
        ])
        if let problem = finding.problem {
            throw CLIExit(
                .integrity,
                """
                the person index differs from what the log implies: \(problem)
                A committed root that differs means the ledger signed an index its events do not give: bundles proven against it cannot be trusted to be complete. A stored index that differs alone is rebuilt by `\(ShellWord.handover("projections rebuild", ledger: ledgerOptions.directory))`.
                """)
        }
        guard format == .text else { return }
        if let size = finding.storedSize {
            Console.out(
                "OK: the person index (\(counted(finding.names, "name")) over \(counted(size, "event"))) and \(counted(finding.commits, "committed root")) equal the index the events give"
            )
        } else {
            Console.out(
                "note: this ledger has no person index yet, so no bundle of it can prove a history complete; `\(ShellWord.handover("upgrade", ledger: ledgerOptions.directory))` builds it"
            )
        }
    }

    private func audit(_ ledger: Ledger, checkpointFile: String, into found: inout [String: JSONValue]) throws {
        let checkpoint = try EvidenceOptions.readCheckpoint(checkpointFile)
        let (key, keySource) = try evidence.verifierKey(for: ledger)
        let origin = try ledger.origin()
        // A key named for another ledger checks nothing here: bad input (exit 2), not a finding.
        // (A checkpoint of another ledger is the audit's finding, exit 4: the log here is not
        // the one it signed.)
        if checkpoint.origin == origin, key.name != origin {
            throw CLIExit.usage(
                """
                checkpoint \(checkpointFile) is of \(checkpoint.origin), but \(keySource) is the verifier key of \(key.name): a key of another ledger, \
                so nothing was checked. Give the verifier key of \(checkpoint.origin) (`handover checkpoint --public-key` on that ledger prints it).
                """)
        }
        let audit = try ledger.audit(checkpoint, publicKey: key.publicKey)
        if format == .json {
            found.merge(audit.json) { _, new in new }
        } else if audit.holds {
            Console.out(
                """
                OK: checkpoint of \(counted(checkpoint.treeSize, "event"))\(checkpoint.time.map { " signed \($0)" } ?? "") by \(checkpoint.origin)
                signature verified; \(checkpoint.treeSize == 1 ? "the first event still hashes" : "the first \(checkpoint.treeSize) events still hash") to its root \(Hex.encode(checkpoint.rootHash))
                consistency proof to today's \(counted(audit.currentSize, "event")) (root \(Hex.encode(audit.currentRoot))): \(counted(audit.consistencyProof.count, "hash", "hashes")), verified
                """)
        }
        guard audit.holds else {
            // The audit checks the origin and the size before the signature.
            let problem =
                if checkpoint.origin != origin {
                    "the ledger \(ledgerOptions.directory) is \(origin), not the log the checkpoint signed"
                } else if checkpoint.treeSize > 0 && !audit.signatureVerified {
                    "its signature does not verify with \(keySource) (\(key.line)), named for the same ledger: the checkpoint was changed after it was signed, or signed with another key"
                } else {
                    audit.problem ?? ""
                }
            throw CLIExit(.integrity, "checkpoint \(checkpointFile) (of \(checkpoint.origin)) does not hold: \(problem)")
        }
    }
}
