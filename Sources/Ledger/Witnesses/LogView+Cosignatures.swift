import Foundation
import LogEngine

extension LogView {
    /// The "witness cosigned" events, oldest first.
    public func witnessCosignatures() throws -> [(sequence: UInt64, body: WitnessCosigned)] {
        try sequences(of: .witnessCosigned).compactMap { sequence in
            guard case .witnessCosigned(let body) = try eventAsLogged(sequence)?.body else { return nil }
            return (sequence, body)
        }
    }

    /// Each witness's cosignature of the largest tree size it cosigned, by its verifier key.
    public func latestCosignatures() throws -> [String: WitnessCosigned] {
        var latest: [String: WitnessCosigned] = [:]
        for (_, body) in try witnessCosignatures() where body.checkpoint.treeSize >= latest[body.witnessKey]?.checkpoint.treeSize ?? 0 {
            latest[body.witnessKey] = body
        }
        return latest
    }

    /// The largest checkpoint a witness cosigned, as a signed note: the ledger's own signature
    /// line, then each witness's cosignature of it in the order they were recorded (only those
    /// that verify with the witness's key); with those witnesses' verifier keys, in the same
    /// order. Nil before the first cosignature.
    public func cosignedCheckpoint() throws -> (note: SignedNote, witnesses: [WitnessKey])? {
        let all = try witnessCosignatures().map(\.body)
        for size in Set(all.map(\.checkpoint.treeSize)).sorted(by: >) {
            let ofSize = all.filter { $0.checkpoint.treeSize == size }
            guard let checkpoint = try? ofSize[0].checkpoint.checkpoint() else { continue }
            var note = try SignedNote(parsing: Array(checkpoint.text.utf8))
            var witnesses: [WitnessKey] = []
            for body in ofSize where !witnesses.contains(where: { $0.line == body.witnessKey }) {
                guard let blob = Data(base64Encoded: body.cosignature), blob.count > 4, let key = WitnessKey(verifierKey: body.witnessKey) else {
                    continue
                }
                let line = SignedNote.Signature(name: key.name, keyID: Array(blob.prefix(4)), bytes: Array(blob.dropFirst(4)))
                guard Cosignature.verified(in: SignedNote(text: note.text, signatures: [line]), name: key.name, publicKey: key.publicKey) != nil
                else { continue }
                note.signatures.append(line)
                witnesses.append(key)
            }
            if !witnesses.isEmpty { return (note, witnesses) }
        }
        return nil
    }

    /// For each log this ledger witnesses, the latest checkpoint of it this ledger cosigned
    /// ("checkpoint witnessed" events), by origin.
    public func witnessedLogs() throws -> [String: CheckpointWitnessed] {
        var latest: [String: CheckpointWitnessed] = [:]
        for sequence in try sequences(of: .checkpointWitnessed) {
            guard case .checkpointWitnessed(let body) = try eventAsLogged(sequence)?.body else { continue }
            latest[body.origin] = body
        }
        return latest
    }
}
