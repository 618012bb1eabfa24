/// Writes the tiles of one publication: from the tile the previous tree ended in up to the tree
/// of `size` leaves, each full tile once and, for a tile still partial at `size`, one partial
/// tile for each checkpoint's tree size in `sizes` that ends inside it.
package struct TileWriter {
    package let files: TileFiles
    /// The checkpoints' tree sizes to write partial tiles for (the previous publication's and
    /// those since, or since the first bundle missing), ascending; the last is `size`.
    package let sizes: [UInt64]
    package let size: UInt64
    private(set) var fullTiles = 0
    private(set) var partialTiles = 0
    private(set) var entryBundles = 0
    private(set) var overlongEntry: (sequence: UInt64, bytes: Int)?

    /// Level 0 from the events themselves, read in order and hashed (the stored tree keeps no
    /// node under 16 leaves), from the tile the tree of `previous` leaves ended in; with
    /// `entriesFrom`, the entry bundles from that leaf (a multiple of 256) too.
    package mutating func writeLevelZero(view: LogView, from previous: UInt64, entriesFrom: UInt64?) throws {
        let width = UInt64(TileID.fullWidth)
        let firstHashTile = previous / width
        var tile = min(firstHashTile, (entriesFrom ?? previous) / width)
        try view.transaction.withCursor(view.schema.log) { cursor in
            var entry = try cursor.seek(atLeast: LedgerSchema.logKey(tile * width + 1))
            while tile * width < size {
                let count = Int(min(width, size - tile * width))
                var leaves: [SHA256Hash] = []
                leaves.reserveCapacity(count)
                let bundled = entriesFrom.map { tile * width >= $0 } ?? false
                var bundle: [UInt8] = []
                var ends: [Int] = []
                for i in 0..<count {
                    let sequence = tile * width + UInt64(i) + 1
                    guard let (key, value) = entry, try BigEndian.uint64(key) == sequence else {
                        throw LedgerError(.malformedRecord, "event \(sequence) is missing from the log, which its checkpoint covers")
                    }
                    let json = try LogView.eventJSON(ofStoredRecord: value, sequence: sequence)
                    leaves.append(MerkleHash.leafHash(json))
                    if bundled, overlongEntry == nil {
                        if json.count > TileDirectory.longestEntry {
                            overlongEntry = (sequence, json.count)
                        } else {
                            bundle.append(UInt8(json.count >> 8))
                            bundle.append(UInt8(json.count & 0xFF))
                            bundle.append(contentsOf: json)
                            ends.append(bundle.count)
                        }
                    }
                    entry = try cursor.next()
                }
                // The events lead to the stored tree the levels above are read from, or the
                // tiles would not be one tree.
                let range = (tile * width)..<(tile * width + UInt64(count))
                if try RowTree(leaves: leaves).root.bytes != view.subtreeHash(range) {
                    throw LedgerError(
                        .malformedRecord,
                        "events \(range.lowerBound + 1) to \(range.upperBound) do not hash to the Merkle tree's node over them: the log was changed (run `handover verify`)"
                    )
                }
                if tile >= firstHashTile {
                    var hashes: [UInt8] = []
                    hashes.reserveCapacity(count * 32)
                    for leaf in leaves { leaf.withUnsafeBytes { hashes.append(contentsOf: $0) } }
                    try emit(.hashes(level: 0), index: tile, bytes: hashes, ends: (1...count).map { $0 * 32 }, level: 0)
                }
                if bundled, overlongEntry == nil {
                    try emit(.entries, index: tile, bytes: bundle, ends: ends, level: 0)
                }
                tile += 1
            }
        }
    }

    /// Level `level` (1 or more) from the stored tree: each hash is the node over 256^level
    /// leaves, from the tile the tree of `previous` leaves ended in.
    package mutating func writeLevel(_ level: Int, view: LogView, from previous: UInt64) throws {
        let width = UInt64(TileID.fullWidth)
        let span = UInt64(1) << UInt64(8 * level)
        let count = TileID.hashCount(level: level, size: size)
        var tile = TileID.hashCount(level: level, size: previous) / width
        while tile * width < count {
            let tileCount = Int(min(width, count - tile * width))
            var hashes: [UInt8] = []
            hashes.reserveCapacity(tileCount * 32)
            for i in 0..<UInt64(tileCount) {
                let first = (tile * width + i) * span
                let node = try view.subtreeHash(first..<(first + span))
                if level >= 2 { try checkNode(node, over: first..<(first + span), view: view) }
                hashes += node
            }
            try emit(.hashes(level: level), index: tile, bytes: hashes, ends: (1...tileCount).map { $0 * 32 }, level: level)
            tile += 1
        }
    }

    /// A reader of the tiles computes a hash of level 2 or above from the 256 hashes below it
    /// (level 1's are checked against the events by level 0): the stored node over `range` must
    /// be that tree, or the levels would not be one tree.
    private func checkNode(_ node: [UInt8], over range: Range<UInt64>, view: LogView) throws {
        let span = (range.upperBound - range.lowerBound) / UInt64(TileID.fullWidth)
        let below = try (0..<UInt64(TileID.fullWidth)).map { i in
            let first = range.lowerBound + i * span
            return try view.subtreeHash(first..<(first + span)).withUnsafeBytes { SHA256Hash($0)! }
        }
        if RowTree(leaves: below).root.bytes != node {
            throw LedgerError(
                .malformedRecord,
                "the Merkle tree's node over events \(range.lowerBound + 1) to \(range.upperBound) is not the tree of the nodes below it: the log's tree was changed (run `handover verify`)"
            )
        }
    }

    /// Writes tile `index` of `kind`, whose items (hashes or entries) at `size` are `bytes`,
    /// item `i` ending at `ends[i]`: whole when it holds 256, else as each checkpoint's tree saw
    /// it. A tile counts one item per 256^level leaves.
    private mutating func emit(_ kind: TileID.Kind, index: UInt64, bytes: [UInt8], ends: [Int], level: Int) throws {
        // The widths of the sizes whose tree ends inside this tile: 1 to 255 of its items.
        let first = index * UInt64(TileID.fullWidth)
        var (from, end) = (0, sizes.count)
        while from < end {
            let middle = (from + end) / 2
            if TileID.hashCount(level: level, size: sizes[middle]) <= first { from = middle + 1 } else { end = middle }
        }
        let widths = sizes[from...].prefix { TileID.hashCount(level: level, size: $0) < first + UInt64(TileID.fullWidth) }.map {
            Int(TileID.hashCount(level: level, size: $0) - first)
        }
        if ends.count == TileID.fullWidth {
            // The full tile stands for its partial ones: those published before are compared
            // with it, none is written.
            for width in widths { _ = try files.holds(TileID(kind, index: index, width: width), bytes[..<ends[width - 1]]) }
            if try files.stage(TileID(kind, index: index), bytes[...]) { count(kind, partial: false) }
            return
        }
        for width in widths {
            if try files.stage(TileID(kind, index: index, width: width), bytes[..<ends[width - 1]]) { count(kind, partial: true) }
        }
    }

    /// Counts one file written.
    private mutating func count(_ kind: TileID.Kind, partial: Bool) {
        if kind == .entries {
            entryBundles += 1
        } else if partial {
            partialTiles += 1
        } else {
            fullTiles += 1
        }
    }
}
