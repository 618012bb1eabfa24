import Basics
import ExitStatuses

#if canImport(Glibc)
import Glibc
#endif

/// A directory holding the log as C2SP tlog-tiles (docs/tiles.md): `checkpoint`, the hash
/// tiles and, when asked for, the entry bundles, for anyone to compute every inclusion and
/// consistency proof with tools of their own.
///
/// ``publish(_:entries:)`` brings it up to the ledger's latest signed checkpoint, so the
/// directory is always some checkpoint's tree, whatever is being appended meanwhile. Each run
/// writes only what is new since the directory's `checkpoint`: the tiles it completes and the
/// partial tiles of every checkpoint signed since (a partial tile is never replaced, only
/// joined by wider ones and then the full tile), having compared the previous run's partial
/// tiles with the ledger's tree now. Every file appears whole: the new files are
/// written in `.staging/`, flushed to disk together, then renamed into place, and `checkpoint`
/// last; a run killed at any moment, or cut off by a power failure, leaves the directory as the
/// previous run left it plus whole tiles nobody needs yet.
public struct TileDirectory: Sendable {
    /// The directory: the log's tlog-tiles prefix.
    public let path: String

    /// The longest entry an entry bundle can hold: its length is a big-endian 16-bit number.
    public static let longestEntry = Int(UInt16.max)

    public init(path: String) {
        self.path = path
    }

    /// What a publication wrote.
    public struct Publication: Sendable {
        /// The checkpoint the directory now serves, and the tree size it served before (0: none).
        public var checkpoint: Checkpoint
        public var previousSize: UInt64
        /// Hash tiles written, full and partial, and entry bundles.
        public var fullTiles = 0
        public var partialTiles = 0
        public var entryBundles = 0
        /// The first event too long for an entry bundle, when entries were asked for and one
        /// was found: bundles stop before its bundle.
        public var overlongEntry: (sequence: UInt64, bytes: Int)?
    }

    /// Why a directory could not be brought up to date.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public enum Kind: Sendable {
            /// The ledger has no signed checkpoint to publish.
            case noCheckpoint
            /// The directory serves a checkpoint this ledger did not sign, or one it does not extend,
            /// or a file in it differs from the log.
            case doesNotHold
        }
        public let kind: Kind
        public let description: String
    }

    /// Brings the directory up to the ledger's latest signed checkpoint: the hash tiles (level 0
    /// from every new event, hashed as `verify` does; the levels above from the stored tree) and,
    /// with `entries`, the entry bundles. Reads the ledger only.
    public func publish(_ ledger: some CheckpointedLog, entries: Bool) throws -> Publication {
        guard let checkpoint = try ledger.latestCheckpoint() else {
            throw Refusal(
                kind: .noCheckpoint,
                description:
                    "no checkpoint has been signed for \(ledger.directory); run `\(ShellWord.handover("checkpoint", ledger: ledger.directory))` first"
            )
        }
        let key = try ledger.verifierKey()
        let files = TileFiles(root: path)
        try files.prepare()
        let previous = try servedCheckpoint(key: key.publicKey, origin: checkpoint.origin)
        if let previous, previous.treeSize > checkpoint.treeSize {
            throw Refusal(
                kind: .doesNotHold,
                description:
                    "\(path)/checkpoint serves \(counted(previous.treeSize, "event")), more than this ledger's latest checkpoint of \(checkpoint.treeSize): it is not this copy of the log"
            )
        }
        var publication = Publication(checkpoint: checkpoint, previousSize: previous?.treeSize ?? 0)
        try ledger.read { view in
            if let previous, try view.subtreeHash(0..<previous.treeSize) != previous.rootHash {
                throw Refusal(
                    kind: .doesNotHold,
                    description:
                        "\(path)/checkpoint is of a tree of \(previous.treeSize) events this ledger does not hold: the log differs from what was published"
                )
            }
            guard try view.subtreeHash(0..<checkpoint.treeSize) == checkpoint.rootHash else {
                throw Refusal(
                    kind: .doesNotHold,
                    description:
                        "the ledger's Merkle tree over its first \(checkpoint.treeSize) events is not its latest checkpoint's root: the log was changed (run `handover verify`)"
                )
            }
            let entriesFrom = entries ? try firstMissingBundle(files, before: publication.previousSize) : nil
            // Bundles written from further back (entries asked for the first time) need the
            // partial bundles of the sizes before too.
            let after = min(publication.previousSize, entriesFrom ?? .max)
            var sizes = try view.checkpointSizes(after: after, through: checkpoint.treeSize)
            // The widest partial tiles published before are made again and compared with the
            // files there (by the full tile, when it replaces one): a node already published that
            // the stored tree now holds otherwise (its parent changed with it, so the checks
            // against the events and the nodes below pass) is refused rather than published in a
            // wider tile beside the old one.
            let previousSize = publication.previousSize
            if previousSize > 0, !sizes.contains(previousSize) {
                sizes.insert(previousSize, at: sizes.firstIndex { $0 > previousSize } ?? sizes.count)
            }
            var writer = TileWriter(files: files, sizes: sizes, size: checkpoint.treeSize)
            try writer.writeLevelZero(view: view, from: publication.previousSize, entriesFrom: entriesFrom)
            for level in TileID.levels(size: checkpoint.treeSize).dropFirst() {
                try writer.writeLevel(level, view: view, from: publication.previousSize)
            }
            (publication.fullTiles, publication.partialTiles, publication.entryBundles) = (writer.fullTiles, writer.partialTiles, writer.entryBundles)
            publication.overlongEntry = writer.overlongEntry
        }
        // Every tile the checkpoint needs reaches the disk before the checkpoint does.
        try files.publishStaged()
        try files.replaceCheckpoint(with: checkpoint.text)
        return publication
    }

    /// The checkpoint the directory serves, checked: signed by `key` for `origin`; nil when
    /// the directory has none yet.
    private func servedCheckpoint(key: [UInt8], origin: String) throws -> Checkpoint? {
        guard let bytes = try FileBytes.readIfPresent(path + "/checkpoint", limit: 1 << 16) else { return nil }
        guard let served = try? Checkpoint(parsing: String(decoding: bytes, as: UTF8.self)), served.origin == origin, served.isSigned(by: key)
        else {
            throw Refusal(
                kind: .doesNotHold, description: "\(path)/checkpoint is not a checkpoint this ledger signed: the directory holds another log's tiles")
        }
        return served
    }

    /// The tree size from which entry bundles are missing, at most `size`: bundles are written
    /// in order, so the present ones are those before the first missing one.
    private func firstMissingBundle(_ files: TileFiles, before size: UInt64) throws -> UInt64 {
        var (present, missing) = (UInt64(0), TileID.layout(level: 0, size: size).full)
        // Invariant: bundles 0..<present exist; bundle `missing` does not (or is past the size).
        while present < missing {
            let middle = present + (missing - present) / 2
            if files.exists(TileID(.entries, index: middle)) { present = middle + 1 } else { missing = middle }
        }
        return present * UInt64(TileID.fullWidth)
    }
}

extension TileDirectory.Refusal: ExitStatusDeciding {
    /// No checkpoint yet: usage; a directory that does not hold this ledger's tree: integrity.
    public var exitStatus: ExitStatus {
        switch kind {
        case .noCheckpoint: .usage
        case .doesNotHold: .integrity
        }
    }
}
