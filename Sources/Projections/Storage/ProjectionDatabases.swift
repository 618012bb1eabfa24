import Basics
import LMDB
import Ledger
import LogEngine

/// The projection databases of one generation inside the ledger's environment (projection
/// layout 3) and the layout of their keys.
///
/// Every record is kept with the sequence number of the event that wrote it, so the same
/// databases answer "now" and "as of sequence S" (the newest record at or before S);
/// `schemas/ledger-format.md` documents every byte. A rebuild folds the log into the other
/// generation's databases while this one stays in use, then switches (``ProjectionGenerations``).
public struct ProjectionDatabases: Sendable {
    /// The layout written under `projection_state["layout"]`: 3, whose user records keep when
    /// each address was recorded and what `apply` did to each column. A ledger of layout 2 has
    /// its projections loaded again by its first writable open (``UserProjection/attach(to:)``).
    static let layout: UInt8 = 3

    /// User key ‖ sequence → ``UserState`` after that event (empty: merged into another user).
    public let userVersions: Database
    /// Identifier tag ‖ value ‖ 0x00 ‖ sequence → the user key it names from that event on.
    public let userLinks: Database
    /// Migration order (µs, offset binary) ‖ user key → (added, removed) sequence pairs.
    public let migratedOrder: Database
    /// Sequence of a "transfer accepted" event → the window it set.
    public let windows: Database
    /// This generation's `checkpoint` and `next_user_key` (for even generations, the root
    /// `projection_state`, which also holds `layout`, `generation` and `rebuilding`).
    public let state: Database
    /// The generation these databases belong to (of the same parity as the one they were opened for).
    public internal(set) var generation: UInt64

    /// The databases of even generations (0, 2, …); odd ones add the suffix `.1`.
    static let names = ["user_versions", "user_links", "migrated_order", "windows", "projection_state"]
    /// The database holding `layout`, `generation` and `rebuilding`.
    static let rootName = "projection_state"

    /// The names of generation `generation`'s databases.
    static func names(generation: UInt64) -> [String] {
        generation % 2 == 0 ? names : names.map { $0 + ".1" }
    }

    /// The databases of projection layout 1, dropped when a ledger is upgraded. Layout 2 keeps
    /// its checkpoint under another name, so a binary from before layout 2 that opens the
    /// ledger folds into its own databases and cannot move layout 2's checkpoint.
    static let layout1Names = ["users", "user_ids", "projection_meta"]

    static let layoutKey = Array("layout".utf8)
    static let checkpointKey = Array("checkpoint".utf8)
    static let nextUserKey = Array("next_user_key".utf8)
    /// The generation in use (absent: 0).
    static let generationKey = Array("generation".utf8)
    /// While a rebuild runs: the generation it folds into.
    static let rebuildingKey = Array("rebuilding".utf8)
    /// While a rebuild loads its generation whole: 16 random bytes naming the process loading it.
    static let loaderKey = Array("loader".utf8)

    /// Opens generation `generation`'s databases in `transaction`, creating them when asked.
    static func open(generation: UInt64, in transaction: ReadTransaction, create: Bool) throws -> ProjectionDatabases {
        func database(_ name: String) throws -> Database {
            try transaction.openDatabase(generation % 2 == 0 ? name : name + ".1", create: create)
        }
        return ProjectionDatabases(
            userVersions: try database("user_versions"), userLinks: try database("user_links"),
            migratedOrder: try database("migrated_order"), windows: try database("windows"),
            state: try database(rootName), generation: generation)
    }

    /// The folded data, without the state: what a rebuild empties and a switch drops.
    var data: [Database] { ProjectionTable.allCases.map(database) }

    /// The database holding `table`.
    func database(_ table: ProjectionTable) -> Database {
        switch table {
        case .userVersions: userVersions
        case .userLinks: userLinks
        case .migratedOrder: migratedOrder
        case .windows: windows
        }
    }

    /// `user_versions` key of `user` as written by event `sequence`.
    static func versionKey(_ user: UInt64, _ sequence: UInt64) -> [UInt8] {
        var key = BigEndian.bytes(user)
        BigEndian.append(sequence, to: &key)
        return key
    }

    /// `user_links` key of `identifier` as linked by event `sequence`.
    static func linkKey(_ identifier: Identifier, _ sequence: UInt64) -> [UInt8] {
        var key = identifier.indexKey
        key.append(0)
        BigEndian.append(sequence, to: &key)
        return key
    }

    /// `migrated_order` key: the time a done user is listed by, then its key.
    static func orderKey(_ time: Timestamp, _ user: UInt64) -> [UInt8] {
        var key = BigEndian.bytes(UInt64(bitPattern: time.microseconds) ^ (1 << 63))
        BigEndian.append(user, to: &key)
        return key
    }
}

/// The databases of folded data in one generation, in the order a load writes them.
enum ProjectionTable: UInt8, CaseIterable, Sendable {
    case userVersions, userLinks, migratedOrder, windows

    /// The table numbered `number` in a sorted run; a number no run is written with is a
    /// damaged run file.
    init(_ number: UInt8) throws {
        guard let table = ProjectionTable(rawValue: number) else {
            throw LedgerError(.file, "a sorted run names table \(number), which no fold writes: its file is damaged")
        }
        self = table
    }

    /// The database's name in the even generation.
    var name: String {
        switch self {
        case .userVersions: "user_versions"
        case .userLinks: "user_links"
        case .migratedOrder: "migrated_order"
        case .windows: "windows"
        }
    }
}
