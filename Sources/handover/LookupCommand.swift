import ArgumentParser
import Basics
import Ledger
import Projections

/// `handover lookup`: which account a user is, as `serve` answers the app backend.
struct LookupCommand: ParsableCommand, EitherTeamsCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup", abstract: "Which of the app's accounts a user is: the account_id and state that serve answers the app backend.",
        discussion:
            "Looks the identifier up as a transfer_sub, then as this team's sub, then as an account_id (or only as --as says), and prints the same fields as serve's GET /v1/transfer-subs/ID and /v1/subs/ID. Opens the ledger read-only. Exits 1 when nothing is recorded under the identifier.",
        exits: CommandExits.ledger)

    /// The kinds of identifier a lookup may take the argument as.
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case transferSub = "transfer-sub", sub, accountID = "account-id"
    }

    @OptionGroup var ledgerOptions: LedgerOptions
    @Argument(help: ArgumentHelp("A transfer_sub, a sub of this team's, or an account_id.", valueName: "id")) var id: String
    @Option(
        name: .customLong("as"),
        help: ArgumentHelp("Take the identifier only as this kind.", valueName: Kind.allCases.map(\.rawValue).joined(separator: "|"))) var kind: Kind?
    @Option(help: SummaryFormat.help) var format: SummaryFormat = .text

    func run() throws {
        let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
        defer { ledger.close() }
        let sub = try ledger.identity().role.subKind
        let kinds: [IdentifierKind] =
            switch kind {
            case .transferSub?: [.transferSub]
            case .sub?: [sub]
            case .accountID?: [.accountID]
            case nil: [.transferSub, sub, .accountID]
            }
        let lookups = try projection.read(ledger) { snapshot, _ in try kinds.map { try UserLookup(Identifier($0, id), in: snapshot) } }
        let lookup = lookups.first { $0.user != nil } ?? lookups[0]
        if format == .json {
            Console.data(
                String(
                    decoding: JSONValue.object(Dictionary(uniqueKeysWithValues: lookup.members.map { ($0.name, $0.value) })).canonicalBytes,
                    as: UTF8.self))
        } else {
            let width = lookup.members.map(\.name.count).max() ?? 0
            Console.out(
                lookup.members.map { member in
                    let text: String =
                        switch member.value {
                        case .string(let s): InertText.forScreen(s)
                        case .int(let i): String(i)
                        case .bool(let b): b ? "yes" : "no"
                        default: "-"
                        }
                    return member.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + text
                }.joined(separator: "\n"))
        }
        if lookup.user == nil { throw CLIExit(.failed, nil) }
    }
}
