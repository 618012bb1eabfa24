import Foundation

/// A word of a command line as a POSIX shell reads it back unchanged: as it is when it holds
/// only characters no shell treats specially, otherwise in single quotes (a quote inside
/// written `'\''`).
public enum ShellWord {
    /// Bytes a word may hold unquoted: letters, digits and `_ . / : = @ % + , -`.
    private static let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-".utf8)

    /// `word` quoted for a shell when it needs to be.
    public static func quoted(_ word: String) -> String {
        if !word.isEmpty, word.utf8.allSatisfy(plain.contains), !word.hasPrefix("-") { return word }
        return "'" + word.replacingEvery("'", with: "'\\''") + "'"
    }

    /// `handover WORDS --ledger DIR REST`: a command printed for a person to run on the ledger
    /// at `ledger`, its directory quoted when it needs to be; `rest` is written as given (its
    /// words already quoted, or placeholders in capitals for the person to fill in).
    public static func handover(_ words: String, ledger: String, _ rest: String = "") -> String {
        "handover \(words) --ledger \(quoted(ledger))" + (rest.isEmpty ? "" : " " + rest)
    }
}
