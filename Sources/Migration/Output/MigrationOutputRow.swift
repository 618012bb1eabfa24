import Basics
import Foundation
import Ledger
import Projections

/// One row of a run's output CSV: a user whose step is done, as the team's own systems take
/// them in (team A: the transfer identifier to hand over; team B: the new `sub` and email).
public struct MigrationOutputRow: Sendable {
    public var accountID: String?
    public var transferSub: String?
    /// Team B's `sub` for the user.
    public var recipientSub: String?
    /// The address in clear, or none (also once the user is erased).
    public var email: EmailValue
    public var isPrivateEmail: Bool?

    public init(accountID: String?, transferSub: String?, recipientSub: String? = nil, email: EmailValue = .none, isPrivateEmail: Bool? = nil) {
        self.accountID = accountID
        self.transferSub = transferSub
        self.recipientSub = recipientSub
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }

    public typealias Column = AnswerColumn<MigrationOutputRow>

    /// `generate --out`: the handoff file team B's `exchange --transfers` reads.
    public static let generation = Answer<MigrationOutputRow>(
        "generate output", source: "handover generate --out",
        meaning: "A user whose transfer identifier was generated: the file handed to the recipient team.",
        columns: [SharedColumns.accountID { $0.accountID }, SharedColumns.transferSub { $0.transferSub }])

    /// `exchange --out`: each user's new `sub` and email, for team B's own user table.
    public static let exchange = Answer<MigrationOutputRow>(
        "exchange output", source: "handover exchange --out",
        meaning: "A user whose transfer identifier was exchanged (or who signed in with it): the team's new identifiers and email.",
        columns: [
            SharedColumns.accountID { $0.accountID }, SharedColumns.transferSub { $0.transferSub }, SharedColumns.recipientSub { $0.recipientSub },
            SharedColumns.email { $0.email.clearOnly }, SharedColumns.isPrivateEmail { $0.isPrivateEmail },
        ])

    /// Writes `rows` under `answer`'s columns to `path` at once (``AtomicFile``), mode 0600:
    /// the file maps the team's users to Apple's identifiers, and the exchange's holds their
    /// addresses in clear. Values are written exactly, for the programs that read the file.
    public static func write(_ rows: [MigrationOutputRow], as answer: Answer<MigrationOutputRow>, to path: String) throws {
        var text = CSVLine.header(answer.names)
        for row in rows { text += CSVLine.encode(answer.cells(row), style: .exact) }
        if path == "-" {
            try FileHandle.standardOutput.write(contentsOf: Array(text.utf8))
        } else {
            try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
        }
    }
}
