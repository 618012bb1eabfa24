import ArgumentParser
import Basics
import Foundation
import Ledger

/// `handover backup`: a consistent hot copy of a ledger.
struct BackupCommand: ParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the ledger consistently while other processes write to it; the copy opens as an ordinary ledger.",
        discussion: """
            The log as of one moment (compacted), then the key store, then the checkpoint key and the \
            sign-in secret's hash with their modes, into a new directory that appears only when complete. \
            --without-keys leaves the key store out: the copy verifies and proves, and the personal data \
            in it stays sealed for good.
            """, exits: CommandExits.ledger)

    @OptionGroup var ledgerOptions: LedgerOptions

    @Option(help: ArgumentHelp("The new directory to write the copy to.", valueName: "dir"))
    var out: String

    @Flag(name: .customLong("without-keys"), help: "Leave the data keys out: an evidence-only copy.")
    var withoutKeys = false

    func run() throws {
        let ledger = try ledgerOptions.openLog(.readOnly, for: self)
        defer { ledger.close() }
        let backup = try LedgerBackup.take(of: ledger, to: out, includeKeys: !withoutKeys)
        let megabytes = String(format: "%.1f", Double(backup.logBytes) / 1_048_576)
        Console.out(
            "Backed up \(ledgerOptions.directory) to \(out): events 1 to \(backup.head.sequence), head \(Hex.encode(backup.head.hash)), log \(megabytes) MB compacted."
        )
        if let keys = backup.keys {
            Console.out(
                "Key store: \(keys) data key\(keys == 1 ? "" : "s"). Other files: \(backup.files.isEmpty ? "none" : backup.files.joined(separator: ", "))."
            )
        } else {
            Console.out(
                "Without keys: the personal data in this copy can never be opened. Other files: \(backup.files.isEmpty ? "none" : backup.files.joined(separator: ", "))."
            )
        }
        Console.out("Check it with: \(ShellWord.handover("verify", ledger: out))")
    }
}
