import ArgumentParser
import Basics
import Ledger
import Projections

/// `handover query`: the compliance questions.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Answer compliance questions from the ledger.",
        discussion: "A list that comes out empty is an answer (exit 0); a question about one user or identifier the ledger does not hold exits 1.",
        subcommands: [Migrated.self, Pending.self, User.self, State.self, Failures.self, Unmatched.self, Events.self]
    )

    struct Migrated: AsyncParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract: "Users whose migration step is done: when, by which path, before the deadline or not.", exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var list: ListLimit

        func run() async throws {
            try await printAnswer(self, ledgerOptions, output, limit: list.limit) { try $0.migrated(into: $1) }
        }
    }

    struct Pending: AsyncParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract: "Users not yet migrated, with attempts, the last error and days left.", exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var list: ListLimit

        func run() async throws {
            try await printAnswer(self, ledgerOptions, output, limit: list.limit) { try $0.pending(into: $1) }
        }
    }

    struct Unmatched: AsyncParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract: "Users Apple notified us about whom no migration step named.", exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var list: ListLimit

        func run() async throws {
            try await printAnswer(self, ledgerOptions, output, limit: list.limit) { try $0.unmatched(into: $1) }
        }
    }

    struct User: ParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract: "One user's state and history, by account ID, either team's sub or transfer_sub; exit 1 when the ledger holds no such user.",
            exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "An account ID, sender sub, transfer_sub or recipient sub.") var identifier: String

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
            defer { ledger.close() }
            let found = try projection.read(ledger, asOf: output.asOf) { snapshot, view in
                try ComplianceQueries(snapshot: snapshot, time: output.asOf ?? .now(), sealer: ledger.sealer).user(identifier).map { user in
                    let last = try snapshot.checkpoint()
                    return UserWithHistory(
                        user: user,
                        history: try EventQuery.historyWithBatches(
                            of: user.state, through: last, snapshot: snapshot, view: view, sealer: ledger.sealer))
                }
            }
            guard let found else {
                throw CLIExit(.failed, "no user with identifier \"\(identifier)\"" + (output.asOf.map { " as of \($0.rfc3339)" } ?? ""))
            }
            let table = Answers.user.table([found])
            switch output.format {
            case .table:
                // One field a line, then the history as `query events` lists it.
                for (column, cell) in zip(Answers.state.names, Answers.state.cells(found.user)) where cell != .null {
                    Console.data("\(column.padding(toLength: 20, withPad: " ", startingAt: 0)) \(cell.tableText)")
                }
                Console.out("\nHistory:")
                Console.data(Answers.events.table(found.history).render(.table), terminator: "")
            case .json:
                Console.data(String(table.render(.json).dropFirst().dropLast(2)))
            case .csv:
                Console.data(table.render(.csv), terminator: "")
            }
        }
    }

    struct State: AsyncParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(abstract: "Every user with every projected field.", exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var list: ListLimit

        func run() async throws {
            try await printAnswer(self, ledgerOptions, output, limit: list.limit) { try $0.state(into: $1) }
        }
    }

    struct Failures: AsyncParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(abstract: "Users whose last attempt failed, and why.", exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var list: ListLimit
        @Flag(name: .customLong("by-class"), help: "Count failed users by failure class instead of listing them.") var byClass = false

        func run() async throws {
            try await printAnswer(self, ledgerOptions, output, limit: list.limit) {
                try byClass ? $0.failuresByClass(into: $1) : $0.failures(into: $1)
            }
        }
    }

    struct Events: ParsableCommand, EitherTeamsCommand {

        static let configuration = CommandConfiguration(
            abstract: "Events from the log, filtered by identifier, type and time.",
            discussion: "An empty list is an answer (exit 0); --id naming an identifier the ledger does not hold exits 1, as `query user` does.",
            exits: CommandExits.ledger)
        @OptionGroup var ledgerOptions: LedgerOptions
        @OptionGroup var output: OutputOptions
        @Option(
            name: .customLong("id"),
            help: "Only events carrying this identifier (any kind, or a jti); exit 1 when the ledger holds no such identifier.") var identifier:
            String?
        @Option(name: .customLong("type"), help: "Only events of this type; repeatable.") var types: [String] = []
        @Option(help: ArgumentHelp("Only events recorded at or after this time.", valueName: "time")) var since: String?
        @Option(help: "At most this many events (the last ones).") var limit: Int?

        func validate() throws {
            for t in types where EventType(rawValue: t) == nil {
                throw ValidationError("--type: unknown event type \"\(t)\"; known: \(EventType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let since { _ = try parseTime(since, option: "--since") }
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func run() throws {
            let (ledger, projection) = try ledgerOptions.open(.readOnly, for: self)
            defer { ledger.close() }
            if let identifier, try !EventQuery.isKnown(identifier, until: output.asOf, in: ledger, projection: projection) {
                throw CLIExit(
                    .failed, "no user or notification with identifier \"\(identifier)\"" + (output.asOf.map { " as of \($0.rfc3339)" } ?? ""))
            }
            let query = EventQuery(
                identifier: identifier, types: Set(types.compactMap(EventType.init(rawValue:))),
                since: try since.map { try parseTime($0, option: "--since") }, until: output.asOf, limit: limit)
            if output.format == .json {
                let out = StandardOutput()
                var first = true
                try out.write("[")
                try query.forEach(in: ledger, projection: projection) { event in
                    try out.write((first ? "" : ",") + String(decoding: InertText.json(event.canonicalJSON), as: UTF8.self))
                    first = false
                }
                try out.write("]\n")
                try out.flush()
            } else {
                try printRows(output.format) { try query.write(in: ledger, projection: projection, into: $0) }
            }
        }
    }
}
