import AppleID
import ArgumentParser
import Basics
import Foundation
import Intake
import Ledger
import Logging

/// `handover ingest`: verify and record notifications or identity tokens from files.
struct IngestCommand: AsyncParsableCommand, LedgerCommand {
    var ledgerRole: LedgerCreated.Role? { kind == .signIn ? .recipient : nil }

    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Verify and record Apple notifications or identity tokens offline, from files or JSON lines on standard input.",
        discussion: """
            notification: each FILE holds one body as Apple POSTs it, {"payload": "<JWS>"}.
            sign-in: each FILE holds an identity token, or {"identity_token": "...", "nonce": "..."}.
            With -, standard input holds one such item per line. Exit status 1 if any was rejected.
            --verify-at backfills sign-ins captured earlier: exp and iat are checked against that
            time instead of now, and each event records it (verified_at) beside when it was ingested.
            """, exits: CommandExits.ledger)

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case notification
        case signIn = "sign-in"
    }

    @OptionGroup var ledgerOptions: LedgerOptions
    @OptionGroup var keyOptions: KeySetOptions

    @Argument(help: "notification or sign-in.")
    var kind: Kind

    @Argument(help: ArgumentHelp("Files to read, or - for JSON lines on standard input.", valueName: "file"))
    var inputs: [String]

    @Option(
        name: .customLong("verify-at"),
        help: ArgumentHelp(
            "sign-in only: check exp and iat against this time (RFC 3339), not now, to backfill tokens captured earlier.", valueName: "time"))
    var verifyAtText: String?

    func validate() throws {
        if inputs.isEmpty { throw ValidationError("name at least one file, or - for standard input") }
        if let verifyAtText {
            guard kind == .signIn else { throw ValidationError("--verify-at applies to sign-ins only: a notification's times are Apple's own") }
            let time = try parseTime(verifyAtText, option: "--verify-at")
            if time > Timestamp(Date()) {
                throw ValidationError("--verify-at \(verifyAtText) is in the future: a backfill checks tokens against a past time")
            }
        }
    }

    func run() async throws {
        let items = try readItems()
        let verifyAt = verifyAtText.flatMap(Timestamp.init(rfc3339:)).map { Date($0) }
        let (ledger, projection) = try ledgerOptions.open(.readWrite, for: self)
        defer { ledger.close() }
        var logger = Logger(label: "handover.ingest")
        logger.logLevel = .warning
        let intake = try AppleIntake(ledger: ledger, projection: projection, keys: keyOptions.keySet(), logger: logger)
        let ingest = OfflineIngest(intake: intake, kind: kind == .notification ? .notification : .signIn(verifyAt: verifyAt))
        let tally = try await ingest.run(items) { Console.error($0) }
        var line =
            "Ingested \(items.count) \(kind == .notification ? "notification" : "sign-in")\(items.count == 1 ? "" : "s"): \(tally.recorded) recorded, \(tally.duplicates) already recorded, \(tally.rejectedCount) rejected"
        if !tally.rejected.isEmpty {
            line += " (" + tally.rejected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        if tally.erased > 0 { line += "; \(counted(tally.erased, "user")) erased" }
        Console.out(line + ".")
        if tally.rejectedCount > 0 { throw CLIExit(.failed, nil) }
    }

    /// Every item with where it came from: a file, or a line of standard input.
    private func readItems() throws -> [(source: String, data: Data)] {
        var items: [(String, Data)] = []
        for input in inputs {
            if input == "-" {
                var number = 0
                while let line = readLine(strippingNewline: true) {
                    number += 1
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if !trimmed.isEmpty { items.append(("stdin line \(number)", Data(trimmed.utf8))) }
                }
            } else {
                // Anything over the body limit is refused as such; a larger file is no delivery.
                items.append((input, Data(try CommandLineFileError.reading(nil) { try FileBytes.read(input, limit: 1 << 20) })))
            }
        }
        return items
    }
}
