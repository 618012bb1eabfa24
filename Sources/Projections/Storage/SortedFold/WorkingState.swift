import Ledger

/// What a bulk fold reads back as it folds the log: each user's current record and the user
/// each identifier names, in memory made for it (``WorkingMemory``) rather than a B-tree.
///
/// - **Current records**: user keys are dense numbers handed out in log order, so user `k`'s
///   place is entry `k` of an array of offsets into an arena holding each user's current
///   `user_versions` value and its sequence, encoded once (the same bytes go to the history).
///   A record that grows past its slot moves to the arena's end; the arena is compacted once
///   its garbage passes what it holds.
/// - **Identifiers**: an open-addressing table of 64-bit hashes of an identifier's index key,
///   each with the user key it was linked to, 16 bytes an entry. A hash names candidates only:
///   a candidate is the identifier's user when that user's current record holds the identifier
///   (the fold keeps the first identifier of each kind in a user's record). The few links a
///   record cannot confirm (a user's second identifier of one kind, identifiers of users
///   merged away) are kept whole in a map beside, which is asked first.
///
/// Cost: about 16 + record bytes × 1.125 per user for the records, 8 for the user's place,
/// and 20 to 40 bytes per identifier (16-byte entries at a load of two fifths to four fifths),
/// about 300 bytes a user on a realistic ledger (``SortedFold/bytesPerUser``).
final class WorkingState {
    private let memory: WorkingMemory
    /// Offset of user `k`'s slot in the arena (8 bytes each, entry `k`); 0: no record.
    private let offsets: WorkingMemory.Region
    /// The user keys handed out so far (the highest).
    private(set) var users: UInt64 = 0
    /// Slots: capacity (u32) ‖ length (u32) ‖ sequence (u64) ‖ the record's value bytes.
    private var arena: WorkingMemory.Region
    private var arenaUsed = 16
    private var garbage = 0
    /// Entries: hash (u64) ‖ user key (u64); a hash of 0 is an empty entry.
    private var table: WorkingMemory.Region
    private var tableEntries = 0
    /// Links no record confirms: the identifier's index key → the user key.
    private var unconfirmed: [[UInt8]: UInt64] = [:]

    init(memory: WorkingMemory) throws {
        self.memory = memory
        offsets = try memory.region(capacity: 1 << 16)
        arena = try memory.region(capacity: 1 << 20)
        table = try memory.region(capacity: 1 << 16)
    }

    /// Bytes the state takes, in memory and spilled.
    var bytes: Int { offsets.capacity + arena.capacity + table.capacity }

    // MARK: Records

    /// Hands out the next user key.
    func newUser() throws -> UInt64 {
        users += 1
        if Int(users + 1) * 8 > offsets.capacity { try offsets.grow(to: Int(users + 1) * 8, preferring: offsets.capacity + offsets.capacity / 4) }
        return users
    }

    /// User `key`'s current record: its value and sequence, valid until the state changes; nil
    /// for a key with none (merged away, or never given).
    func record(_ key: UInt64) -> (value: UnsafeRawBufferPointer, sequence: UInt64)? {
        guard key >= 1, key <= users, let offset = slot(of: key) else { return nil }
        let base = arena.base! + offset
        let length = Int(base.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        return (UnsafeRawBufferPointer(start: base + 16, count: length), base.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    private func slot(of key: UInt64) -> Int? {
        let offset = offsets.base!.loadUnaligned(fromByteOffset: Int(key) * 8, as: UInt64.self)
        return offset == 0 ? nil : Int(offset)
    }

    private func setSlot(_ key: UInt64, _ offset: Int) {
        offsets.base!.storeBytes(of: UInt64(offset), toByteOffset: Int(key) * 8, as: UInt64.self)
    }

    /// Sets user `key`'s current record: in its slot when it fits, else in a new one.
    func setRecord(_ key: UInt64, value: [UInt8], sequence: UInt64) throws {
        if let offset = slot(of: key), Int(arena.base!.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) >= value.count {
            write(value, sequence: sequence, at: offset)
            return
        }
        if let old = slot(of: key) { garbage += 16 + Int(arena.base!.loadUnaligned(fromByteOffset: old, as: UInt32.self)) }
        // Room to grow by an eighth in place: a user's record grows by a few bytes an event.
        let capacity = (value.count + value.count / 8 + 15) & ~15
        if arenaUsed + 16 + capacity > arena.capacity { try makeRoom(for: 16 + capacity) }
        let offset = arenaUsed
        arena.base!.storeBytes(of: UInt32(capacity), toByteOffset: offset, as: UInt32.self)
        write(value, sequence: sequence, at: offset)
        arenaUsed += 16 + capacity
        setSlot(key, offset)
    }

    private func write(_ value: [UInt8], sequence: UInt64, at offset: Int) {
        let base = arena.base! + offset
        base.storeBytes(of: UInt32(value.count), toByteOffset: 4, as: UInt32.self)
        base.storeBytes(of: sequence, toByteOffset: 8, as: UInt64.self)
        value.withUnsafeBytes { (base + 16).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Removes user `key`'s record (merged into another user).
    func removeRecord(_ key: UInt64) {
        guard let offset = slot(of: key) else { return }
        garbage += 16 + Int(arena.base!.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        setSlot(key, 0)
    }

    /// Room for `bytes` more at the arena's end: the live slots moved down over the garbage
    /// once it is most of the arena (in place, in the order of their offsets), otherwise the
    /// arena grown by a quarter, or as far as the budget allows. Reclaiming sorts a list of the
    /// live slots, 16 bytes a user, held only while it runs and outside the budget.
    private func makeRoom(for bytes: Int) throws {
        if garbage > arenaUsed / 2 {
            var live: [(offset: Int, key: UInt64)] = []
            live.reserveCapacity(Int(users))
            for key in stride(from: UInt64(1), through: users, by: 1) {
                if let offset = slot(of: key) { live.append((offset, key)) }
            }
            live.sort { $0.offset < $1.offset }
            var used = 16
            for (offset, key) in live {
                let size = 16 + Int(arena.base!.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                // A move down over garbage may overlap the slot's old bytes: copyMemory is a memmove.
                if offset != used { (arena.base! + used).copyMemory(from: arena.base! + offset, byteCount: size) }
                setSlot(key, used)
                used += size
            }
            arenaUsed = used
            garbage = 0
        }
        if arenaUsed + bytes > arena.capacity { try arena.grow(to: arenaUsed + bytes, preferring: arena.capacity + arena.capacity / 4) }
    }

    // MARK: Identifiers

    /// The user `identifier` was last linked to (even one merged away since), or nil; a user
    /// whose record holds the identifier is asked of `holds`.
    func userKey(for identifier: [UInt8], holds: (UInt64) throws -> Bool) rethrows -> UInt64? {
        if let key = unconfirmed[identifier] { return key }
        let hash = WorkingState.hash(identifier)
        let mask = table.capacity / 16 - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = table.base! + index * 16
            let stored = entry.loadUnaligned(as: UInt64.self)
            if stored == 0 { return nil }
            if stored == hash {
                let key = entry.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                if try holds(key) { return key }
            }
            index = (index + 1) & mask
        }
    }

    /// Links `identifier` to user `key`: through the table when `confirmed` (the user's
    /// record holds it), else whole in the map beside.
    func link(_ identifier: [UInt8], to key: UInt64, confirmed: Bool) throws {
        guard confirmed else {
            unconfirmed[identifier] = key
            return
        }
        unconfirmed[identifier] = nil
        if (tableEntries + 1) * 5 > (table.capacity / 16) * 4 { try growTable() }
        insert(WorkingState.hash(identifier), key)
        tableEntries += 1
    }

    private func insert(_ hash: UInt64, _ key: UInt64) {
        let mask = table.capacity / 16 - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while table.base!.loadUnaligned(fromByteOffset: index * 16, as: UInt64.self) != 0 { index = (index + 1) & mask }
        table.base!.storeBytes(of: hash, toByteOffset: index * 16, as: UInt64.self)
        table.base!.storeBytes(of: key, toByteOffset: index * 16 + 8, as: UInt64.self)
    }

    private func growTable() throws {
        let old = table
        table = try memory.region(capacity: old.capacity * 2)
        for index in 0..<(old.capacity / 16) {
            let hash = old.base!.loadUnaligned(fromByteOffset: index * 16, as: UInt64.self)
            if hash != 0 { insert(hash, old.base!.loadUnaligned(fromByteOffset: index * 16 + 8, as: UInt64.self)) }
        }
        old.release()
    }

    /// A 64-bit hash of an identifier's index key (FNV-1a, then mixed), never 0.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        h ^= h >> 33
        h &*= 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        return h == 0 ? 1 : h
    }

    /// Gives the memory and files back.
    func release() {
        offsets.release()
        arena.release()
        table.release()
        unconfirmed = [:]
    }
}
