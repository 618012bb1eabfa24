import Basics
import Ledger
import LogEngine

/// The value of a `migrated_order` entry: the spans of sequences during which the user was
/// listed under that key, as 16-byte pairs (u64 added ‖ u64 removed, 0 while still listed).
///
/// A user's order key rarely changes (a merge can move it), so most values hold one pair.
enum MigratedOrder {
    /// Whether the spans include the picture after event `sequence`.
    static func contains(_ value: UnsafeRawBufferPointer, _ sequence: UInt64) throws -> Bool {
        try stride(from: 0, to: value.count - 15, by: 16).contains { offset in
            let added = try BigEndian.uint64(value, at: offset)
            let removed = try BigEndian.uint64(value, at: offset + 8)
            return added <= sequence && (removed == 0 || sequence < removed)
        }
    }

    /// `value` with a span opened at `sequence` (or the span closed at that same event reopened).
    static func opening(_ value: [UInt8], at sequence: UInt64) throws -> [UInt8] {
        var value = value
        if value.count >= 16, try BigEndian.uint64(value, at: value.count - 8) == sequence {
            value.replaceSubrange((value.count - 8)..., with: BigEndian.bytes(0))
            return value
        }
        BigEndian.append(sequence, to: &value)
        BigEndian.append(0, to: &value)
        return value
    }

    /// `value` with its open span closed at `sequence`; a span opened by that same event is
    /// removed instead. Empty when nothing is left.
    static func closing(_ value: [UInt8], at sequence: UInt64) throws -> [UInt8] {
        var value = value
        guard value.count >= 16, try BigEndian.uint64(value, at: value.count - 8) == 0 else { return value }
        if try BigEndian.uint64(value, at: value.count - 16) == sequence {
            value.removeLast(16)
        } else {
            value.replaceSubrange((value.count - 8)..., with: BigEndian.bytes(sequence))
        }
        return value
    }

    /// The time a done user is listed by in `query migrated`: when it migrated (or, lacking
    /// that, its last attempt); nil for a user not done.
    static func time(of user: UserState) -> Timestamp? {
        guard user.status.isDone else { return nil }
        return user.migratedAt ?? user.lastAttemptAt ?? Timestamp(microseconds: 0)
    }
}

/// A fold's store that keeps `migrated_order` as users' listing times change.
protocol MigratedOrderStore {
    /// A `migrated_order` entry's value (empty when there is none).
    func orderValue(_ key: [UInt8]) throws -> [UInt8]
    /// Writes a `migrated_order` entry's value, deleting the entry when it is empty.
    func writeOrder(_ key: [UInt8], _ value: [UInt8], at sequence: UInt64) throws
}

extension MigratedOrderStore {
    /// Moves a user's `migrated_order` entry when the time it is listed by changes.
    func reorder(_ user: UInt64, from old: Timestamp?, to new: Timestamp?, at sequence: UInt64) throws {
        guard old != new else { return }
        if let old {
            let key = ProjectionDatabases.orderKey(old, user)
            try writeOrder(key, MigratedOrder.closing(try orderValue(key), at: sequence), at: sequence)
        }
        if let new {
            let key = ProjectionDatabases.orderKey(new, user)
            try writeOrder(key, MigratedOrder.opening(try orderValue(key), at: sequence), at: sequence)
        }
    }
}
