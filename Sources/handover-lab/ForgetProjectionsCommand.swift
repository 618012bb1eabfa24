import ArgumentParser
import LMDB

/// `handover-lab forget-projections`: makes a ledger's projections look older than the current
/// layout, as a ledger written before it does, so that `handover upgrade` drops them and loads them again:
/// the upgrade's fold, measured on a ledger of any size.
struct ForgetProjectionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget-projections",
        abstract: "Remove projection_state[\"layout\"] (schemas/ledger-format.md), so the next writable open loads the projections again.")

    @Option var ledger: String

    func run() throws {
        let environment = try Environment(path: ledger)
        let removed = try environment.write { txn in
            do {
                return try txn.delete(try txn.openDatabase("projection_state", create: false), key: Array("layout".utf8))
            } catch let error as LMDBError where error.code == .notFound {
                return false
            }
        }
        guard removed else { throw ValidationError("\(ledger) has no projection layout to forget (no projection_state/layout)") }
    }
}
