import Foundation
import Ledger

/// What the command line says to people, on standard output or standard error: every line
/// inert (``InertText``), whatever outside text it quotes, the line breaks between lines kept.
enum Console {
    /// Writes `text` and `terminator` to standard output.
    static func out(_ text: String, terminator: String = "\n") {
        print(InertText.forScreenKeepingLines(text), terminator: terminator)
    }

    /// Writes `text` and a line feed to standard error, at once (unbuffered).
    static func error(_ text: String) {
        fflush(nil)
        FileHandle.standardError.write(Data((InertText.forScreenKeepingLines(text) + "\n").utf8))
    }
}

/// Standard error for log handlers: each entry written inert, a line feed inside it included
/// (escaped), so a log line that quotes a stranger's string stays one line of data.
struct InertStandardError: TextOutputStream, Sendable {
    mutating func write(_ string: String) {
        let entry = string.hasSuffix("\n") ? InertText.forScreen(String(string.dropLast())) + "\n" : InertText.forScreen(string)
        FileHandle.standardError.write(Data(entry.utf8))
    }
}
