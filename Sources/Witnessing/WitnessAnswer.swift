import Basics
import Foundation
import Ledger
import LogEngine

/// What a witness answered an add-checkpoint request, read as c2sp.org/tlog-witness defines
/// each status. The body is outside input: only what the status allows is read from it, and
/// a cosignature counts only once it verifies with the configured key.
public enum WitnessAnswer: Equatable, Sendable {
    /// 200, with a cosignature line of the checkpoint that verifies with the witness's key.
    case cosigned(SignedNote.Signature, timestamp: UInt64)
    /// 409: the witness last cosigned a tree of `size` (its `text/x.tlog.size` body), not the
    /// old size sent.
    case conflict(size: UInt64)
    /// 422: the consistency proof does not lead from what the witness cosigned before to this
    /// checkpoint. The log it saw and this one disagree: a split view, or a rewritten log.
    case inconsistent(String)
    /// 400, 403, 404 and other 4xx: the request or the configuration is wrong (an origin the
    /// witness does not know, a key it does not trust); sending it again changes nothing.
    case refused(status: Int, String)
    /// 429, 5xx: the witness cannot answer now; try again later.
    case unavailable(status: Int, String)
    /// An answer the protocol does not allow: a 200 without a verifying cosignature, a 409
    /// without a size.
    case garbled(status: Int, String)

    /// The most response bytes read: a few cosignature lines, or a short message.
    public static let maximumBodyBytes = 64 * 1024
    /// How far ahead of this machine's clock a cosignature's timestamp may be (clocks drift).
    public static let allowedClockSkew: UInt64 = 300

    /// Reads a witness's answer to `checkpoint`, cosignatures checked with `key`.
    public init(status: Int, contentType: String?, body: [UInt8], checkpoint: Checkpoint, key: WitnessKey, now: UInt64) {
        let message = WitnessAnswer.message(body)
        switch status {
        case 200:
            self = WitnessAnswer.cosignature(in: body, of: checkpoint, key: key, now: now)
        case 409:
            let type = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let text = String(decoding: body, as: UTF8.self)
            let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
            guard type == "text/x.tlog.size", let size = UInt64(line), String(size) == line, size < 1 << 63 else {
                self = .garbled(status: 409, "a 409 without a text/x.tlog.size body naming the size the witness cosigned: \(message)")
                return
            }
            self = .conflict(size: size)
        case 422: self = .inconsistent(message)
        case 429, 500...599: self = .unavailable(status: status, message)
        case 400...499: self = .refused(status: status, message)
        default: self = .garbled(status: status, "HTTP \(status) is no tlog-witness answer: \(message)")
        }
    }

    /// The cosignature line in a 200 body that verifies over `checkpoint` with `key`.
    private static func cosignature(in body: [UInt8], of checkpoint: Checkpoint, key: WitnessKey, now: UInt64) -> WitnessAnswer {
        // The body is signature lines; with the checkpoint before them they are a signed note.
        guard let note = try? SignedNote(parsing: Array(checkpoint.text.utf8) + body) else {
            return .garbled(status: 200, "the body is not cosignature lines (— <name> <base64>): \(message(body))")
        }
        guard let (timestamp, line) = Cosignature.verified(in: note, name: key.name, publicKey: key.publicKey) else {
            return .garbled(status: 200, "no cosignature line by \(key.name) verifies over the checkpoint with the configured key")
        }
        guard timestamp <= now + allowedClockSkew else {
            return .garbled(
                status: 200,
                "the cosignature is dated \(WitnessOutcome.time(timestamp)), more than \(allowedClockSkew) s after this machine's clock (\(WitnessOutcome.time(now)))"
            )
        }
        return .cosigned(line, timestamp: timestamp)
    }

    /// A body's first line as text to show: escaped, at most 200 characters.
    static func message(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(800), as: UTF8.self)
        let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return first.isEmpty ? "(no body)" : InertText.forScreen(String(first.prefix(200)))
    }
}
