import LMDB
import Ledger
import LogEngine

/// One identifier and the user it names within a picture of the projections.
public struct LinkedUser: Sendable, Equatable {
    /// The identifier's value.
    public let value: String
    /// The first event within the picture that linked it (for a `transfer_sub` on team A's
    /// side: its "transfer ID generated").
    public let firstSequence: UInt64
    public let user: UserState

    public init(value: String, firstSequence: UInt64, user: UserState) {
        self.value = value
        self.firstSequence = firstSequence
        self.user = user
    }
}

/// The users named by identifiers of one kind, one at a time in the identifiers' byte order,
/// so two ledgers' can be walked side by side (a merge join).
public protocol LinkedUsers: AnyObject {
    /// The next identifier with a link within the picture, or nil after the last.
    func next() throws -> LinkedUser?
}

/// ``LinkedUsers`` from a list already in the identifiers' byte order (team A's packages'
/// rows, sorted; a test's reference).
public final class LinkedUserList: LinkedUsers {
    private var links: ArraySlice<LinkedUser>

    public init(_ links: [LinkedUser]) { self.links = links[...] }

    public func next() throws -> LinkedUser? { links.popFirst() }
}

/// ``LinkedUsers`` read from `user_links` through a cursor: memory does not grow with the ledger.
final class LinkCursor: LinkedUsers {
    private let links: Cursor
    private let versions: Cursor
    private let tag: UInt8
    private let limit: UInt64
    private var entry: Cursor.Entry?
    private var started = false

    init(links: Cursor, versions: Cursor, kind: IdentifierKind, limit: UInt64) {
        self.links = links
        self.versions = versions
        self.tag = kind.tag
        self.limit = limit
    }

    func next() throws -> LinkedUser? {
        if !started {
            started = true
            entry = try links.seek(atLeast: [tag])
        }
        while let (key, _) = entry, key.first == tag {
            guard key.count > 9 else {
                entry = try links.next()
                continue
            }
            // A key is the tag, the value's UTF-8, a 0 byte, then the linking event's sequence;
            // the first entry of a value always belongs to its group, so each pass moves on.
            let value = Array(key[1..<(key.count - 9)])
            var first: UInt64?
            var userKey: UInt64?
            while let (key, stored) = entry, key.count == value.count + 10, key[0] == tag, key[1..<(key.count - 9)].elementsEqual(value) {
                let sequence = try BigEndian.uint64(key, at: key.count - 8)
                if key[key.count - 9] == 0, sequence <= limit {
                    first = first ?? sequence
                    userKey = try BigEndian.uint64(stored)
                }
                entry = try links.next()
            }
            if let first, let userKey, let user = try user(userKey) {
                return LinkedUser(value: String(decoding: value, as: UTF8.self), firstSequence: first, user: user)
            }
        }
        return nil
    }

    /// User `key` as of the picture.
    private func user(_ key: UInt64) throws -> UserState? {
        guard let (found, value) = try versions.seek(atMost: ProjectionDatabases.versionKey(key, limit)),
            try BigEndian.uint64(found) == key, !value.isEmpty
        else { return nil }
        return try UserStateCodec.decode(key: found, value: value)
    }
}
