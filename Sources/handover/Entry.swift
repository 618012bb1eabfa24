import ArgumentParser
import Foundation
import Ledger
import Logging

/// Runs the command line and maps every failure to DESIGN.md's exit codes.
@main
enum Entry {
    static func main() async {
        // Logs quote what strangers send (a refused token's header, Apple's error text): every
        // entry is written inert.
        LoggingSystem.bootstrap { label in StreamLogHandler(label: label, stream: InertStandardError()) }
        do {
            var command = try Handover.parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as CLIExit {
            if let message = exit.message { Console.error("error: " + message) }
            Foundation.exit(exit.code)
        } catch let error as LedgerError {
            Console.error("error: \(error.message)")
            let usage: Set<LedgerError.Code> = [.missingLedger, .notALedger, .ledgerExists, .invalidEvent, .needsUpgrade, .readOnly, .noCheckpointKey]
            Foundation.exit(usage.contains(error.code) ? ExitStatus.usage : ExitStatus.failed)
        } catch {
            let code = Handover.exitCode(for: error)
            let message = Handover.fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            // One prefix for every error, ArgumentParser's own ("Error: ") included.
            if !message.isEmpty { Console.error(message.hasPrefix("Error: ") ? "error: " + message.dropFirst(7) : message) }
            // ArgumentParser's usage errors (64) become DESIGN.md's 2.
            Foundation.exit(code == .validationFailure ? ExitStatus.usage : code.rawValue)
        }
    }
}

/// DESIGN.md's exit codes.
enum ExitStatus {
    static let success: Int32 = 0
    static let failed: Int32 = 1
    static let usage: Int32 = 2
    static let credentialsRefused: Int32 = 3
    static let integrity: Int32 = 4
}

/// Ends the command with an exit code and an optional message on standard error.
struct CLIExit: Error {
    let code: Int32
    let message: String?

    static func usage(_ message: String) -> CLIExit { CLIExit(code: ExitStatus.usage, message: message) }
}
