extension LogView {
    /// The Merkle tree's right edge as of the last commit.
    public func merkleFrontier() throws -> MerkleFrontier {
        try LedgerSchema.merkleKey.withUnsafeBytes { key in
            guard let raw = try transaction.get(schema.meta, key: key) else { return MerkleFrontier() }
            guard let frontier = MerkleFrontier(encoded: raw) else {
                throw LedgerError(.malformedRecord, "meta.merkle has \(raw.count) bytes, which no tree size explains")
            }
            return frontier
        }
    }

    /// The leaf hash of event `sequence` (leaf index `sequence - 1`): SHA-256(0x00 ‖ event JSON).
    public func leafHash(_ sequence: UInt64) throws -> [UInt8] {
        guard let raw = try record(sequence), raw.count > 32 else {
            throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log")
        }
        return MerkleHash.leaf(storedRecord: raw)
    }

    /// RFC 9162's MTH over leaves `range` (leaf indices), from stored nodes where it can.
    ///
    /// Only ranges the RFC's algorithms ask for are supported: each starts on a multiple of
    /// the largest power of two not above its length, so every perfect piece is a tree node.
    public func subtreeHash(_ range: Range<UInt64>) throws -> [UInt8] {
        let count = range.upperBound - range.lowerBound
        guard count > 0 else { return MerkleHash.emptyTree }
        if count == 1 { return try leafHash(range.lowerBound + 1) }
        if count.nonzeroBitCount == 1, range.lowerBound % count == 0 {
            let level = count.trailingZeroBitCount
            if level >= MerkleFrontier.lowestStoredLevel {
                let key = LedgerSchema.merkleNodeKey(level: level, index: range.lowerBound >> UInt64(level))
                guard let node = try transaction.get(schema.merkle, key: key), node.count == 32 else {
                    throw LedgerError(.malformedRecord, "the Merkle node over leaves \(range.lowerBound)..<\(range.upperBound) is missing")
                }
                return node
            }
        }
        let split = range.lowerBound + MerkleHash.split(count)
        return MerkleHash.node(try subtreeHash(range.lowerBound..<split), try subtreeHash(split..<range.upperBound))
    }

    /// RFC 9162 §2.1.3.1: the audit path of leaf `index` in the tree of the first `size` leaves.
    public func inclusionPath(leaf index: UInt64, treeSize size: UInt64) throws -> [[UInt8]] {
        guard index < size else { throw LedgerError(.invalidEvent, "leaf \(index) is not in a tree of \(size) leaves") }
        var path: [[UInt8]] = []
        var range: Range<UInt64> = 0..<size
        while range.upperBound - range.lowerBound > 1 {
            let split = range.lowerBound + MerkleHash.split(range.upperBound - range.lowerBound)
            if index < split {
                path.append(try subtreeHash(split..<range.upperBound))
                range = range.lowerBound..<split
            } else {
                path.append(try subtreeHash(range.lowerBound..<split))
                range = split..<range.upperBound
            }
        }
        return path.reversed()
    }

    /// RFC 9162 §2.1.4.1: the consistency proof from the tree of `old` leaves to the tree of
    /// `new` leaves; a ``LedgerError`` unless 0 < old ≤ new (an empty tree proves nothing).
    public func consistencyProof(from old: UInt64, to new: UInt64) throws -> [[UInt8]] {
        guard old > 0, old <= new else {
            throw LedgerError(.invalidEvent, "no consistency proof leads from a tree of \(old) leaves to one of \(new)")
        }
        var proof: [[UInt8]] = []
        var range: Range<UInt64> = 0..<new
        var m = old
        var whole = true
        while true {
            let n = range.upperBound - range.lowerBound
            if m == n {
                if !whole { proof.append(try subtreeHash(range)) }
                break
            }
            let k = MerkleHash.split(n)
            if m <= k {
                proof.append(try subtreeHash((range.lowerBound + k)..<range.upperBound))
                range = range.lowerBound..<(range.lowerBound + k)
            } else {
                proof.append(try subtreeHash(range.lowerBound..<(range.lowerBound + k)))
                range = (range.lowerBound + k)..<range.upperBound
                m -= k
                whole = false
            }
        }
        return proof.reversed()
    }
}
