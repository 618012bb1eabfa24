import Basics
import Crypto
import Foundation

/// A signed statement of the log's size and Merkle tree head at one time.
///
/// The text is a C2SP checkpoint in a signed note (c2sp.org/tlog-checkpoint,
/// c2sp.org/signed-note), so Go's `sumdb/note` and similar tools read it too:
///
///     handover/TEAMID1234/6F9619FF-8B86-D011-B42D-00C04FC964FF
///     1042
///     <base64 root hash>
///
///     — handover/TEAMID1234/6F9619FF-8B86-D011-B42D-00C04FC964FF <base64(key ID ‖ Ed25519 signature)>
///
/// The signature covers the body: every line before the blank line, each with its "\n".
///
/// Checkpoints signed before version 0.5.0 carry a fourth body line, the extension line
/// `time <RFC 3339>`; they are read and verified as they were signed. New checkpoints have no
/// extension line (tlog-checkpoint advises against them, and standard witnesses refuse them):
/// when a checkpoint was seen is what a witness's cosignature says.
public struct Checkpoint: Equatable, Sendable {
    /// Names the log: `handover/<team ID>/<ledger ID>`; also the signing key's name.
    public var origin: String
    /// Events covered: the log's first `treeSize` events.
    public var treeSize: UInt64
    /// RFC 9162 Merkle tree head over those events.
    public var rootHash: [UInt8]
    /// When the checkpoint was signed, from its `time` extension line: only in checkpoints
    /// signed before version 0.5.0.
    public var time: Timestamp?
    /// The 4-byte key ID the signature line names.
    public var keyID: [UInt8]
    /// The 64-byte Ed25519 signature over `body`.
    public var signature: [UInt8]

    /// The signed text: origin, size, base64 root (and an older checkpoint's time line), each
    /// ending in "\n".
    public var body: String {
        "\(origin)\n\(treeSize)\n\(Data(rootHash).base64EncodedString())\n" + (time.map { "time \($0.rfc3339)\n" } ?? "")
    }

    /// The whole note: body, a blank line, the signature line.
    public var text: String {
        body + "\n" + "\u{2014} \(origin) \(Data(keyID + signature).base64EncodedString())\n"
    }

    /// Signs the tree head `rootHash` over `treeSize` events with `key`; `time` makes the older
    /// form with a time line, which only tests of that form need.
    public init(origin: String, treeSize: UInt64, rootHash: [UInt8], time: Timestamp? = nil, key: CheckpointKey) throws {
        self.origin = origin
        self.treeSize = treeSize
        self.rootHash = rootHash
        self.time = time
        self.keyID = Checkpoint.keyID(name: origin, publicKey: key.publicKey)
        self.signature = []
        self.signature = try key.sign(Array(body.utf8))
    }

    /// Reads a checkpoint note; checks its form, not its signature.
    public init(parsing text: String) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a Handover checkpoint: \(why)") }
        let parts = text.components(separatedBy: "\n\n")
        guard parts.count == 2 else { throw bad("expected a body, one blank line and a signature line") }
        let lines = parts[0].split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 3 || lines.count == 4 else {
            throw bad("the body has \(lines.count) lines, expected 3 (origin, size, root hash) or, signed before 0.5.0, 4 (and a time line)")
        }
        guard let size = UInt64(lines[1]) else { throw bad("tree size \"\(lines[1])\" is not a number") }
        guard let root = Data(base64Encoded: lines[2]), root.count == 32 else { throw bad("the root hash is not 32 bytes of base64") }
        var time: Timestamp?
        if lines.count == 4 {
            guard lines[3].hasPrefix("time "), let stated = Timestamp(rfc3339: String(lines[3].dropFirst(5))) else {
                throw bad("the fourth line is not \"time <RFC 3339>\", the only extension line a Handover checkpoint had")
            }
            time = stated
        }
        let signatureLine = parts[1].hasSuffix("\n") ? String(parts[1].dropLast()) : parts[1]
        let fields = signatureLine.split(separator: " ").map(String.init)
        guard fields.count == 3, fields[0] == "\u{2014}", fields[1] == lines[0] else {
            throw bad("the signature line is not \"— \(lines[0]) <signature>\"")
        }
        guard let blob = Data(base64Encoded: fields[2]), blob.count == 68 else {
            throw bad("the signature is not 68 bytes (key ID and Ed25519 signature) of base64")
        }
        guard size <= UInt64(Int64.max) else { throw bad("the tree size \(size) is beyond 2^63 - 1") }
        origin = lines[0]
        treeSize = size
        rootHash = Array(root)
        self.time = time
        keyID = Array(blob.prefix(4))
        signature = Array(blob.dropFirst(4))
        // One text per checkpoint: the signature covers the body as written here, so a copy that
        // reads the same but differs in bytes (a "+12" size, non-canonical base64, a lower-case
        // "t" in the time) is not the checkpoint that was signed. Only a missing final newline is let go.
        guard self.text.utf8.elementsEqual((text.hasSuffix("\n") ? text : text + "\n").utf8) else {
            throw bad(
                "it differs, byte for byte, from the one way a checkpoint is written (decimal size without leading zeros, canonical base64, time with six fractional digits)"
            )
        }
    }

    /// Whether the signature is `publicKey`'s, over this body, under this origin's key ID.
    public func isSigned(by publicKey: [UInt8]) -> Bool {
        // A key that is not an Ed25519 point verifies nothing: the answer is no.
        guard keyID == Checkpoint.keyID(name: origin, publicKey: publicKey),
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        else { return false }
        return key.isValidSignature(signature, for: Array(body.utf8))
    }

    /// The signed-note key ID of an Ed25519 key: the first 4 bytes of SHA-256(name ‖ "\n" ‖ 0x01 ‖ public key).
    public static func keyID(name: String, publicKey: [UInt8]) -> [UInt8] {
        SignedNote.keyID(name: name, type: 0x01, publicKey: publicKey)
    }

    /// The signed-note verifier key: `name+<key ID hex>+<base64(0x01 ‖ public key)>`.
    public static func verifierKey(name: String, publicKey: [UInt8]) -> String {
        SignedNote.verifierKey(name: name, type: 0x01, publicKey: publicKey)
    }

    /// The raw public key inside a verifier key, if `text` is one for `name`.
    public static func publicKey(fromVerifierKey text: String) -> (name: String, key: [UInt8])? {
        SignedNote.publicKey(fromVerifierKey: text, type: 0x01)
    }
}
