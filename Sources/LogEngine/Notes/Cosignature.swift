import Crypto
import Foundation

/// A C2SP Ed25519 cosignature (c2sp.org/tlog-cosignature, signature type 0x04): a second
/// party's statement that, at its timestamp, it verified the checkpoint's tree head.
///
/// The signature line is `— <cosigner name> base64(key ID ‖ u64 timestamp ‖ Ed25519 signature)`,
/// the key ID is SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4], and the signed message is
/// `cosignature/v1\n`, `time <POSIX seconds>\n`, then the checkpoint's whole text.
///
/// Handover cosigns with a ledger's checkpoint key under the ledger's origin. The key signs
/// checkpoints and manifests too, whose texts never begin with `cosignature/v1`.
public enum Cosignature {
    /// The signature type byte of an Ed25519 cosignature.
    public static let signatureType: UInt8 = 0x04

    /// The cosigner key ID of `publicKey` under `name`.
    public static func keyID(name: String, publicKey: [UInt8]) -> [UInt8] {
        SignedNote.keyID(name: name, type: signatureType, publicKey: publicKey)
    }

    /// The cosigner's verifier key, `name+<key ID hex>+base64(0x04 ‖ public key)`, for tools
    /// that read C2SP vkeys.
    public static func verifierKey(name: String, publicKey: [UInt8]) -> String {
        SignedNote.verifierKey(name: name, type: signatureType, publicKey: publicKey)
    }

    /// The bytes a cosignature signs: the header line, the time line and the checkpoint's text.
    public static func message(checkpointText: String, timestamp: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(timestamp)\n\(checkpointText)".utf8)
    }

    /// Cosigns `checkpoint` with `key` as `name` at `timestamp` (POSIX seconds).
    public static func sign(_ checkpoint: Checkpoint, name: String, key: CheckpointKey, timestamp: UInt64) throws -> SignedNote.Signature {
        try sign(body: checkpoint.body, name: name, key: key, timestamp: timestamp)
    }

    /// Cosigns the checkpoint whose note text (the lines before its signatures) is `body`.
    public static func sign(body: String, name: String, key: CheckpointKey, timestamp: UInt64) throws -> SignedNote.Signature {
        let signature = try key.sign(message(checkpointText: body, timestamp: timestamp))
        return SignedNote.Signature(name: name, keyID: keyID(name: name, publicKey: key.publicKey), bytes: BigEndian.bytes(timestamp) + signature)
    }

    /// The cosignature line by `publicKey` under `name` among `note`'s lines that verifies over
    /// its text, with its timestamp; nil when none does (lines from other keys are ignored).
    public static func verified(in note: SignedNote, name: String, publicKey: [UInt8]) -> (timestamp: UInt64, line: SignedNote.Signature)? {
        for (line, timestamp) in lines(in: note, name: name, publicKey: publicKey) {
            if let timestamp { return (timestamp, line) }
        }
        return nil
    }

    /// Whether `note` has a line by the cosigner `name` with `publicKey`'s key ID that does not
    /// verify as its cosignature: signed-note has a client reject the whole note then.
    public static func hasFailingLine(in note: SignedNote, name: String, publicKey: [UInt8]) -> Bool {
        lines(in: note, name: name, publicKey: publicKey).contains { $0.timestamp == nil }
    }

    /// `note`'s lines with `name` and `publicKey`'s key ID, each with its timestamp when it
    /// verifies as a cosignature over the note's text (nil when it does not).
    private static func lines(in note: SignedNote, name: String, publicKey: [UInt8]) -> [(line: SignedNote.Signature, timestamp: UInt64?)] {
        let keyID = keyID(name: name, publicKey: publicKey)
        // A key that is not an Ed25519 point verifies nothing.
        let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        return note.signatures.filter { $0.name == name && $0.keyID == keyID }.map { line in
            guard let key, line.bytes.count == 72 else { return (line, nil) }
            let timestamp = line.bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard timestamp < 1 << 63,
                key.isValidSignature(Array(line.bytes.dropFirst(8)), for: message(checkpointText: note.text, timestamp: timestamp))
            else { return (line, nil) }
            return (line, timestamp)
        }
    }
}
