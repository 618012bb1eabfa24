import Basics
import Crypto
import Foundation

/// A C2SP signed note (c2sp.org/signed-note): a text ending in a newline, a blank line, then
/// one or more signature lines `— <key name> base64(key ID ‖ signature)`.
///
/// The text is separated from the signatures by the note's last blank line, so a text may
/// itself hold a blank line or a whole signed note (a handoff manifest holds a checkpoint).
public struct SignedNote: Equatable, Sendable {
    /// One signature line.
    public struct Signature: Equatable, Sendable {
        /// The key's name.
        public var name: String
        /// The 4-byte key ID.
        public var keyID: [UInt8]
        /// What follows the key ID: an Ed25519 signature, or a cosignature's timestamp and signature.
        public var bytes: [UInt8]

        public init(name: String, keyID: [UInt8], bytes: [UInt8]) {
            self.name = name
            self.keyID = keyID
            self.bytes = bytes
        }

        /// The line, with its newline.
        public var line: String { "\u{2014} \(name) \(Data(keyID + bytes).base64EncodedString())\n" }
    }

    /// The signed text, with its final newline.
    public var text: String
    public var signatures: [Signature]

    /// The most signature lines a note read from outside may carry (the spec asks for at least 16).
    public static let maximumSignatures = 64

    public init(text: String, signatures: [Signature]) {
        self.text = text
        self.signatures = signatures
    }

    /// The note as written: text, blank line, signature lines.
    public var serialized: String { text + "\n" + signatures.map(\.line).joined() }

    /// Signs `text` with the Ed25519 `key` under `name` (signature type 0x01).
    public static func signing(_ text: String, name: String, key: CheckpointKey) throws -> SignedNote {
        let signature = try key.sign(Array(text.utf8))
        return SignedNote(
            text: text, signatures: [Signature(name: name, keyID: Checkpoint.keyID(name: name, publicKey: key.publicKey), bytes: signature)])
    }

    /// Reads a note, checking its form (UTF-8, no control characters but newlines, a text
    /// ending in a newline, well-formed signature lines), not its signatures.
    public init(parsing bytes: [UInt8]) throws {
        func bad(_ why: String) -> LedgerError { LedgerError(.malformedRecord, "not a signed note: \(why)") }
        guard let whole = String(validating: bytes, as: UTF8.self) else { throw bad("it is not valid UTF-8") }
        if let control = whole.unicodeScalars.first(where: { $0.value < 0x20 && $0 != "\n" }) {
            throw bad("it contains the control character U+\(String(format: "%04X", control.value))")
        }
        guard whole.hasSuffix("\n") else { throw bad("it does not end with a newline") }
        guard let separator = whole.range(of: "\n\n", options: .backwards) else { throw bad("no blank line before the signatures") }
        let text = String(whole[..<separator.lowerBound]) + "\n"
        let lines = whole[separator.upperBound...].dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty, lines.count <= SignedNote.maximumSignatures else {
            throw bad("expected 1 to \(SignedNote.maximumSignatures) signature lines after the last blank line")
        }
        var signatures: [Signature] = []
        for line in lines {
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 3, fields[0] == "\u{2014}", !fields[1].isEmpty, !fields[1].contains("+"),
                !fields[1].unicodeScalars.contains(where: \.properties.isWhitespace),
                let blob = Data(base64Encoded: String(fields[2])), blob.count > 4, blob.base64EncodedString() == fields[2]
            else {
                throw bad("\"\(InertText.forScreen(String(line.prefix(80))))\" is not a signature line (— <key name> <base64 key ID and signature>)")
            }
            signatures.append(Signature(name: String(fields[1]), keyID: Array(blob.prefix(4)), bytes: Array(blob.dropFirst(4))))
        }
        self.init(text: text, signatures: signatures)
        guard serialized.utf8.elementsEqual(whole.utf8) else { throw bad("its signature lines are not written the one canonical way") }
    }

    /// The signed-note key ID of `publicKey` under `name` for signature type `type` (0x01
    /// Ed25519, 0x04 Ed25519 cosignature): the first 4 bytes of SHA-256(name ‖ "\n" ‖ type ‖ key).
    public static func keyID(name: String, type: UInt8, publicKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array(name.utf8) + [0x0A, type] + publicKey).prefix(4))
    }

    /// The name and 32-byte public key in a verifier key `text` of signature type `type`
    /// (0x01 a signer's, 0x04 a cosigner's), if it is one: its key ID checked.
    public static func publicKey(fromVerifierKey text: String, type: UInt8) -> (name: String, key: [UInt8])? {
        let fields = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "+", maxSplits: 2).map(String.init)
        guard fields.count == 3, !fields[0].isEmpty, let blob = Data(base64Encoded: fields[2]), blob.count == 33, blob.first == type else {
            return nil
        }
        let key = Array(blob.dropFirst())
        guard Hex.encode(keyID(name: fields[0], type: type, publicKey: key)) == fields[1] else { return nil }
        return (fields[0], key)
    }

    /// The signed-note verifier key (vkey): `name+<key ID hex>+<base64(type ‖ public key)>`.
    public static func verifierKey(name: String, type: UInt8, publicKey: [UInt8]) -> String {
        "\(name)+\(Hex.encode(keyID(name: name, type: type, publicKey: publicKey)))+\(Data([type] + publicKey).base64EncodedString())"
    }

    /// What the signature lines say about an Ed25519 key (type 0x01) named `name`.
    public enum Verdict: Equatable, Sendable {
        /// A line from the key verifies.
        case verified
        /// No line carries that key's name and key ID.
        case notSignedByKey
        /// A line carries the key's name and ID, but its signature does not verify over the text.
        case invalid
    }

    /// Checks the text against the Ed25519 key `publicKey` named `name`; lines from other keys
    /// are ignored, as the spec asks.
    public func verify(name: String, publicKey: [UInt8]) -> Verdict {
        let keyID = Checkpoint.keyID(name: name, publicKey: publicKey)
        let lines = signatures.filter { $0.name == name && $0.keyID == keyID }
        guard !lines.isEmpty else { return .notSignedByKey }
        // A key that is not an Ed25519 point verifies nothing.
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return .invalid }
        let message = Array(text.utf8)
        return lines.allSatisfy({ $0.bytes.count == 64 && key.isValidSignature($0.bytes, for: message) }) ? .verified : .invalid
    }
}
