import Basics
import ExitStatuses
import Ledger

/// A file named on the command line (a key, a checkpoint, an item to ingest) that cannot be
/// read or is not in its form: bad usage, exit 2, said with what names it.
struct CommandLineFileError: ExitStatusDeciding {
    /// What names the file (`--sender-key`, its path), said first; nil says the cause alone.
    let naming: String?
    let cause: any Error

    var exitStatus: ExitStatus { .usage }
    var exitMessage: String? { (naming.map { $0 + ": " } ?? "") + ErrorText.describing(cause) }

    /// The result of `body`, which reads the file; what it throws becomes this error.
    static func reading<T>(_ naming: String?, _ body: () throws -> T) throws -> T {
        do { return try body() } catch { throw CommandLineFileError(naming: naming, cause: error) }
    }
}
