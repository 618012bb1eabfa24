import ArgumentParser
import Basics
import Foundation
import Ledger
import LogEngine

/// `--public-key`, shared by the commands that check a checkpoint's signature.
struct EvidenceOptions: ParsableArguments {
    @Option(
        name: .customLong("public-key"),
        help: ArgumentHelp(
            "The verifier key to check signatures with, or a file holding it (default: the key kept with the ledger, or in the bundle).",
            valueName: "key"))
    var publicKeyText: String?

    /// The verifier key to check with, the one given or else the ledger's (`checkpoint.pub`),
    /// and where it came from, for messages ("the public key in a.pub").
    func verifierKey(for ledger: Ledger) throws -> (key: VerifierKey, source: String) {
        guard let publicKeyText, let text = try givenKey else {
            // The ledger's own key file is refused unless it is named for this ledger.
            let key = try ledger.verifierKey().publicKey
            return (VerifierKey(name: try ledger.origin(), publicKey: key), "the ledger's verifier key \(VerifierKeyFile.path(in: ledger.directory))")
        }
        guard let (name, key) = Checkpoint.publicKey(fromVerifierKey: text) else {
            throw CLIExit.usage("--public-key: \"\(publicKeyText)\" is not a verifier key (name+keyid+base64) or a file holding one")
        }
        let source =
            FileManager.default.fileExists(atPath: publicKeyText) ? "the public key in \(publicKeyText)" : "the public key given (--public-key)"
        return (VerifierKey(name: name, publicKey: key), source)
    }

    /// The verifier key given: the text of `--public-key`, or of the file it names.
    var givenKey: String? { get throws { try publicKeyText.map(EvidenceOptions.keyText) } }

    /// A verifier key given as text, or the text of the file it names.
    static func keyText(_ given: String) throws -> String {
        guard FileManager.default.fileExists(atPath: given) else { return given }
        return String(
            decoding: try CommandLineFileError.reading(nil) { try FileBytes.readOnce(given, limit: VerifierKey.maximumFileBytes) }, as: UTF8.self)
    }

    /// Reads and parses a witness policy file, naming the file when it is not one.
    static func readPolicy(_ path: String) throws -> WitnessPolicy {
        let data = try CommandLineFileError.reading("cannot read witness policy file") {
            try FileBytes.readOnce(path, limit: WitnessPolicy.maximumFileBytes)
        }
        return try CommandLineFileError.reading(path) { try WitnessPolicy(json: data) }
    }

    /// Reads and parses a checkpoint file, naming the file when it is not one.
    static func readCheckpoint(_ path: String) throws -> Checkpoint {
        let data = try CommandLineFileError.reading("cannot read checkpoint file") {
            try FileBytes.readOnce(path, limit: HandoffPackage.maximumNoteBytes)
        }
        return try CommandLineFileError.reading(path) { try Checkpoint(parsing: String(decoding: data, as: UTF8.self)) }
    }
}

struct CheckpointCommand: AsyncParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Sign a checkpoint (origin, tree size, Merkle root) with the ledger's Ed25519 key, store it and print it.",
        discussion:
            "First brings the person index up to date and, when it changed, records its root (a \"person index committed\" event), so the checkpoint covers it. Hand the checkpoint to someone outside the team: later, `handover verify --checkpoint FILE` proves the log still extends it unchanged.",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Flag(name: .customLong("public-key"), help: "Print the ledger's verifier key instead (name+keyid+base64 public key).")
    var printPublicKey = false

    @Flag(
        name: .customLong("cosigned"),
        help:
            "Print the largest checkpoint the witnesses cosigned, with their cosignature lines, instead (`handover witness`); exits 1 when none did.")
    var printCosigned = false

    @Option(help: ArgumentHelp("Also write the checkpoint to this file.", valueName: "file"))
    var out: String?

    func validate() throws {
        if printPublicKey && printCosigned { throw ValidationError("--public-key and --cosigned print different things: give one") }
    }

    func run() async throws {
        if printPublicKey || printCosigned {
            // Read from checkpoint.pub and the log: never the private key, and never made here.
            let ledger = try ledgerOptions.openLog(.readOnly, for: self)
            defer { ledger.close() }
            guard printCosigned else { return Console.data(try ledger.verifierKey().line) }
            guard let note = try ledger.read({ try $0.cosignedCheckpoint()?.note }) else {
                throw CLIExit(.failed, "no witness has cosigned a checkpoint of \(ledger.directory) yet: `handover witness` submits one")
            }
            if let out { try write(note.serialized, to: out) }
            return Console.data(note.serialized, terminator: "")
        }
        // With the projections: the index's commit is an event they fold.
        let (ledger, _) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        let (key, created) = try ledger.signingKey()
        if created {
            Console.error(
                "note: this ledger predates checkpoints; made its signing key \(CheckpointKey.path(in: ledger.directory)) and its verifier key \(VerifierKeyFile.path(in: ledger.directory))"
            )
        }
        // The person index is committed first, so the checkpoint covers it.
        let checkpoint = try await ledger.commitIndexAndSignCheckpoint(with: key)
        if let out { try write(checkpoint.text, to: out) }
        Console.data(checkpoint.text, terminator: "")
    }
}

struct ProveCommand: ParsableCommand, EitherTeamsCommand {

    static let configuration = CommandConfiguration(
        commandName: "prove",
        abstract: "Print an RFC 9162 inclusion proof of one event against the latest checkpoint (or --checkpoint FILE), as JSON.",
        discussion: "Exits 1 when the ledger holds no event of that sequence number, 2 when the checkpoint does not cover it (sign a newer one).",
        exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Argument(help: "The event's sequence number.")
    var sequence: UInt64

    @Option(help: ArgumentHelp("Prove against this checkpoint instead of the latest stored one.", valueName: "file"))
    var checkpoint: String?

    @Option(help: ArgumentHelp("Also write the proof to this file.", valueName: "file"))
    var out: String?

    func validate() throws {
        guard sequence >= 1 else { throw ValidationError("there is no event 0: a ledger's events are numbered from 1") }
    }

    func run() throws {
        let ledger = try ledgerOptions.openLog(.readOnly, for: self)
        defer { ledger.close() }
        let against: Checkpoint
        if let checkpoint {
            against = try EvidenceOptions.readCheckpoint(checkpoint)
        } else if let latest = try ledger.latestCheckpoint() {
            against = latest
        } else {
            throw CLIExit.usage(
                "no checkpoint has been signed for \(ledger.directory); run `\(ShellWord.handover("checkpoint", ledger: ledger.directory))` first")
        }
        let proof = try ledger.prove(sequence, against: against)
        guard proof.isValid else {
            throw CLIExit(
                .integrity,
                "the inclusion proof of event \(sequence) does not lead to the checkpoint's root: the log differs from what the checkpoint signed (run `handover verify --checkpoint`)"
            )
        }
        let json = proof.json(publicKey: try ledger.verifierKey().publicKey)
        if let out { try write(json + "\n", to: out) }
        Console.data(json)
    }
}
