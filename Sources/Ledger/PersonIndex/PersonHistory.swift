import LogEngine

/// What the person index holds for one name: how many things of the log name it, and a hash
/// chain over them in log order (schemas/audit-evidence.md, "Person index").
///
/// Each thing is an event whose `identifiers` name it (or, for a package, a handoff event of
/// it), taken as the event's leaf hash in the log's tree, or a row of a batch event that names
/// it, taken as the row's leaf hash in the event's row tree; with its event's sequence number.
/// The chain starts at 32 zero bytes: `chain = SHA-256(chain ‖ seq (8 bytes, big-endian) ‖ leaf hash)`.
public struct PersonHistory: Equatable, Sendable {
    /// How many things name the name.
    public private(set) var count: UInt64
    /// The chain over them.
    public private(set) var chain: SHA256Hash

    /// No thing yet.
    public static let empty = PersonHistory(count: 0, chain: SHA256Hash([UInt8](repeating: 0, count: 32))!)

    public init(count: UInt64, chain: SHA256Hash) {
        self.count = count
        self.chain = chain
    }

    /// The history with the thing of event `sequence` whose leaf hash is `leaf` added after the others.
    public mutating func append(sequence: UInt64, leaf: SHA256Hash) {
        var bytes = chain.bytes
        BigEndian.append(sequence, to: &bytes)
        bytes += leaf.bytes
        chain = bytes.withUnsafeBytes { SHA256Hash(hashing: UnsafeRawBufferPointer(start: nil, count: 0), $0) }
        count += 1
    }

    /// `SHA-256(0x00 ‖ label ‖ count (8 bytes, big-endian) ‖ chain)`: the leaf of the name
    /// whose label is `label` in the index's prefix tree.
    public func leafHash(label: SHA256Hash) -> SHA256Hash {
        var bytes = label.bytes
        BigEndian.append(count, to: &bytes)
        bytes += chain.bytes
        return [UInt8(0x00)].withUnsafeBytes { prefix in bytes.withUnsafeBytes { SHA256Hash(hashing: prefix, $0) } }
    }

    /// The 40 bytes stored: count, then chain.
    var encoded: [UInt8] { BigEndian.bytes(count) + chain.bytes }

    /// The history stored as `bytes`; nil unless 40 bytes.
    init?(encoded bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 40, let count = try? BigEndian.uint64(bytes), let chain = SHA256Hash(UnsafeRawBufferPointer(rebasing: bytes[8...]))
        else {
            return nil
        }
        self.init(count: count, chain: chain)
    }
}
