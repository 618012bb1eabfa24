import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// One side of an evidence bundle made from the fuzzer's files: its events (each named by the
/// `seq` it carries), a checkpoint signed by the harness over a tree in which each event is
/// the leaf its `seq` names, and a valid proof for each; the manifest as the fuzzer wrote it.
///
/// The tree's other leaves are filler: the harness builds the smallest tree the checkpoint's
/// size allows (at most ``maximumTreeSize`` leaves), so the fuzzer chooses every byte the
/// checker reads except the signatures and the sibling hashes.
struct FuzzBundleSide {
    static let maximumTreeSize: UInt64 = 1024

    /// The files, relative to the side's directory.
    var files: [(String, [UInt8])] = []
    var origin = ""

    /// `checkpoint`: the fuzzer's checkpoint text (its origin, size and any time line are used);
    /// `manifest`: `manifest.json` as given; `events`: the event files' bytes.
    init(checkpoint: [UInt8], manifest: [UInt8], events: [[UInt8]], key: CheckpointKey) {
        let given = try? Checkpoint(parsing: String(decoding: checkpoint, as: UTF8.self))
        origin = given?.origin ?? FuzzSigning.origin(ofCheckpoint: String(decoding: checkpoint, as: UTF8.self))
        var bySequence: [UInt64: [UInt8]] = [:]
        for (position, event) in events.enumerated() {
            let seq = (try? JSONValue.parse(event))?["seq"]?.intValue.flatMap { $0 > 0 ? UInt64($0) : nil } ?? UInt64(position + 1)
            if bySequence[seq] == nil { bySequence[seq] = event }
        }
        let size = given?.treeSize ?? (bySequence.keys.max() ?? 0)
        var leaves: [[UInt8]]?
        if size > 0, size <= FuzzBundleSide.maximumTreeSize {
            let filler = MerkleHash.leaf([])
            leaves = (1...size).map { seq in bySequence[seq].map(MerkleHash.leaf) ?? filler }
        }
        let root = leaves.map { FuzzMerkle.root($0[...]) } ?? given?.rootHash ?? MerkleHash.emptyTree
        let signed = try? Checkpoint(origin: origin, treeSize: size, rootHash: root, time: given?.time, key: key)
        let checkpointText = signed?.text ?? String(decoding: checkpoint, as: UTF8.self)
        files.append(("verifier-key", Array((Checkpoint.verifierKey(name: origin, publicKey: key.publicKey) + "\n").utf8)))
        files.append(("checkpoint", Array(checkpointText.utf8)))
        files.append(("manifest.json", manifest))
        for (seq, event) in bySequence {
            files.append(("events/\(seq).json", event))
            let path = leaves.flatMap { seq <= UInt64($0.count) ? FuzzMerkle.path(Int(seq - 1), $0[...]) : nil } ?? []
            files.append(("proofs/\(seq).tlog-proof", Array(TlogProof(index: seq - 1, path: path, checkpointText: checkpointText).text.utf8)))
        }
        if bySequence.isEmpty { files += [("events/", []), ("proofs/", [])] }
    }
}

/// RFC 9162 tree heads and inclusion paths over a list of leaf hashes held in memory: the
/// harnesses' own means of making valid proofs for the checker to read.
enum FuzzMerkle {
    static func root(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
        if leaves.count == 1 { return leaves.first! }
        let k = split(leaves.count)
        return MerkleHash.node(root(leaves.prefix(k)), root(leaves.dropFirst(k)))
    }

    static func path(_ index: Int, _ leaves: ArraySlice<[UInt8]>) -> [[UInt8]] {
        if leaves.count <= 1 { return [] }
        let k = split(leaves.count)
        return index < k
            ? path(index, leaves.prefix(k)) + [root(leaves.dropFirst(k))]
            : path(index - k, leaves.dropFirst(k)) + [root(leaves.prefix(k))]
    }

    /// The largest power of two below `n` (n ≥ 2).
    private static func split(_ n: Int) -> Int {
        var k = 1
        while k * 2 < n { k *= 2 }
        return k
    }
}
