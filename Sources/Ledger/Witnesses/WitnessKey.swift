import Foundation
import LogEngine

/// A witness's cosigner verifier key (c2sp.org/signed-note, type 0x04 of
/// c2sp.org/tlog-cosignature): the name its cosignature lines carry and its Ed25519 key.
public struct WitnessKey: Hashable, Sendable {
    public let name: String
    public let publicKey: [UInt8]

    /// The key in a vkey line `name+<key ID hex>+base64(0x04 ‖ public key)`, its key ID checked;
    /// nil for anything else (a log's signing key, type 0x01, included).
    public init?(verifierKey text: String) {
        guard let (name, key) = SignedNote.publicKey(fromVerifierKey: text, type: Cosignature.signatureType) else { return nil }
        self.name = name
        self.publicKey = key
    }

    /// The vkey line.
    public var line: String { Cosignature.verifierKey(name: name, publicKey: publicKey) }
}
