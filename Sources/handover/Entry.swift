import ArgumentParser
import ExitStatuses
import Foundation
import Ledger
import Logging
import NotificationServer

/// Runs the command line and ends it with one ``ExitStatus`` (README, "Exit codes").
///
/// The steps are those of ArgumentParser's `AsyncParsableCommand.main(_:)`: its async parse,
/// then the command's `run()`. Only the ending differs: ArgumentParser exits 64 for usage
/// errors and 1 for every other error, while Handover's statuses say what happened (2 usage,
/// 3 credentials refused, 4 integrity, …), decided by ``CommandEnding`` alone.
@main
enum Entry {
    static func main() async {
        // Logs quote what strangers send (a refused token's header, Apple's error text): every
        // entry is written inert.
        LoggingSystem.bootstrap { label in StreamLogHandler(label: label, stream: InertStandardError()) }
        var parsed: (any ParsableCommand)?
        do {
            var command = try await Handover.asyncParseAsRoot()
            parsed = command
            try MissingSubcommand.refuse(command)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let ending = CommandEnding(error, command: parsed)
            if let text = ending.standardOutput { Console.data(text) }
            if let text = ending.standardError { Console.error(text) }
            Foundation.exit(ending.status.rawValue)
        }
    }
}

/// How a command that threw ends: its exit status and what it prints. Every error any command
/// throws is matched here, and only here.
struct CommandEnding {
    let status: ExitStatus
    /// Help or version text asked for.
    let standardOutput: String?
    /// The error message, `error: ` first.
    let standardError: String?

    /// How `command` (nil when the command line did not parse) ends after throwing `error`.
    init(_ error: any Error, command: (any ParsableCommand)? = nil) {
        if let server = command as? any ListeningCommand, let message = ListenFailure.message(error, host: server.host, port: server.port) {
            self.init(status: .usage, standardError: "error: " + message)
            return
        }
        switch error {
        case let error as any ExitStatusDeciding:
            self.init(status: error.exitStatus, standardError: error.exitMessage.map { "error: " + $0 })
        default:
            // ArgumentParser's own: a usage error (its 64), help or version (0), an ExitCode.
            let code = Handover.exitCode(for: error)
            let message = Handover.fullMessage(for: error)
            if code == .success {
                self.init(status: .success, standardOutput: message)
            } else {
                let status = code == .validationFailure ? .usage : ExitStatus(rawValue: code.rawValue) ?? .failed
                self.init(status: status, standardError: message.isEmpty ? nil : message)
            }
        }
    }

    private init(status: ExitStatus, standardOutput: String? = nil, standardError: String? = nil) {
        self.status = status
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}

/// Ends the command with an exit status and an optional message on standard error.
struct CLIExit: ExitStatusDeciding {
    let exitStatus: ExitStatus
    let exitMessage: String?

    init(_ status: ExitStatus, _ message: String?) {
        self.exitStatus = status
        self.exitMessage = message
    }

    static func usage(_ message: String) -> CLIExit { CLIExit(.usage, message) }
}

/// A command group (`handover`, `handover query`, ...) run without one of its subcommands: bad
/// usage: its help on standard error, exit 2. `--help` and `help` still print
/// it on standard output with exit 0.
struct MissingSubcommand: ExitStatusDeciding, CustomStringConvertible {
    /// The group that was run.
    let group: any ParsableCommand.Type

    /// Throws when `command`, as parsed, is a group: ArgumentParser runs a group named alone
    /// (its default `run()` prints its help and exits 0).
    static func refuse(_ command: any ParsableCommand) throws {
        let group = type(of: command)
        guard !group.configuration.subcommands.isEmpty else { return }
        throw MissingSubcommand(group: group)
    }

    var description: String {
        // "handover query <subcommand>": the words before the first placeholder.
        let path = Handover.usageString(for: group).split(separator: " ").prefix { word in !word.hasPrefix("<") && !word.hasPrefix("[") }
        return "`\(path.joined(separator: " "))` needs a subcommand; its help follows"
    }

    var exitStatus: ExitStatus { .usage }
    var exitMessage: String? { "\(self)\n\n" + Handover.helpMessage(for: group) }
}
