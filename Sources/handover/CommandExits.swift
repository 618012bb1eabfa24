import ArgumentParser
import ExitStatuses

/// The exit statuses each command can end with, said at the end of its help and in its manual
/// page's EXIT STATUS (what each status means is the one table, ``ExitStatus/meaning``).
enum CommandExits {
    /// A command that reads or writes a ledger: done; not all done (or the one thing named
    /// missing, a full disk, a closed pipe); bad usage or input; integrity.
    static let ledger: [ExitStatus] = [.success, .failed, .usage, .integrity]
    /// A migration run: every status.
    static let run = ExitStatus.allCases
    /// `preflight`: ready; a failure here; bad usage or a check failed here; Apple refused.
    static let preflight: [ExitStatus] = [.success, .failed, .usage, .credentialsRefused]
    /// A command that opens no ledger (the stand-in, the demo, `init`, a client secret).
    static let noLedger: [ExitStatus] = [.success, .failed, .usage]

    /// "Exit status: 0, 1, 2 or 4 (`handover --help` lists what each means)."
    static func sentence(_ statuses: [ExitStatus]) -> String {
        let codes = statuses.map { String($0.rawValue) }
        let listed = codes.count == 1 ? codes[0] : codes.dropLast().joined(separator: ", ") + " or " + codes.last!
        return "Exit status: \(listed) (`handover --help` lists what each means)."
    }
}

extension CommandConfiguration {
    /// A command's configuration whose discussion ends with ``CommandExits/sentence(_:)`` of `exits`.
    init(
        commandName: String? = nil, abstract: String, discussion: String = "", exits: [ExitStatus],
        subcommands: [any ParsableCommand.Type] = []
    ) {
        self.init(
            commandName: commandName, abstract: abstract,
            discussion: discussion.isEmpty ? CommandExits.sentence(exits) : discussion + "\n" + CommandExits.sentence(exits),
            subcommands: subcommands)
    }
}
