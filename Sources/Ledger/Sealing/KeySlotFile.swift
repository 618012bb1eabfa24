import Basics
import Crypto
import Dispatch
import Foundation
import LogEngine
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The data keys themselves (`keys/slots`): fixed 64-byte slots written in place, so that
/// destroying a key overwrites its only copy. LMDB never holds key bytes: a page it frees
/// keeps its old contents until reused, which would leave a destroyed key readable.
///
/// A slot is key ID (16) ‖ key (32) ‖ the first 16 bytes of SHA-256(ID ‖ key); a destroyed
/// slot is 64 zero bytes. The checksum tells a slot being overwritten (torn read) from a
/// written one.
struct KeySlotFile: Sendable {
    static let name = "slots"
    static let slotSize = 64

    private let descriptor: Int32
    let path: String

    /// Opens (creating it, mode 0600, if missing) the slot file in the key store's directory;
    /// `readOnly`, opens it for reading only, and a missing file reads as slots all destroyed
    /// (a key store of layout 1 has none: its keys are in LMDB).
    init(directory: String, readOnly: Bool = false) throws {
        path = directory + "/" + KeySlotFile.name
        descriptor = readOnly ? open(path, O_RDONLY | O_CLOEXEC) : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 || (readOnly && errno == ENOENT) else { throw KeySlotFile.failure("open", path) }
    }

    /// Closes the file.
    func close() { if descriptor >= 0 { _ = Glibc.close(descriptor) } }

    /// Holds a shared lock on the file while the key store is open, so that an open that
    /// rewrites the store's LMDB file (``exclusively(_:)``) knows no other process uses it.
    func lockShared() throws {
        guard descriptor >= 0 else { return }
        guard flock(descriptor, LOCK_SH) == 0 else { throw KeySlotFile.failure("flock", path) }
    }

    /// Runs `body` if no other process holds the key store open, with the lock exclusive, and
    /// returns to the shared lock; returns false without running it otherwise.
    func exclusively(_ body: () throws -> Void) throws -> Bool {
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            // A failed conversion may have dropped the shared lock: take it again.
            try lockShared()
            return false
        }
        defer { flock(descriptor, LOCK_SH) }
        try body()
        return true
    }

    /// Writes a key to its slot; ``sync()`` makes it durable.
    func write(slot: UInt64, id: [UInt8], key: [UInt8]) throws {
        try put(KeySlotFile.encode(id: id, key: key), at: slot)
    }

    /// Overwrites `slots` with zeros and flushes them to disk.
    func destroy(_ slots: [UInt64]) throws {
        let zeros = [UInt8](repeating: 0, count: KeySlotFile.slotSize)
        for slot in slots { try put(zeros, at: slot) }
        try sync()
    }

    /// The key in `slot` if it is the key `id` names; nil when the slot was destroyed.
    func key(at slot: UInt64, id: [UInt8]) throws -> [UInt8]? {
        for _ in 0..<8 {
            let bytes = try read(slot)
            if bytes.allSatisfy({ $0 == 0 }) { return nil }
            if KeySlotFile.isWhole(bytes) {
                guard bytes[0..<16].elementsEqual(id) else {
                    throw LedgerError(.sealing, "\(path): slot \(slot) holds key \(Hex.encode(Array(bytes[0..<16]))), not \(Hex.encode(id))")
                }
                return Array(bytes[16..<48])
            }
            // Being overwritten by another process right now: read again.
            usleep(1_000)
        }
        throw LedgerError(.sealing, "\(path): slot \(slot) does not hold a well-formed key")
    }

    /// The raw bytes of `slot` (zeros past the end of the file).
    func read(_ slot: UInt64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: KeySlotFile.slotSize)
        guard descriptor >= 0 else { return bytes }
        let offset = try KeySlotFile.offset(of: slot, in: path)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, KeySlotFile.slotSize, offset) }
        guard count >= 0 else { throw KeySlotFile.failure("pread", path) }
        return bytes
    }

    static func encode(id: [UInt8], key: [UInt8]) -> [UInt8] {
        id + key + Array(SHA256.hash(data: id + key).prefix(16))
    }

    /// Whether the 64 bytes of a slot hold an ID and key whose checksum matches (no torn read).
    static func isWhole(_ bytes: [UInt8]) -> Bool {
        bytes.count == slotSize && SHA256.hash(data: bytes[0..<48]).withUnsafeBytes { $0.prefix(16).elementsEqual(bytes[48..<64]) }
    }

    /// The most slots a file may have: its offsets stay far below what a file offset holds.
    static let maximumSlots: UInt64 = 1 << 40

    /// Where `slot` starts in the file; a slot number no key store gives (a stored number
    /// altered in a copy) is refused, not turned into an offset.
    private static func offset(of slot: UInt64, in path: String) throws -> off_t {
        guard slot < maximumSlots else {
            throw LedgerError(.malformedRecord, "\(path): slot \(slot) is beyond any key store's \(maximumSlots) slots")
        }
        return off_t(slot) * off_t(slotSize)
    }

    private func put(_ bytes: [UInt8], at slot: UInt64) throws {
        let offset = try KeySlotFile.offset(of: slot, in: path)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
        guard written == bytes.count else { throw KeySlotFile.failure("pwrite", path) }
    }

    /// Starts flushing the slots written so far on another thread, so that the flush and a
    /// commit of the store's LMDB file can overlap; the returned function waits for the flush
    /// and throws its error.
    func startSync() -> () throws -> Void {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<(any Error)?>(nil)
        DispatchQueue.global().async {
            do { try self.sync() } catch { outcome.withLock { $0 = error } }
            done.signal()
        }
        return {
            done.wait()
            if let error = outcome.withLock({ $0 }) { throw error }
        }
    }

    /// Flushes the slots written so far to disk.
    func sync() throws {
        guard fdatasync(descriptor) == 0 else { throw KeySlotFile.failure("fdatasync", path) }
    }

    private static func failure(_ call: String, _ path: String) -> LedgerError {
        LedgerError(.file, "\(call)(\(path)): \(String(cString: strerror(errno)))", errno: errno)
    }
}
