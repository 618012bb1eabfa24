import Foundation

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

    /// The largest checkpoint any witness cosigned, as a signed note: the ledger's own signature
    /// line, then each witness's cosignature of it in the order they were recorded; with those
    /// witnesses' verifier keys, in the same order. Nil before the first cosignature.
    public func cosignedCheckpoint() throws -> (note: SignedNote, witnesses: [WitnessKey])? {
        let all = try witnessCosignatures().map(\.body)
        guard let size = all.map(\.checkpoint.treeSize).max() else { return nil }
        let ofSize = all.filter { $0.checkpoint.treeSize == size }
        var note = try SignedNote(parsing: Array(try ofSize[0].checkpoint.checkpoint().text.utf8))
        var witnesses: [WitnessKey] = []
        for body in ofSize where !witnesses.contains(where: { $0.line == body.witnessKey }) {
            guard let blob = Data(base64Encoded: body.cosignature), blob.count > 4, let key = WitnessKey(verifierKey: body.witnessKey) else {
                throw LedgerError(.malformedRecord, "a witness-cosigned event's cosignature or key is not what it must be")
            }
            note.signatures.append(SignedNote.Signature(name: key.name, keyID: Array(blob.prefix(4)), bytes: Array(blob.dropFirst(4))))
            witnesses.append(key)
        }
        return (note, witnesses)
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
