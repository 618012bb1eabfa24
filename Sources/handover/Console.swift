import Basics
import Foundation
import Ledger

/// The one way the command line writes to standard output and standard error.
///
/// What it says to people (``out(_:terminator:)``, ``now(_:)``, ``error(_:)``) is inert
/// (``InertText``), whatever outside text it quotes, the line breaks between lines kept; what
/// it gives to programs (``data(_:terminator:)``: JSON, CSV, a token, a checkpoint) is written
/// exactly as made, already in its own escaped form. Answers of any size go out through
/// ``StandardOutput`` (`AnswerPrinting.swift`), after whatever was written here.
enum Console {
    /// Writes `text` and `terminator` to standard output, for people.
    static func out(_ text: String, terminator: String = "\n") {
        print(InertText.forScreenKeepingLines(text), terminator: terminator)
    }

    /// ``out(_:terminator:)``, flushed at once: the line a long-running command prints before
    /// it waits (a server listening, an export following).
    static func now(_ text: String) {
        out(text)
        fflush(nil)
    }

    /// Writes `text` and `terminator` to standard output exactly: text made for programs.
    static func data(_ text: String, terminator: String = "\n") {
        print(text, terminator: terminator)
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
