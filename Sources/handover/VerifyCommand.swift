import ArgumentParser
import Foundation
import Ledger

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

    func run() throws {
        let ledger = try ledgerOptions.openLog(.readOnly)
        defer { ledger.close() }
        if let checkpoint { return try audit(ledger, checkpointFile: checkpoint) }
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
