import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections
import Reporting

/// `handover evidence`: one user's evidence in one command, and its check without a ledger.
struct EvidenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evidence",
        abstract: "Write one user's events with their inclusion proofs into a bundle anyone can check, or check one.",
        subcommands: [Write.self, Verify.self], defaultSubcommand: Write.self)

    struct Write: ParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            commandName: "write",
            abstract:
                "Write every event about one user (any identifier), each with a C2SP tlog-proof against a signed checkpoint, into a new directory.",
            discussion: """
                The events are the bytes the log hashed, personal data sealed; --reveal adds revealed/ with it \
                opened (when this copy holds the keys). The bundle holds the checkpoint, the verifier key, a \
                manifest and VERIFY.md (schemas/evidence-bundle.md). Reads the ledger only. Exits 1 when the \
                ledger holds no such user.
                """, exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        @Argument(help: "The user: account ID, either team's sub, or transfer_sub.")
        var subject: String

        @Option(help: ArgumentHelp("The new directory to write the bundle to.", valueName: "dir"))
        var out: String

        @Option(
            help: ArgumentHelp(
                "Prove against this checkpoint instead of the largest one the witnesses cosigned (when it covers the user's events) or the latest stored one.",
                valueName: "file"))
        var checkpoint: String?

        @Option(
            name: .customLong("witness-policy"),
            help: ArgumentHelp(
                "A witness policy (JSON: quorum, witnesses' verifier keys) the checkpoint's cosignatures must meet; written into the bundle.",
                valueName: "file"))
        var witnessPolicy: String?

        @Flag(help: "Also write the events with sealed values opened, in revealed/ (mode 0600; not evidence).")
        var reveal = false

        @Option(
            help: ArgumentHelp(
                "Team A's ledger, with --ledger team B's: one bundle from both, joined by the transfer_sub (schemas/evidence-bundle.md, \"Both halves\").",
                valueName: "dir"))
        var sender: String?

        func validate() throws {
            if sender != nil, checkpoint != nil || witnessPolicy != nil {
                throw ValidationError(
                    "--checkpoint and --witness-policy are about one ledger's checkpoint; a two-sided bundle proves each side against its latest")
            }
            if checkpoint != nil, witnessPolicy != nil {
                throw ValidationError("--witness-policy counts the cosignatures of the witnessed checkpoint: give it or --checkpoint, not both")
            }
        }

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
            defer { ledger.close() }
            if let sender {
                let (senderLedger, senderProjection) = try LedgerOptions.openOther(sender)
                defer { senderLedger.close() }
                try checkRoles(sender: senderLedger, at: sender, option: "--sender", recipient: ledger, at: ledgerOptions.directory)
                let summary = try TwoSidedEvidence.write(
                    subject: subject, recipient: .init(ledger: ledger, projection: projection),
                    sender: .init(ledger: senderLedger, projection: senderProjection), reveal: reveal, to: out)
                Console.out(
                    """
                    Wrote the evidence about transfer_sub \(summary.transferSub) from both ledgers to \(out): \(counted(summary.sender.sequences.count, "event")) of \(summary.sender.checkpoint.origin), \
                    \(summary.recipient.sequences.count) of \(summary.recipient.checkpoint.origin), and \(counted(summary.packages.count, "package")) tying them \
                    (\(summary.packages.filter(\.acknowledged).count) with the recipient's cosignature).
                    """)
                for (team, side) in [("A", summary.sender), ("B", summary.recipient)] where !side.cosigners.isEmpty {
                    Console.out("Team \(team)'s side is proved against a checkpoint cosigned by \(cosignerNames(side)).")
                }
                Console.out("Check it without Handover as \(out)/VERIFY.md says, or with: handover evidence verify \(ShellWord.quoted(out))")
                return
            }
            let given = try checkpoint.map(EvidenceOptions.readCheckpoint)
            let policy = try witnessPolicy.map(EvidenceOptions.readPolicy)
            let summary = try EvidenceBundle.write(
                subject: subject, ledger: ledger, projection: projection, checkpoint: given, policy: policy, reveal: reveal, to: out)
            let cosigned = cosignerNames(summary)
            Console.out(
                "Wrote \(counted(summary.sequences.count, "event")) about \(subject) to \(out), each proved against the checkpoint of \(counted(summary.checkpoint.treeSize, "event")) of \(summary.checkpoint.origin)"
                    + (cosigned.isEmpty ? "." : ", cosigned by \(cosigned).")
            )
            if let completeness = summary.completeness { Console.out(completeness.statement) }
            if let reason = summary.notComplete { Console.out("Not proven complete: \(reason).") }
            if reveal, ledger.sealer.keyStore == nil { Console.out("No key store here: revealed/ holds the events with sealed values as null.") }
            Console.out("Check it without Handover as \(out)/VERIFY.md says, or with: handover evidence verify \(ShellWord.quoted(out))")
        }

        /// The witnesses who cosigned a written bundle's checkpoint, by name, as shown.
        private func cosignerNames(_ summary: EvidenceBundle.Summary) -> String {
            summary.cosigners.map { InertText.forScreen($0.name) }.joined(separator: ", ")
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract:
                "Check an evidence bundle with no ledger: the verifier key, the checkpoint's signature, each event's inclusion proof, each row's paths to its roots, the manifest; print the person's story, each fact proven or stated; exit 4 naming the file that does not hold.",
            exits: CommandExits.ledger)

        @Argument(help: "The bundle's directory.")
        var directory: String

        @OptionGroup var evidence: EvidenceOptions

        @Option(
            name: .customLong("sender-key"),
            help: ArgumentHelp("For a two-sided bundle: team A's verifier key, or a file holding it.", valueName: "key"))
        var senderKey: String?

        @Option(
            name: .customLong("recipient-key"),
            help: ArgumentHelp("For a two-sided bundle: team B's verifier key, or a file holding it.", valueName: "key"))
        var recipientKey: String?

        @Option(
            name: .customLong("witness-policy"),
            help: ArgumentHelp(
                "The witness policy to count the checkpoint's cosignatures against (JSON: quorum, witnesses' verifier keys), instead of the bundle's own.",
                valueName: "file"))
        var witnessPolicy: String?

        func run() throws {
            // A path that is not there is a mistake of the command line, not a bundle that fails.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
                throw CLIExit.usage("\(directory) does not exist: give the evidence bundle's directory")
            }
            guard isDirectory.boolValue else { throw CLIExit.usage("\(directory) is not a directory: give the evidence bundle's directory") }
            if TwoSidedEvidenceCheck.isTwoSided(directory) {
                if witnessPolicy != nil { throw CLIExit.usage("--witness-policy counts one ledger's cosignatures: check each side's bundle") }
                let result = try TwoSidedEvidenceCheck.run(
                    directory, senderKey: try senderKey.map(EvidenceOptions.keyText), recipientKey: try recipientKey.map(EvidenceOptions.keyText))
                Console.out(
                    """
                    OK: transfer_sub \(result.transferSub): \(counted(result.sender.sequences.count, "event")) of \(result.sender.origin) and \(result.recipient.sequences.count) of \(result.recipient.origin), \
                    each included in its ledger's signed checkpoint; \(result.packages.count == 1 ? "package" : "packages") \(result.packages.map(String.init).joined(separator: ", ")) \(result.packages.count == 1 ? "ties" : "tie") the two.
                    """)
                for (team, side) in [("A", result.sender), ("B", result.recipient)] {
                    Console.out("Team \(team)'s log (\(side.origin)):")
                    let path = (directory as NSString).appendingPathComponent(team == "A" ? "sender" : "recipient")
                    Console.out(
                        "  "
                            + witnessedLine(
                                side,
                                ownPolicy:
                                    "its own policy (give yours with: handover evidence verify \(ShellWord.quoted(path)) --witness-policy FILE)"))
                    Console.out("  " + completenessLine(side))
                    printStory(side)
                }
                if result.sender.completeness != nil || result.recipient.completeness != nil {
                    Console.out(EvidenceBundleCheck.Completeness.labelsNote)
                }
                if senderKey == nil || recipientKey == nil {
                    Console.out(
                        "The verifier keys were read from the bundle: compare them with the ones the teams gave you (--sender-key, --recipient-key).")
                }
                return
            }
            let result = try EvidenceBundleCheck.run(
                directory, expectedKey: evidence.givenKey, policy: try witnessPolicy.map(EvidenceOptions.readPolicy))
            Console.out(
                "OK: \(counted(result.sequences.count, "event")) of \(result.origin), each included in the checkpoint of \(counted(result.treeSize, "event")) signed by \(result.verifierKey); the manifest agrees."
            )
            Console.out(witnessedLine(result, ownPolicy: "the bundle's own policy (give yours with --witness-policy)"))
            Console.out(completenessLine(result))
            if result.completeness != nil { Console.out(EvidenceBundleCheck.Completeness.labelsNote) }
            printStory(result)
            if evidence.publicKeyText == nil {
                Console.out("The verifier key was read from the bundle: compare it with the one the team gave you (--public-key).")
            }
        }

        /// "Witnessed: cosigned by …" when the bundle's checkpoint carries cosignatures, counted
        /// against the policy given or, in words `ownPolicy`, the bundle's own.
        private func witnessedLine(_ result: EvidenceBundleCheck.Result, ownPolicy: String) -> String {
            guard let witnesses = result.witnesses else {
                return
                    "Not witnessed as far as this bundle shows: it holds no witness's cosignature, so it does not say whether witnesses saw this checkpoint (give the policy you expect with --witness-policy to require one)."
            }
            return
                "Witnessed: cosigned by \(witnesses.cosigners.map(InertText.forScreen).joined(separator: ", ")), \(witnesses.cosigners.count) of the quorum of \(witnesses.quorum) of "
                + (witnesses.policyGiven ? "the policy given." : ownPolicy + ".")
        }

        /// The line a dispute can quote: the history shown is the person's whole history up to
        /// the index's size, or why the bundle does not prove it.
        private func completenessLine(_ result: EvidenceBundleCheck.Result) -> String {
            guard let completeness = result.completeness else {
                return
                    "NOT PROVEN COMPLETE: this bundle holds no person index proofs (written before the index, or against a checkpoint that predates it); the log may hold events of this person it does not show."
            }
            let after = completeness.afterIndex
            return completeness.statement
                + (after.isEmpty
                    ? "" : " Events \(after.map(String.init).joined(separator: ", ")) are newer than the index: proven, not proven complete.")
        }

        /// The story a bundle tells, one line per fact: "proven" where its files prove it,
        /// "stated" where only the manifest says it.
        private func printStory(_ result: EvidenceBundleCheck.Result) {
            for (fact, line) in result.story { Console.out("  \(fact.proven ? "proven" : "stated")  \(line)") }
        }
    }
}
