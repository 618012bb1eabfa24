/// The stored checkpoints, as the log's `checkpoints` database keeps them (keyed by tree size).
extension LogView {
    /// The tree sizes of the stored checkpoints larger than `first` and at most `last`, ascending.
    package func checkpointSizes(after first: UInt64, through last: UInt64) throws -> [UInt64] {
        try transaction.withCursor(schema.checkpoints) { cursor in
            var sizes: [UInt64] = []
            var entry = try cursor.seek(atLeast: BigEndian.bytes(first + 1))
            while let (key, _) = entry {
                let size = try BigEndian.uint64(key)
                guard size <= last else { break }
                sizes.append(size)
                entry = try cursor.next()
            }
            return sizes
        }
    }
}
