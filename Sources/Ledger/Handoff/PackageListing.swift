import Basics
import LogEngine

/// What a checked handoff package lists, for reconciling with packages in place of the sender's
/// ledger: its number, manifest digest, the events it covers and its rows.
public struct PackageListing: Sendable {
    /// One row of `rows.csv`.
    public struct Row: Sendable, Equatable {
        public var transferSub: String
        public var accountID: String?
        /// The sender's "transfer ID generated" event for the row.
        public var sequence: UInt64
        /// The row's salt (v2); nil in a v1 package.
        public var salt: [UInt8]?

        public init(transferSub: String, accountID: String?, sequence: UInt64, salt: [UInt8]? = nil) {
            self.transferSub = transferSub
            self.accountID = accountID
            self.sequence = sequence
            self.salt = salt
        }
    }

    public var package: Int
    public var manifestSHA256: String
    public var targetTeam: String
    public var previousTreeSize: UInt64
    public var checkpoint: Checkpoint
    public var issuedAt: Timestamp
    public var rows: [Row]
    /// The consistency proof from the previous package's checkpoint to this one's.
    public var consistencyProof: [[UInt8]]

    public init(
        package: Int, manifestSHA256: String, targetTeam: String, previousTreeSize: UInt64, checkpoint: Checkpoint, issuedAt: Timestamp, rows: [Row],
        consistencyProof: [[UInt8]]
    ) {
        self.package = package
        self.manifestSHA256 = manifestSHA256
        self.targetTeam = targetTeam
        self.previousTreeSize = previousTreeSize
        self.checkpoint = checkpoint
        self.issuedAt = issuedAt
        self.rows = rows
        self.consistencyProof = consistencyProof
    }
}
