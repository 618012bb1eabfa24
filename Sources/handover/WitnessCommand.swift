import ArgumentParser
import Basics
import Foundation
import Ledger
import LogEngine
import Logging
import Witnessing

/// `handover witness`: the witnesses that cosign this ledger's checkpoints (c2sp.org/tlog-witness).
struct WitnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness",
        abstract: "Submit the latest checkpoint to the ledger's witnesses, or configure them.",
        discussion:
            "A witness cosigns a checkpoint only after checking a consistency proof from the last one it cosigned, so nobody can be shown another history of this log than the one it saw (docs/auditing.md, \"Witnesses\").",
        subcommands: [Submit.self, Add.self, Remove.self, List.self, Key.self], defaultSubcommand: Submit.self)

    struct Submit: AsyncParsableCommand, EitherTeamsCommand {
        static let configuration = CommandConfiguration(
            commandName: "submit",
            abstract: "Submit the latest checkpoint to every configured witness and record their cosignatures.",
            discussion: """
                Each witness gets the checkpoint with a consistency proof from the size it last cosigned. \
                Each cosignature is recorded as a "witness cosigned" event, and the largest cosigned checkpoint \
                is written to LEDGER/cosigned-checkpoint. Exits 1 when a witness did not cosign (down, refusing, \
                or answering what the protocol does not allow: run again later), 4 when a witness holds another \
                history of this log (it answered 422, or holds a larger tree): nothing is recorded for those.
                """, exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        @Option(help: ArgumentHelp("How long one request to a witness may take, in seconds.", valueName: "seconds"))
        var timeout = 10

        @Option(help: ArgumentHelp("How many times a witness that does not answer is asked.", valueName: "n"))
        var attempts = 3

        func validate() throws {
            guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be 1 to 600 seconds") }
            guard (1...10).contains(attempts) else { throw ValidationError("--attempts must be 1 to 10") }
        }

        func run() async throws {
            // With its projections: the events recorded are folded as they are appended.
            let (ledger, _) = try ledgerOptions.open(.readWrite, for: self)
            defer { ledger.close() }
            let witnesses = try WitnessList.read(in: ledger.directory).witnesses
            guard !witnesses.isEmpty else {
                throw CLIExit.usage(
                    "\(ledger.directory) has no witnesses: add one with `\(ShellWord.handover("witness add URL", ledger: ledger.directory, "--key VKEY"))`"
                )
            }
            guard let checkpoint = try ledger.latestCheckpoint() else {
                throw CLIExit.usage(
                    "no checkpoint has been signed for \(ledger.directory); run `\(ShellWord.handover("checkpoint", ledger: ledger.directory))` first"
                )
            }
            let client = WitnessClient(requestTimeout: .seconds(Int64(timeout)), attempts: attempts)
            var logger = Logger(label: "handover.witness")
            logger.logLevel = .warning
            let report: WitnessRound.Report
            do {
                report = try await WitnessRound(ledger: ledger, client: client, logger: logger).run(checkpoint, to: witnesses)
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
            Console.out("checkpoint of \(counted(report.checkpoint.treeSize, "event")):")
            for (witness, outcome) in report.outcomes { Console.out("  \(InertText.forScreen(witness.key.name)): \(outcome.summary)") }
            let missing = report.outcomes.filter { !$0.outcome.holds }
            if missing.contains(where: { $0.outcome.showsSplitView }) {
                throw CLIExit(.integrity, "a witness holds another history of this log than this ledger's: see above, and docs/troubleshooting.md")
            }
            if !missing.isEmpty {
                throw CLIExit(
                    .failed, "\(counted(missing.count, "witness", "witnesses")) of \(report.outcomes.count) did not cosign; run again later")
            }
        }
    }

    /// Changes the ledger's witness list with `change` and writes it back when it changed; the
    /// ledger is opened read-only to check it is one, the list being a file beside it. Returns
    /// what `change` returned and the list.
    static func changeList<T>(
        _ options: LedgerOptions, for command: any LedgerCommand, _ change: (inout WitnessList) -> T?
    ) throws -> (T?, WitnessList) {
        let ledger = try options.openLog(.readOnly, for: command)
        defer { ledger.close() }
        var list = try WitnessList.read(in: ledger.directory)
        let before = list
        let result = change(&list)
        if list != before { try list.write(in: ledger.directory) }
        return (result, list)
    }

    struct Add: ParsableCommand, EitherTeamsCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a witness (or change the URL or key of the witness of the same name).",
            exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        @Argument(help: "The witness's URL, http(s)://host[:port][/prefix]; checkpoints go to its add-checkpoint path.")
        var url: String

        @Option(help: ArgumentHelp("The witness's cosigner verifier key: name+keyid+base64 (type 0x04).", valueName: "vkey"))
        var key: String

        func run() throws {
            guard let witnessKey = WitnessKey(verifierKey: key) else {
                throw CLIExit.usage(
                    "--key: \"\(InertText.forScreen(key))\" is not a cosigner verifier key (name+keyid+base64 of 0x04 and an Ed25519 key)")
            }
            guard let witness = Witness(url: url, key: witnessKey) else {
                throw CLIExit.usage("\"\(InertText.forScreen(url))\" is not an http or https URL with a host, without a query, a fragment or a space")
            }
            let (replaced, list) = try WitnessCommand.changeList(ledgerOptions, for: self) { $0.add(witness) }
            Console.out(
                replaced.map { "Changed witness \(InertText.forScreen(witnessKey.name)) (was \(InertText.forScreen($0.url)))." }
                    ?? "Added witness \(InertText.forScreen(witnessKey.name)): \(counted(list.witnesses.count, "witness", "witnesses")) in all.")
        }
    }

    struct Remove: ParsableCommand, EitherTeamsCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Stop submitting checkpoints to a witness; its cosignatures stay in the log.",
            exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        @Argument(help: "The witness's name (its key's).")
        var name: String

        func run() throws {
            let (removed, _) = try WitnessCommand.changeList(ledgerOptions, for: self) { $0.remove(named: name) }
            guard removed != nil else { throw CLIExit(.failed, "no witness named \"\(InertText.forScreen(name))\"") }
            Console.out("Removed witness \(InertText.forScreen(name)).")
        }
    }

    struct List: ParsableCommand, EitherTeamsCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the witnesses and the largest checkpoint each cosigned.", exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        func run() throws {
            let ledger = try ledgerOptions.openLog(.readOnly, for: self)
            defer { ledger.close() }
            let standings = try ledger.read { try WitnessStanding.read(directory: ledger.directory, view: $0) }
            for standing in standings {
                let cosigned = standing.cosignedSize.map { size in "cosigned \(counted(size, "event")) at \(standing.cosignedAt?.rfc3339 ?? "?")" }
                let place = standing.url.map { " " + InertText.forScreen($0) } ?? " (no longer configured)"
                Console.out("\(InertText.forScreen(standing.name))\(place): \(cosigned ?? "nothing cosigned yet")")
            }
            if standings.isEmpty {
                Console.out("no witnesses: add one with `\(ShellWord.handover("witness add URL", ledger: ledgerOptions.directory, "--key VKEY"))`")
            }
        }
    }

    struct Key: ParsableCommand, EitherTeamsCommand {
        static let configuration = CommandConfiguration(
            commandName: "key",
            abstract: "Print this ledger's cosigner verifier key: what a log's operator adds to witness with this ledger (`serve --witness-log`).",
            exits: CommandExits.ledger)

        @OptionGroup var ledgerOptions: LedgerOptions

        func run() throws {
            let ledger = try ledgerOptions.openLog(.readOnly, for: self)
            defer { ledger.close() }
            let (line, publicKey) = try ledger.verifierKey()
            Console.data(Cosignature.verifierKey(name: String(line.prefix { $0 != "+" }), publicKey: publicKey))
        }
    }
}
