/// One resource of the log served as C2SP tlog-tiles (docs/tiles.md): a tile of Merkle tree
/// hashes at `tile/<L>/<N>[.p/<W>]`, or an entry bundle at `tile/entries/<N>[.p/<W>]`.
///
/// The tile at level `L`, index `N`, holds up to 256 hashes, the `i`-th the tree hash of the
/// leaves `(N × 256 + i) × 256^L ..< (N × 256 + i + 1) × 256^L`; entry bundle `N` holds the
/// entries of the leaves of level-0 tile `N`. A full tile holds 256, a partial one 1 to 255.
public struct TileID: Hashable, Sendable, CustomStringConvertible {
    /// Hashes (or entries) in a full tile.
    public static let fullWidth = 256

    /// What the tile holds: tree hashes at a level (0 to 63), or entries.
    public enum Kind: Hashable, Sendable {
        case hashes(level: Int)
        case entries
    }

    public var kind: Kind
    public var index: UInt64
    /// How many hashes or entries it holds: ``fullWidth`` for a full tile.
    public var width: Int

    public init(_ kind: Kind, index: UInt64, width: Int = TileID.fullWidth) {
        precondition((1...TileID.fullWidth).contains(width), "a tile holds 1 to 256 hashes")
        self.kind = kind
        self.index = index
        self.width = width
    }

    /// Whether the tile holds 256 hashes or entries.
    public var isFull: Bool { width == TileID.fullWidth }

    /// The tile's path under the log's prefix: `tile/0/x001/x234/067.p/12`. The index is written
    /// in zero-padded groups of three digits, each but the last led by `x`.
    public var path: String {
        var groups: [String] = []
        var rest = index
        repeat {
            let group = String(rest % 1000)
            groups.append(String(repeating: "0", count: 3 - group.count) + group)
            rest /= 1000
        } while rest > 0
        let number = groups.reversed().enumerated().map { $0.offset == groups.count - 1 ? $0.element : "x" + $0.element }.joined(separator: "/")
        let level: String
        switch kind {
        case .hashes(let l): level = String(l)
        case .entries: level = "entries"
        }
        return "tile/\(level)/\(number)" + (isFull ? "" : ".p/\(width)")
    }

    public var description: String { path }

    /// The tile a path names, written exactly as ``path`` writes it (so no other spelling, and
    /// nothing outside `tile/`, is ever a tile): level 0 to 63 or `entries`, the index in groups
    /// of three digits, a partial width of 1 to 255. Nil for anything else.
    public init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "tile", parts.allSatisfy({ $0.utf8.count <= 8 }) else { return nil }
        let kind: Kind
        if parts[1] == "entries" {
            kind = .entries
        } else if let level = Int(parts[1]), (0...63).contains(level) {
            kind = .hashes(level: level)
        } else {
            return nil
        }
        var groups = Array(parts.dropFirst(2))
        var width = TileID.fullWidth
        // A partial tile: `<last group>.p/<width>`.
        if groups.count >= 2, groups[groups.count - 2].hasSuffix(".p") {
            guard let w = Int(groups[groups.count - 1]), (1..<TileID.fullWidth).contains(w) else { return nil }
            width = w
            groups[groups.count - 2] = groups[groups.count - 2].dropLast(2)
            groups.removeLast()
        }
        guard !groups.isEmpty, groups.count <= 7 else { return nil }
        var index: UInt64 = 0
        for (position, group) in groups.enumerated() {
            let digits = position == groups.count - 1 ? Substring(group) : (group.hasPrefix("x") ? group.dropFirst() : "")
            guard digits.count == 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let value = UInt64(digits) else { return nil }
            let (times, overflow) = index.multipliedReportingOverflow(by: 1000)
            guard !overflow, times <= UInt64.max - value else { return nil }
            index = times + value
        }
        self.init(kind, index: index, width: width)
        // One spelling per tile: leading zero groups, or a ".p" written another way, are not it.
        guard self.path == path else { return nil }
    }

    /// How a tree of `size` leaves is served at `level`: its number of full tiles, and the width
    /// of the partial tile after them (0: none). The level holds `size / 256^level` hashes.
    public static func layout(level: Int, size: UInt64) -> (full: UInt64, partialWidth: Int) {
        let hashes = hashCount(level: level, size: size)
        return (hashes / UInt64(fullWidth), Int(hashes % UInt64(fullWidth)))
    }

    /// How many hashes a tree of `size` leaves has at `level`: one for each 256^level leaves.
    public static func hashCount(level: Int, size: UInt64) -> UInt64 {
        level >= 8 ? 0 : size >> UInt64(8 * level)
    }

    /// The levels a tree of `size` leaves has tiles at: 0 up to the highest with a hash.
    public static func levels(size: UInt64) -> Range<Int> {
        var top = 0
        while hashCount(level: top + 1, size: size) > 0 { top += 1 }
        return 0..<(size == 0 ? 0 : top + 1)
    }
}
