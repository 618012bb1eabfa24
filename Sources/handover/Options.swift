import ArgumentParser
import Basics
import Foundation
import Ledger
import Projections

/// `--ledger DIR`, shared by every command.
struct LedgerOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The ledger directory (default: $HANDOVER_LEDGER, then ./handover-ledger).", valueName: "dir"))
    var ledger: String?

    /// The default directory, when neither `--ledger` nor `$HANDOVER_LEDGER` names one.
    static let defaultDirectory = "./handover-ledger"

    /// `$HANDOVER_LEDGER`, when set and not empty.
    private static var environmentDirectory: String? {
        ProcessInfo.processInfo.environment["HANDOVER_LEDGER"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The directory to use.
    var directory: String { ledger ?? LedgerOptions.environmentDirectory ?? LedgerOptions.defaultDirectory }

    /// How the ledger at ``directory`` is opened for `command`: read-only or not, the role the
    /// command needs, and what a refusal of a path without a ledger says of where it came from.
    func options(_ access: Ledger.Access, for command: (any LedgerCommand)?) -> Ledger.Options {
        var options = Ledger.Options(access: access)
        options.role = command?.roleRequirement
        if ledger == nil {
            options.pathNote =
                LedgerOptions.environmentDirectory == nil
                ? "no --ledger was given and $HANDOVER_LEDGER is not set, so the default \(LedgerOptions.defaultDirectory) was tried"
                : "the path is $HANDOVER_LEDGER's"
        } else if let environment = LedgerOptions.environmentDirectory {
            options.alsoNear = [environment]
        }
        return options
    }

    /// Opens the ledger with its projections for `command`, refusing the other team's ledger
    /// before anything is changed: read-only for the commands that only read. A fold of the
    /// whole log takes at most `foldMemory` bytes; a bulk load folds in `scratch`.
    func open(
        _ access: Ledger.Access, for command: any LedgerCommand, scratch: String? = nil, foldMemory: Int = UserProjection.defaultFoldMemory
    ) throws -> (Ledger, UserProjection) {
        let projection = UserProjection(scratch: scratch, foldMemory: foldMemory)
        let ledger = try Ledger.open(at: directory, folders: [projection], options: options(access, for: command))
        return (ledger, projection)
    }

    /// Opens the ledger alone (no projections) for `command`.
    func openLog(_ access: Ledger.Access, for command: any LedgerCommand) throws -> Ledger {
        try Ledger.open(at: directory, options: options(access, for: command))
    }

    /// Opens another team's ledger, given by its own option, read-only with its projections:
    /// the caller checks its role (``checkRoles(sender:at:option:recipient:at:)``).
    static func openOther(_ directory: String) throws -> (Ledger, UserProjection) {
        let projection = UserProjection()
        let ledger = try Ledger.open(at: directory, folders: [projection], options: Ledger.Options(access: .readOnly))
        return (ledger, projection)
    }
}

/// Refuses a `--scratch` directory that exists: a fold outside the ledger makes its own
/// directory and removes it after. One a killed fold left behind is taken (and emptied).
func validateScratch(_ scratch: String?) throws {
    if let scratch, FileManager.default.fileExists(atPath: scratch), !ScratchDirectory.isAbandoned(scratch) {
        throw ValidationError("--scratch: \(scratch) exists; give a new directory")
    }
}

/// `--as-of`, shared by the queries and the report.
struct AsOfOptions: ParsableArguments {
    @Option(
        name: .customLong("as-of"),
        help: ArgumentHelp("Answer from the events recorded up to this time (RFC 3339, or a date meaning midnight UTC).", valueName: "time"))
    var asOfText: String?

    var asOf: Timestamp? { asOfText.flatMap(Timestamp.init(rfc3339:)) }

    func validate() throws {
        if let asOfText { _ = try parseTime(asOfText, option: "--as-of") }
    }
}

/// `--format` and `--as-of`, shared by the queries.
struct OutputOptions: ParsableArguments {
    @Option(help: "Output format: table, json or csv.")
    var format: QueryTable.Format = .table

    @OptionGroup var time: AsOfOptions

    var asOf: Timestamp? { time.asOf }
}

extension QueryTable.Format: ExpressibleByArgument {}

/// `--limit N` of the lists that may be long (pending, migrated, failures, unmatched, state).
struct ListLimit: ParsableArguments {
    @Option(help: "At most this many rows, the first in the list's order; standard error says when there are more.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }
}

/// Parses a time argument or ends with a usage error naming the option.
func parseTime(_ text: String, option: String) throws -> Timestamp {
    guard let time = Timestamp(rfc3339: text) else {
        throw ValidationError("\(option): \"\(text)\" is not an RFC 3339 time (2026-11-22T10:00:00Z) or a date (2026-11-22)")
    }
    return time
}

/// `--format` of the commands that print a summary (report, verify, the runs): prose, or one
/// JSON object. `table`, the tabular answers' default, is taken as `text`, so one spelling
/// works for every command.
enum SummaryFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json

    init?(argument: String) {
        self.init(rawValue: argument == "table" ? "text" : argument)
    }

    static let help = ArgumentHelp("Output format: text (or table) or json.")
}

/// Writes `text` to `path`, ending the command with a usage error naming the file if it cannot.
func write(_ text: String, to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
        throw CLIExit.usage("cannot write \(path)")
    }
}

/// Refuses two ledgers given in the wrong roles (exit 2, naming each one's role): team A's is
/// the sender's, team B's the recipient's, as each ledger's "ledger created" says.
func checkRoles(sender: Ledger, at senderPath: String, option: String, recipient: Ledger, at recipientPath: String) throws {
    let senderRole = try sender.identity().role
    let recipientRole = try recipient.identity().role
    guard senderRole == .sender, recipientRole == .recipient else {
        // One option (`--sender`, beside `--ledger`) or two (`--sender and --recipient`).
        let takes = option.contains(" and ") ? "take team A's ledger and team B's, in that order" : "takes team A's ledger and the other team B's"
        throw CLIExit.usage(
            "\(option) \(takes): \(senderPath) is a \(senderRole.rawValue)'s ledger "
                + "(team \(try sender.identity().teamID)) and \(recipientPath) a \(recipientRole.rawValue)'s (team \(try recipient.identity().teamID))"
                + (senderRole == .recipient && recipientRole == .sender ? "; they are given the other way round" : ""))
    }
}
