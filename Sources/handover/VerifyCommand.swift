import ArgumentParser
import Ledger

/// `handover verify`: prove the log is intact.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "Recompute the hash chain over every event; exit 4 naming the first bad sequence number.")

    @OptionGroup var ledgerOptions: LedgerOptions

    func run() throws {
        let ledger = try Ledger.open(at: ledgerOptions.directory)
        defer { ledger.close() }
        let report = try ledger.verify()
        if report.isIntact {
            print("OK: \(report.eventCount) events, chain intact, head \(report.headHash)")
            return
        }
        let at = report.firstBadSequence.map { "at sequence \($0)" } ?? "in the indexes"
        throw CLIExit(code: ExitStatus.integrity, message: "ledger integrity failure \(at): \(report.problem ?? "")\n\(report.eventCount) events before it verified (last good head \(report.headHash))")
    }
}
