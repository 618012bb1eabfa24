import Basics
import Ledger

/// `apply --users FILE`: the accounts an apply is limited to, one `account_id` a line.
///
/// Read by the command line through `FileBytes` (a regular file of at most
/// ``maximumFileBytes``); blank lines and
/// the blanks around an ID are ignored; a line that is not UTF-8, holds a control character or
/// is longer than an identifier may be is refused, naming the line, as the users CSV's
/// `account_id` column is. The cost follows the file's size.
public struct AccountList: Sendable, Equatable {
    /// The accounts listed, each once.
    public let accounts: Set<String>

    /// The largest list read: 1 GiB (ten million account IDs of a hundred bytes).
    public static let maximumFileBytes = 1 << 30

    /// The list in `bytes`, from the file at `path` (named in a refusal).
    public init(bytes: [UInt8], path: String) throws(ApplyError) {
        var accounts = Set<String>()
        var number = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            guard let text = String(validating: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self) else {
                throw ApplyError(.usage, "--users \(path), line \(number): is not valid UTF-8")
            }
            let id = text.trimming(.whitespaces)
            if id.isEmpty { continue }
            guard id.utf8.count <= Identifiers.maximumLength else {
                throw ApplyError(.usage, "--users \(path), line \(number): longer than \(Identifiers.maximumLength) bytes, which no account_id is")
            }
            guard !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                throw ApplyError(.usage, "--users \(path), line \(number): \"\(InertText.forScreen(id))\" contains a control character")
            }
            accounts.insert(id)
        }
        self.accounts = accounts
    }
}
