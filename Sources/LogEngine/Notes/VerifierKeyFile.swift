import Basics
import Foundation

/// The ledger's verifier key, public, in `checkpoint.pub` beside the ledger's files: the line
/// `handover checkpoint --public-key` prints (C2SP signed-note: `name+keyid+base64`).
///
/// It is what `prove`, `checkpoint --public-key` and `verify --checkpoint` read, never the
/// private key, so a copy made without keys still proves and checks. Written at `init`, when
/// the signing key is first made, and by `handover upgrade` for ledgers that predate it.
public enum VerifierKeyFile {
    /// The file's name inside a ledger directory.
    public static let fileName = "checkpoint.pub"

    /// The file's path inside a ledger directory.
    public static func path(in directory: String) -> String { directory + "/" + fileName }

    /// Writes the verifier key of `publicKey` under `name` (the ledger's origin), mode 0644.
    package static func write(name: String, publicKey: [UInt8], in directory: String) throws {
        try AtomicFile.write(Array((Checkpoint.verifierKey(name: name, publicKey: publicKey) + "\n").utf8), to: path(in: directory), mode: 0o644)
    }

    /// The name and raw public key in the file; nil when the ledger has none.
    package static func read(in directory: String) throws -> (name: String, publicKey: [UInt8])? {
        let path = path(in: directory)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let key = try VerifierKey.read(from: path)
        return (key.name, key.publicKey)
    }
}
