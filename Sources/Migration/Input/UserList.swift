import Basics
import Crypto
import Foundation
import Ledger

/// One user to migrate: the identifier Apple is called with, the app's account ID, and
/// the input line it came from.
public struct MigrationUser: Sendable, Hashable {
    /// Team A's `sub` (generate) or the `transfer_sub` (exchange).
    public let identifier: String
    public let accountID: String?
    public let line: Int
}

/// A validated input file: its users in order, each once, and what was noticed on the way.
public struct UserList: Sendable {
    /// The column that names each user: `sub` for generate, `transfer_sub` for exchange.
    public let keyColumn: String
    public let users: [MigrationUser]
    /// Duplicates that were dropped, one message each, naming both lines.
    public let warnings: [String]
    /// SHA-256 of the file's bytes, hex.
    public let sha256: String
    public let path: String

    /// Reads and checks the CSV at `path`. Every problem is reported at once, each with its
    /// line; nothing is returned unless the whole file is good.
    public init(path: String, keyColumn: String) throws {
        let bytes: [UInt8]
        do { bytes = try CSVTable.read(path) } catch { throw InputProblems(problems: [error]) }
        try self.init(bytes: bytes, path: path, keyColumn: keyColumn)
    }

    /// Checks CSV `bytes` as if read from `path`.
    public init(bytes: [UInt8], path: String, keyColumn: String) throws {
        let table: CSVTable
        do { table = try CSVTable(bytes: bytes, file: path) } catch let problem as InputProblem {
            throw InputProblems(problems: [problem])
        }
        try self.init(table: table, sha256: Hex.encode(SHA256.hash(data: bytes)), path: path, keyColumn: keyColumn)
    }

    /// Users checked as they were read (a package's rows, ``PackageRows``), from the file at
    /// `path` whose bytes hash to `sha256` (hex).
    init(checked users: [MigrationUser], sha256: String, path: String, keyColumn: String) {
        self.keyColumn = keyColumn
        self.users = users
        self.warnings = []
        self.sha256 = sha256
        self.path = path
    }

    /// Checks `table`, read from `path`, whose bytes hash to `sha256` (hex).
    public init(table: CSVTable, sha256: String, path: String, keyColumn: String) throws {
        var problems: [InputProblem] = []
        let header = table.header
        for (index, name) in header.enumerated() where name.isEmpty {
            problems.append(InputProblem(file: path, line: 1, "header column \(index + 1) has no name"))
        }
        // Counted in one pass: a header of many columns costs no more than its length.
        var occurrences: [String: Int] = [:]
        for name in header where !name.isEmpty { occurrences[name, default: 0] += 1 }
        var reported = Set<String>()
        for name in header where occurrences[name, default: 0] > 1 && reported.insert(name).inserted {
            problems.append(InputProblem(file: path, line: 1, "header names column \"\(InertText.forScreen(name))\" more than once"))
        }
        guard let keyIndex = header.firstIndex(of: keyColumn) else {
            let shown = 12
            let found =
                header.prefix(shown).map { "\"\(InertText.forScreen($0))\"" }.joined(separator: ", ")
                + (header.count > shown ? " and \(header.count - shown) more" : "")
            throw InputProblems(
                problems: [
                    InputProblem(
                        file: path, line: 1,
                        "has no \"\(keyColumn)\" column (header has \(found)); the first row must be a header naming \(keyColumn) and optionally account_id"
                    )
                ] + problems)
        }
        let accountIndex = header.firstIndex(of: "account_id")
        var users: [MigrationUser] = []
        var warnings: [String] = []
        /// Identifier → its index in `users`.
        var seen: [String: Int] = [:]
        var accounts: [String: (line: Int, identifier: String)] = [:]
        for row in table.rows {
            guard row.fields.count == header.count else {
                problems.append(InputProblem(file: path, line: row.line, "has \(counted(row.fields.count, "field")), the header has \(header.count)"))
                continue
            }
            let identifier = row.fields[keyIndex].trimmingWhitespace
            if let problem = UserList.problem(with: identifier, column: keyColumn) {
                problems.append(InputProblem(file: path, line: row.line, problem))
                continue
            }
            var accountID: String?
            if let accountIndex {
                let value = row.fields[accountIndex].trimmingWhitespace
                if !value.isEmpty {
                    if let problem = UserList.problem(withAccountID: value) {
                        problems.append(InputProblem(file: path, line: row.line, problem))
                        continue
                    }
                    accountID = value
                }
            }
            if let index = seen[identifier] {
                let earlier = users[index]
                if earlier.accountID != accountID {
                    problems.append(
                        InputProblem(
                            file: path, line: row.line, "\(keyColumn) \(identifier) also appears on line \(earlier.line) with a different account_id")
                    )
                } else {
                    warnings.append("\(path), line \(row.line): duplicate of line \(earlier.line) (\(keyColumn) \(identifier)); kept once")
                }
                continue
            }
            if let accountID, let other = accounts[accountID] {
                problems.append(
                    InputProblem(
                        file: path, line: row.line, "account_id \(accountID) is already used on line \(other.line) for a different \(keyColumn)"))
                continue
            }
            seen[identifier] = users.count
            if let accountID { accounts[accountID] = (row.line, identifier) }
            users.append(MigrationUser(identifier: identifier, accountID: accountID, line: row.line))
        }
        if table.rows.isEmpty { problems.append(InputProblem(file: path, line: nil, "has a header but no users")) }
        guard problems.isEmpty else { throw InputProblems(problems: problems.sorted { ($0.line ?? 0) < ($1.line ?? 0) }) }
        self.keyColumn = keyColumn
        self.users = users
        self.warnings = warnings
        self.sha256 = sha256
        self.path = path
    }

    /// Why `value` cannot be a `sub` or `transfer_sub`: Apple's identifiers are printable
    /// ASCII without spaces (digits, letters, dots).
    static func problem(with value: String, column: String) -> String? {
        if value.isEmpty { return "\(column) is empty" }
        if value.utf8.count > Identifiers.maximumLength { return "\(column) is longer than \(Identifiers.maximumLength) bytes" }
        if let bad = value.unicodeScalars.first(where: { !($0.value > 0x20 && $0.value < 0x7F) || $0 == "," || $0 == "\"" }) {
            return
                "\(column) \"\(InertText.forScreen(value))\" contains \(InertText.isEscaped(bad) ? "a control character" : "the character \"\(bad)\""), which an Apple identifier never does"
        }
        return nil
    }

    static func problem(withAccountID value: String) -> String? {
        if value.utf8.count > Identifiers.maximumLength { return "account_id is longer than \(Identifiers.maximumLength) bytes" }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "account_id contains a control character" }
        return nil
    }
}
