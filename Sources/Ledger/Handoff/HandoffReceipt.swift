import Basics
import Foundation
import LogEngine

/// What team B sends back to team A for a handoff package: a directory of three files
/// (schemas/audit-evidence.md, "Handoff receipt").
///
/// - `cosigned-checkpoint.txt`: A's checkpoint from the manifest, with A's signature line and
///   B's C2SP ``Cosignature`` after it;
/// - `handoff-received.json`: B's "handoff received" event, the bytes its ledger stores and hashes;
/// - `handoff-received.tlog-proof`: a C2SP tlog-proof of that event in B's signed checkpoint.
public struct HandoffReceipt: Sendable {
    public static let cosignedFile = "cosigned-checkpoint.txt"
    public static let eventFile = "handoff-received.json"
    public static let proofFile = "handoff-received.tlog-proof"

    /// A's checkpoint, cosigned.
    public var cosignedCheckpoint: SignedNote
    /// B's event record, exactly as B's ledger stores it.
    public var event: [UInt8]
    /// The event's inclusion in B's checkpoint.
    public var proof: TlogProof

    public init(cosignedCheckpoint: SignedNote, event: [UInt8], proof: TlogProof) {
        self.cosignedCheckpoint = cosignedCheckpoint
        self.event = event
        self.proof = proof
    }

    /// Writes the three files into `directory`, made if missing; files already there are replaced.
    public func write(to directory: String) throws {
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw LedgerError(.file, "cannot make the receipt directory \(directory)", underlying: error)
        }
        try AtomicFile.write(Array(cosignedCheckpoint.serialized.utf8), to: directory + "/" + HandoffReceipt.cosignedFile, mode: 0o644)
        try AtomicFile.write(event, to: directory + "/" + HandoffReceipt.eventFile, mode: 0o644)
        try AtomicFile.write(Array(proof.text.utf8), to: directory + "/" + HandoffReceipt.proofFile, mode: 0o644)
    }

    /// Reads a receipt directory, checking each file's form, not its signatures.
    public init(readingFrom directory: String) throws {
        func read(_ name: String) throws -> [UInt8] { try FileBytes.read(directory + "/" + name, limit: HandoffPackage.maximumNoteBytes) }
        cosignedCheckpoint = try SignedNote(parsing: read(HandoffReceipt.cosignedFile))
        event = try read(HandoffReceipt.eventFile)
        guard let proofText = String(validating: try read(HandoffReceipt.proofFile), as: UTF8.self) else {
            throw LedgerError(.malformedRecord, "\(directory)/\(HandoffReceipt.proofFile) is not UTF-8 text")
        }
        proof = try TlogProof(parsing: proofText)
    }
}
