import ArgumentParser
import Foundation
import Ledger
import Projections

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Recompute the hash chain and the Merkle tree over every event; exit 4 naming the first bad sequence number.",
        discussion: """
            With --checkpoint FILE (a checkpoint signed earlier by `handover checkpoint`), also check its \
            signature, that the first events still hash to its root, and a consistency proof that today's \
            log extends it. --format json prints that proof.
            """)

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var evidence: EvidenceOptions

    @Option(help: ArgumentHelp("An earlier checkpoint to check the log against.", valueName: "file"))
    var checkpoint: String?

    @Option(help: "Output: text, or json with the consistency proof (with --checkpoint).")
    var format: TextOrJSON = .text

    @Flag(help: "Also check the projections every answer comes from (user records, identifier links, migrated_order, windows) by folding the log again outside the ledger.")
    var deep = false

    @Option(help: ArgumentHelp("With --deep: where to fold (a new directory, removed after; default: a temporary one).", valueName: "dir"))
    var scratch: String?

    func run() throws {
        let (ledger, projection) = deep ? try ledgerOptions.open(.readOnly) : (try ledgerOptions.openLog(.readOnly), nil)
        defer { ledger.close() }
        if let checkpoint { try audit(ledger, checkpointFile: checkpoint) } else { try verifyLog(ledger) }
        if let projection { try verifyProjections(ledger, projection) }
    }

    private func verifyLog(_ ledger: Ledger) throws {
        let report = try ledger.verify()
        if report.isIntact {
            print("OK: \(report.eventCount) events, chain intact, head \(report.headHash), Merkle root \(Hex.encode(report.treeRoot))")
            if !report.indexesChecked {
                print("The log's indexes were not checked: this ledger is format 1; `handover upgrade --ledger \(ledgerOptions.directory)` rebuilds them.")
            }
            return
        }
        let at = report.firstBadSequence.map { "at sequence \($0)" } ?? "in the indexes"
        throw CLIExit(code: ExitStatus.integrity, message: "ledger integrity failure \(at): \(report.problem ?? "")\n\(report.eventCount) events before it verified (last good head \(report.headHash))")
    }

    /// The deep check: the projections against the log folded again in a scratch directory.
    private func verifyProjections(_ ledger: Ledger, _ projection: UserProjection) throws {
        let directory = scratch ?? NSTemporaryDirectory() + "handover-verify-" + UUID().uuidString
        guard !FileManager.default.fileExists(atPath: directory) else { throw CLIExit.usage("--scratch: \(directory) exists; give a new directory") }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if let mismatch = try ProjectionAudit.run(ledger: ledger, projection: projection, scratch: directory) {
            throw CLIExit(code: ExitStatus.integrity, message: """
                derived data differs from what the log implies: \(mismatch)
                The log is the evidence and it verified; `handover projections rebuild --ledger \(ledgerOptions.directory)` folds the projections again from it.
                """)
        }
        let head = try ledger.read { try $0.head().sequence }
        print("OK: the projections (user records, identifier links, migrated_order, windows) equal the log folded again through event \(head)")
    }

    private func audit(_ ledger: Ledger, checkpointFile: String) throws {
        let checkpoint = try EvidenceOptions.readCheckpoint(checkpointFile)
        let audit = try ledger.audit(checkpoint, publicKey: evidence.publicKey(for: ledger))
        if format == .json {
            print(audit.json)
        } else if audit.holds {
            print("""
                OK: checkpoint of \(checkpoint.treeSize) events signed \(checkpoint.time) by \(checkpoint.origin)
                signature verified; the first \(checkpoint.treeSize) events still hash to its root \(Hex.encode(checkpoint.rootHash))
                consistency proof to today's \(audit.currentSize) events (root \(Hex.encode(audit.currentRoot))): \(audit.consistencyProof.count) hashes, verified
                """)
        }
        guard audit.holds else {
            throw CLIExit(code: ExitStatus.integrity, message: "checkpoint \(checkpointFile) does not hold: \(audit.problem ?? "")")
        }
    }
}
