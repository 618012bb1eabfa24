/// The result of checking a ledger's log end to end.
public struct VerificationReport: Sendable {
    /// Events checked.
    public var eventCount: UInt64
    /// The chain hash of the last good event, hex.
    public var headHash: String
    /// The first sequence number that fails, if any.
    public var firstBadSequence: UInt64?
    /// What is wrong there.
    public var problem: String?
    /// The Merkle tree head recomputed from the records checked.
    public var treeRoot: [UInt8]
    /// The tree head recomputed over the first `rootAt` events, when asked for and reached.
    public var rootAtRequestedSize: [UInt8]?
    /// Whether the log's indexes were checked too: not in a format-1 ledger read as it is,
    /// whose indexes `handover upgrade` rebuilds.
    public var indexesChecked: Bool

    /// Whether the whole log verified.
    public var isIntact: Bool { problem == nil }
}
