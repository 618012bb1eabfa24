import Basics
import LMDB
import LogEngine

/// One named step that brings a ledger written by an earlier version up to date.
///
/// Every writable open (and so `handover upgrade`) runs ``all`` in order. Each step finds for
/// itself whether the ledger needs it (a format marker, a missing database or file) and is
/// resumable, so a killed open is finished by the next. A step that did something is recorded in
/// `meta` under `upgraded:` ‖ its name, with the time it ran (schemas/ledger-format.md, "Upgrades
/// run"): the ledger keeps its own history of upgrades, as GRDB's migrator keeps its migrations.
struct LedgerUpgrade: Sendable {
    /// The step's name, as recorded: `merkle-tree`.
    let name: String
    /// Runs the step on the ledger in `directory`, whose log environment is `environment`.
    let run: @Sendable (_ directory: String, _ environment: Environment) throws -> Outcome

    /// What a step did.
    enum Outcome {
        /// The ledger did not need it.
        case notNeeded
        /// It ran; the line `handover upgrade` prints for it, if any.
        case ran(String?)

        /// `.ran(line)` when `did`, else `.notNeeded`.
        init(_ did: Bool, _ line: @autoclosure () -> String?) { self = did ? .ran(line()) : .notNeeded }
    }

    /// The steps, oldest first: a later one may rely on an earlier one having run.
    static let all: [LedgerUpgrade] = [
        LedgerUpgrade(name: "format-2-indexes") { _, environment in
            guard try FormatUpgrade.isFormat1(environment) else { return .notNeeded }
            let events = try FormatUpgrade.run(on: environment)
            return .ran("format 1 to 2: the log's indexes rebuilt over \(counted(events, "event"))")
        },
        LedgerUpgrade(name: "rows-database") { _, environment in
            Outcome(try FormatUpgrade.addRows(on: environment), "format 2 to 3: the database of batch events' rows added (events unchanged)")
        },
        LedgerUpgrade(name: "merkle-tree") { _, environment in
            try MerkleTreeBuilder.buildIfMissing(in: environment).map { .ran("Merkle tree: built over \(counted($0, "event"))") } ?? .notNeeded
        },
        LedgerUpgrade(name: "person-index-database") { _, environment in
            // The index itself is built after the projections, as for a ledger whose index was dropped.
            Outcome(try Ledger.addPersonIndexDatabase(on: environment), nil)
        },
        LedgerUpgrade(name: "key-store-slots") { directory, _ in
            Outcome(
                try KeyStore.moveLegacyKeys(directory: Ledger.keyStoreDirectory(in: directory)),
                "key store: data keys moved into the slot file, its LMDB file compacted")
        },
        LedgerUpgrade(name: "verifier-key") { directory, environment in
            let schema = try environment.read { try LedgerSchema.open(in: $0, create: false) }
            let origin = Ledger.origin(of: try Ledger.identity(in: environment, schema: schema, directory: directory))
            return Outcome(
                try Ledger.writeVerifierKeyIfMissing(in: directory, origin: origin), "verifier key: written to \(VerifierKeyFile.fileName)")
        },
    ]

    /// The `meta` key recording that the step `name` ran.
    static func recordKey(_ name: String) -> [UInt8] { Array("upgraded:\(name)".utf8) }

    /// Runs every step on the ledger in `directory` and records those that ran, with `now`;
    /// returns the lines for `handover upgrade`, in order.
    static func runAll(directory: String, environment: Environment, now: Timestamp = .now()) throws -> [String] {
        var ran: [String] = []
        var lines: [String] = []
        for upgrade in all {
            guard case .ran(let line) = try upgrade.run(directory, environment) else { continue }
            ran.append(upgrade.name)
            if let line { lines.append(line) }
        }
        guard !ran.isEmpty else { return [] }
        try environment.write { txn in
            let meta = try txn.openDatabase("meta", create: false)
            for name in ran { try txn.put(meta, key: recordKey(name), value: Array(now.rfc3339.utf8)) }
        }
        return lines
    }
}
