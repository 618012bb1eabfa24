import Crypto
import LogEngine
import Testing

@testable import Ledger

/// The rows' Merkle tree: its leaves as the documents define them, its root and every row's
/// path as RFC 9162 checks them, and the property team B's receipt relies on: whole chunks of
/// 1,024 rows are subtrees of the package's tree.
@Suite struct RowTreeTests {
    private static func rows(_ count: Int) -> [[UInt8]] {
        (0..<count).map { Array("acct-\($0),t.\($0).transfer,\($0 + 1),\(String($0 * 7919, radix: 16))".utf8) }
    }

    /// RFC 9162's MTH written out over byte arrays, as an auditor's script would.
    private static func referenceRoot(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        if leaves.isEmpty { return Array(SHA256.hash(data: [UInt8]())) }
        if leaves.count == 1 { return leaves.first! }
        var k = 1
        while k * 2 < leaves.count { k *= 2 }
        let split = leaves.startIndex + k
        return Array(SHA256.hash(data: [0x01] + referenceRoot(leaves[..<split]) + referenceRoot(leaves[split...])))
    }

    @Test func leafIsTheTagLineThenTheRow() {
        let row = Array("a,b,1,00112233445566778899aabbccddeeff".utf8)
        for kind in RowTree.Kind.allCases {
            let expected = Array(SHA256.hash(data: [0x00] + Array("\(kind.rawValue)\n".utf8) + row))
            #expect(RowTree.leafHash(kind: kind, row: row).bytes == expected)
        }
        #expect(RowTree.leafHash(kind: .handoffRow, row: row).bytes != MerkleHash.leaf(row), "a row is not a log leaf")
    }

    @Test func everyRowsPathLeadsToTheRoot() {
        for size in 1...70 {
            let tree = RowTree(kind: .handoffRow, rows: Self.rows(size))
            let root = tree.root
            #expect(root.bytes == Self.referenceRoot(tree.leaves.map(\.bytes)[...]), "size \(size)")
            for index in 0..<size {
                let path = tree.path(of: index).map(\.bytes)
                let leaf = tree.leaves[index].bytes
                #expect(MerkleProof.root(leafHash: leaf, index: UInt64(index), treeSize: UInt64(size), path: path) == root.bytes)
                if let first = path.first {
                    var wrong = path
                    wrong[0] = Array(SHA256.hash(data: first))
                    #expect(MerkleProof.root(leafHash: leaf, index: UInt64(index), treeSize: UInt64(size), path: wrong) != root.bytes)
                    #expect(MerkleProof.root(leafHash: leaf, index: UInt64(index), treeSize: UInt64(size), path: Array(path.dropLast())) == nil)
                }
            }
        }
        #expect(RowTree(kind: .handoffRow, rows: []).root.bytes == MerkleHash.emptyTree)
    }

    @Test func wholeChunksOf1024AreSubtrees() {
        for size in [1, 1_023, 1_024, 1_025, 2_048, 3_000, 5_121] {
            let all = RowTree(kind: .handoffRow, rows: Self.rows(size))
            let chunkRoots = stride(from: 0, to: size, by: 1_024).map { start in
                RowTree(leaves: Array(all.leaves[start..<min(start + 1_024, size)])).root
            }
            #expect(RowTree(leaves: chunkRoots).root == all.root, "\(size) rows")
        }
    }
}
