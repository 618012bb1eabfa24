import ArgumentParser
import Foundation
import Ledger
import Reporting

/// `handover evidence`: one user's evidence in one command, and its check without a ledger.
struct EvidenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evidence",
        abstract: "Write one user's events with their inclusion proofs into a bundle anyone can check, or check one.",
        subcommands: [Write.self, Verify.self], defaultSubcommand: Write.self)

    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write",
            abstract: "Write every event about one user (any identifier), each with a C2SP tlog-proof against a signed checkpoint, into a new directory.",
            discussion: """
                The events are the bytes the log hashed, personal data sealed; --reveal adds revealed/ with it \
                opened (when this copy holds the keys). The bundle holds the checkpoint, the verifier key, a \
                manifest and VERIFY.md (schemas/evidence-bundle.md). Reads the ledger only.
                """)

        @OptionGroup var ledgerOptions: LedgerOptions

        @Argument(help: "The user: account ID, either team's sub, or transfer_sub.")
        var subject: String

        @Option(help: ArgumentHelp("The new directory to write the bundle to.", valueName: "dir"))
        var out: String

        @Option(help: ArgumentHelp("Prove against this checkpoint instead of the latest stored one.", valueName: "file"))
        var checkpoint: String?

        @Flag(help: "Also write the events with sealed values opened, in revealed/ (mode 0600; not evidence).")
        var reveal = false

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readOnly)
            defer { ledger.close() }
            let given = try checkpoint.map(EvidenceOptions.readCheckpoint)
            let summary = try EvidenceBundle.write(subject: subject, ledger: ledger, projection: projection, checkpoint: given, reveal: reveal, to: out)
            Console.out("Wrote \(summary.sequences.count) events about \(subject) to \(out), each proved against the checkpoint of \(summary.checkpoint.treeSize) events of \(summary.checkpoint.origin).")
            if reveal, ledger.sealer.keyStore == nil { Console.out("No key store here: revealed/ holds the events with sealed values as null.") }
            Console.out("Check it without Handover as \(out)/VERIFY.md says, or with: handover evidence verify \(out)")
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check an evidence bundle with no ledger: the verifier key, the checkpoint's signature, each event's inclusion proof, the manifest; exit 4 naming the file that does not hold.")

        @Argument(help: "The bundle's directory.")
        var directory: String

        @OptionGroup var evidence: EvidenceOptions

        func run() throws {
            do {
                let result = try EvidenceBundleCheck.run(directory, expectedKey: evidence.givenKey)
                Console.out("OK: \(result.sequences.count) events of \(result.origin), each included in the checkpoint of \(result.treeSize) events signed by \(result.verifierKey); the manifest agrees.")
                if evidence.givenKey == nil { Console.out("The verifier key was read from the bundle: compare it with the one the team gave you (--public-key).") }
            } catch let failure as EvidenceBundleCheck.Failure {
                throw CLIExit(.integrity, "the bundle does not hold: \(failure)")
            }
        }
    }
}
