import Basics
import Foundation

/// Another ledger's signed-note verifier key, pinned out of band (in the transfer agreement,
/// say): the name it signs under (that ledger's origin) and its Ed25519 public key.
public struct VerifierKey: Equatable, Sendable {
    public let name: String
    public let publicKey: [UInt8]

    public init(name: String, publicKey: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
    }

    /// The largest verifier key file read: a key line is about a hundred bytes.
    public static let maximumFileBytes = 4096

    /// The key line, `name+<key ID hex>+<base64(0x01 ‖ public key)>`.
    public var line: String { Checkpoint.verifierKey(name: name, publicKey: publicKey) }

    /// The key in a file holding its line, as `handover checkpoint --public-key` prints it and
    /// `checkpoint.pub` keeps it.
    public static func read(from path: String) throws -> VerifierKey {
        let bytes = try FileBytes.readOnce(path, limit: maximumFileBytes)
        guard let (name, key) = Checkpoint.publicKey(fromVerifierKey: String(decoding: bytes, as: UTF8.self)) else {
            throw LedgerError(
                .malformedRecord, "\(path) does not hold a verifier key (one line name+keyid+base64, as `handover checkpoint --public-key` prints)")
        }
        return VerifierKey(name: name, publicKey: key)
    }
}
