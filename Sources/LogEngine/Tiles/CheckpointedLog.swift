/// A log whose checkpoints are signed and kept: what publishing its tiles reads
/// (``TileDirectory/publish(_:entries:)``).
public protocol CheckpointedLog: Sendable {
    /// The log's directory, as commands name it.
    var directory: String { get }
    /// Calls `body` with a view of the log in one read transaction.
    func read<T>(_ body: (LogView) throws -> T) throws -> T
    /// The signed checkpoint with the largest tree size, if any was signed.
    func latestCheckpoint() throws -> Checkpoint?
    /// The checkpoints' verifier key: its C2SP line and its Ed25519 public key.
    func verifierKey() throws -> (line: String, publicKey: [UInt8])
}
