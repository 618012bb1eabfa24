import Foundation
import Ledger
import LogEngine

/// Signs what the fuzzer wrote with the key a harness's checks pin, so that the input reaches
/// the checks after the signatures: the fuzzer controls the signed text, never the signature.
enum FuzzSigning {
    /// `note` (a checkpoint's text: body, blank line, signature lines) with its body signed
    /// afresh by `key` under the body's first line, the origin; a text without a blank line is
    /// returned as it is.
    static func resignCheckpoint(_ note: String, key: CheckpointKey) -> String {
        guard let split = note.range(of: "\n\n") else { return note }
        let body = String(note[..<split.lowerBound]) + "\n"
        let origin = String(body.prefix { $0 != "\n" })
        guard let signed = try? SignedNote.signing(body, name: origin, key: key) else { return note }
        return signed.serialized
    }

    /// The origin a checkpoint's text names: its first line.
    static func origin(ofCheckpoint note: String) -> String { String(note.prefix { $0 != "\n" }) }

    /// A handoff manifest file made from `bytes`: when they read as a signed note, its text
    /// with the checkpoint inside signed afresh, the whole signed by `key` under that
    /// checkpoint's origin; otherwise the bytes as they are. Returns the file and the origin.
    static func manifest(_ bytes: [UInt8], key: CheckpointKey) -> (file: [UInt8], origin: String) {
        guard let note = try? SignedNote(parsing: bytes), let split = note.text.range(of: "\n\n") else {
            let text = String(decoding: bytes, as: UTF8.self)
            return (bytes, text.range(of: "\n\n").map { origin(ofCheckpoint: String(text[$0.upperBound...])) } ?? "")
        }
        let checkpoint = resignCheckpoint(String(note.text[split.upperBound...]), key: key)
        let name = origin(ofCheckpoint: checkpoint)
        let text = String(note.text[..<split.upperBound]) + checkpoint
        guard let signed = try? SignedNote.signing(text, name: name, key: key) else { return (bytes, name) }
        return (Array(signed.serialized.utf8), name)
    }

    /// A consistency file (or any `header, blank line, checkpoint` text) with its checkpoint
    /// signed afresh by `key`.
    static func afterHeader(_ bytes: [UInt8], key: CheckpointKey) -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\n\n") else { return bytes }
        return Array((String(text[..<split.upperBound]) + resignCheckpoint(String(text[split.upperBound...]), key: key)).utf8)
    }

    /// A cosigned checkpoint made from `bytes`: when they read as a signed note of two or more
    /// signature lines, the second is replaced by `key`'s cosignature as `name`, at the
    /// timestamp the line carried (the fuzzer chooses the time, not the signature).
    static func cosigned(_ bytes: [UInt8], name: String, key: CheckpointKey) -> [UInt8] {
        guard var note = try? SignedNote(parsing: bytes), note.signatures.count >= 2 else { return bytes }
        let stamp = note.signatures[1].bytes.prefix(8)
        let timestamp = stamp.count == 8 ? stamp.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } : 0
        guard let signature = try? key.sign(Cosignature.message(checkpointText: note.text, timestamp: timestamp)) else { return bytes }
        note.signatures[1] = SignedNote.Signature(
            name: name, keyID: Cosignature.keyID(name: name, publicKey: key.publicKey),
            bytes: BigEndian.bytes(timestamp) + signature)
        return Array(note.serialized.utf8)
    }
}
