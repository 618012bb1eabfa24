/// A log whose checkpoints are signed and kept: what publishing its tiles reads
/// (``TileDirectory/publish(_:entries:)``).
public protocol CheckpointedLog: LogReading {
    /// The log's directory, as commands name it.
    var directory: String { get }
    /// The signed checkpoint with the largest tree size, if any was signed.
    func latestCheckpoint() throws -> Checkpoint?
    /// The checkpoints' verifier key: its C2SP line and its Ed25519 public key.
    func verifierKey() throws -> (line: String, publicKey: [UInt8])
}
