import ArgumentParser
import Ledger

/// A command that opens a ledger, and whose ledger it must be. The role is checked when the
/// ledger is opened (``LedgerOptions/open(_:for:scratch:foldMemory:)``), before anything is upgraded,
/// caught up or written: the other team's ledger is refused with exit 2 and left as it was.
protocol LedgerCommand: ParsableCommand {
    /// The team whose ledger this invocation works on; nil for either team's.
    var ledgerRole: LedgerCreated.Role? { get }
}

extension LedgerCommand {
    /// The check ``ledgerRole`` asks for, in words naming this command.
    var roleRequirement: RoleRequirement? { ledgerRole.map { .command(Self.commandPath, of: $0) } }

    /// The command's words after `handover`: "handoff receive".
    static var commandPath: String { Handover.path(to: Self.self) ?? configuration.commandName ?? "\(Self.self)" }
}

extension Handover {
    /// The words naming `command` in the command tree after `handover`, or nil when it is not in it.
    static func path(to command: any ParsableCommand.Type, from group: any ParsableCommand.Type = Handover.self) -> String? {
        for sub in group.configuration.subcommands {
            let name = sub.configuration.commandName ?? "\(sub)"
            if sub == command { return name }
            if let rest = path(to: command, from: sub) { return name + " " + rest }
        }
        return nil
    }
}

/// A command that works on either team's ledger: a reader of the log, a check of it.
protocol EitherTeamsCommand: LedgerCommand {}

extension EitherTeamsCommand {
    var ledgerRole: LedgerCreated.Role? { nil }
}
