import Basics
import Crypto
import Foundation

/// The ledger's Ed25519 key for signing checkpoints, kept in `checkpoint.key` (mode 0600)
/// inside the ledger directory, never in the log, and never in a copy made without keys. Its
/// public half is in ``VerifierKeyFile``.
public struct CheckpointKey: Sendable {
    /// The file name of the key inside a ledger directory.
    public static let fileName = "checkpoint.key"

    private let privateKey: Curve25519.Signing.PrivateKey

    /// The raw 32-byte Ed25519 public key.
    public var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

    /// The key's file inside a ledger directory.
    public static func path(in directory: String) -> String { directory + "/" + fileName }

    /// Makes a new key and writes it to `directory`, refusing to replace one.
    @discardableResult
    public static func create(in directory: String) throws -> CheckpointKey {
        let key = Curve25519.Signing.PrivateKey()
        let text = key.rawRepresentation.base64EncodedString() + "\n"
        let path = path(in: directory)
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw LedgerError(.sealing, "could not write the checkpoint key to \(path)")
        }
        return CheckpointKey(privateKey: key)
    }

    /// Reads the key of the ledger in `directory`.
    public static func load(from directory: String) throws -> CheckpointKey {
        let path = path(in: directory)
        guard let data = try FileBytes.readIfPresent(path, limit: 4096) else {
            throw LedgerError(.sealing, "\(path) is missing: this ledger has no checkpoint key yet (`handover checkpoint` makes one)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let raw = Data(base64Encoded: text) else { throw LedgerError(.sealing, "\(path) does not hold a base64 Ed25519 private key") }
        let key: Curve25519.Signing.PrivateKey
        do { key = try Curve25519.Signing.PrivateKey(rawRepresentation: raw) } catch {
            throw LedgerError(.sealing, "\(path) does not hold a base64 Ed25519 private key", underlying: error)
        }
        return CheckpointKey(privateKey: key)
    }

    /// The Ed25519 signature of `message`.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        Array(try privateKey.signature(for: message))
    }
}
