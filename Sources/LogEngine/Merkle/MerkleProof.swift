/// Checks RFC 9162 inclusion and consistency proofs, as any auditor's code would.
public enum MerkleProof {
    /// RFC 9162 §2.1.3.2: whether `path` proves `leafHash` is leaf `index` of the tree of
    /// `size` leaves whose head is `root`.
    public static func verifyInclusion(leafHash: [UInt8], index: UInt64, treeSize size: UInt64, path: [[UInt8]], root: [UInt8]) -> Bool {
        self.root(leafHash: leafHash, index: index, treeSize: size, path: path) == root
    }

    /// The tree head `path` leads to from `leafHash` as leaf `index` of a tree of `size`
    /// leaves; nil when the path does not have the length such a tree gives.
    public static func root(leafHash: [UInt8], index: UInt64, treeSize size: UInt64, path: [[UInt8]]) -> [UInt8]? {
        guard index < size else { return nil }
        var fn = index
        var sn = size - 1
        var hash = leafHash
        for sibling in path {
            guard sn > 0 else { return nil }
            if fn & 1 == 1 || fn == sn {
                hash = MerkleHash.node(sibling, hash)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                hash = MerkleHash.node(hash, sibling)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 ? hash : nil
    }

    /// RFC 9162 §2.1.4.2: whether `proof` shows the tree of `newSize` leaves with head
    /// `newRoot` extends the tree of `oldSize` leaves with head `oldRoot`.
    public static func verifyConsistency(oldSize: UInt64, oldRoot: [UInt8], newSize: UInt64, newRoot: [UInt8], proof: [[UInt8]]) -> Bool {
        guard oldSize > 0, oldSize <= newSize else { return false }
        if oldSize == newSize { return proof.isEmpty && oldRoot == newRoot }
        guard !proof.isEmpty else { return false }
        var path = proof
        if oldSize.nonzeroBitCount == 1 { path.insert(oldRoot, at: 0) }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var oldHash = path[0]
        var newHash = path[0]
        for node in path.dropFirst() {
            guard sn > 0 else { return false }
            if fn & 1 == 1 || fn == sn {
                oldHash = MerkleHash.node(node, oldHash)
                newHash = MerkleHash.node(node, newHash)
                while fn & 1 == 0 && fn != 0 {
                    fn >>= 1
                    sn >>= 1
                }
            } else {
                newHash = MerkleHash.node(newHash, node)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && oldHash == oldRoot && newHash == newRoot
    }
}
