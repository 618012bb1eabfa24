import Foundation
import Ledger
import LogEngine

#if canImport(Glibc)
import Glibc
#endif

/// The layout of one record in a sorted run, in memory and in a run file: the sort key's
/// length (2 bytes) and the value's length (4 bytes), native byte order, then the sort key
/// (the table's number, then the key) and the value. Run files live only as long as the fold
/// that wrote them, on this machine, so nothing about them is a stored format.
enum RunRecord {
    /// Bytes before the sort key.
    static let headerSize = 6

    /// Writes a record for `key` in `table` holding `value` at the start of `bytes`, which has
    /// room for it.
    static func write(table: ProjectionTable, key: [UInt8], value: [UInt8], to bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeBytes(of: UInt16(key.count + 1), as: UInt16.self)
        bytes.storeBytes(of: UInt32(value.count), toByteOffset: 2, as: UInt32.self)
        bytes[headerSize] = table.rawValue
        key.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[(headerSize + 1)...]).copyMemory(from: $0) }
        value.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[(headerSize + 1 + key.count)...]).copyMemory(from: $0) }
    }

    /// Appends a record for `key` in `table` holding `value` to `bytes`.
    static func append(table: ProjectionTable, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: UInt16(key.count + 1)) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(value.count)) { bytes.append(contentsOf: $0) }
        bytes.append(table.rawValue)
        bytes.append(contentsOf: key)
        bytes.append(contentsOf: value)
    }

    /// The record at the start of `bytes`: its sort key, its value and its whole length; nil
    /// when `bytes` holds less than the whole record.
    static func read(_ bytes: UnsafeRawBufferPointer) -> (sortKey: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, length: Int)? {
        guard bytes.count >= headerSize else { return nil }
        let sortKeyCount = Int(bytes.loadUnaligned(as: UInt16.self))
        let valueCount = Int(bytes.loadUnaligned(fromByteOffset: 2, as: UInt32.self))
        let length = headerSize + sortKeyCount + valueCount
        guard bytes.count >= length else { return nil }
        let sortKey = UnsafeRawBufferPointer(rebasing: bytes[headerSize..<(headerSize + sortKeyCount)])
        let value = UnsafeRawBufferPointer(rebasing: bytes[(headerSize + sortKeyCount)..<length])
        return (sortKey, value, length)
    }

    /// The records' order: sort keys byte by byte, a shorter key before a longer one it begins,
    /// which is LMDB's order of keys within one database.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32 {
        let common = min(a.count, b.count)
        if common > 0 {
            let order = memcmp(a.baseAddress!, b.baseAddress!, common)
            if order != 0 { return order }
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// A sort key's first eight bytes as a big-endian number, a shorter key padded with zeros:
    /// where two keys' prefixes differ, they order as ``compare(_:_:)`` orders the keys.
    static func prefix(of key: UnsafeRawBufferPointer) -> UInt64 {
        if key.count >= 8 { return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) }
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < key.count ? key[index] : 0) }
        return prefix
    }
}

/// One sorted run being merged: its records in order, one current at a time.
protocol SortedRun: AnyObject {
    /// The current record; nil after the last. Its buffers are valid until ``advance()``.
    var current: (sortKey: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)? { get }
    /// Moves to the next record.
    func advance() throws
}

/// A run file written in order (``RunBuffer/spill(to:)``), read front to back through a buffer.
final class RunFileReader: SortedRun {
    private let path: String
    private let descriptor: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    /// The unread bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    private var atEndOfFile = false
    private(set) var current: (sortKey: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?
    private var currentLength = 0

    /// Opens the run file `path`, reading `bufferSize` bytes at a time.
    init(path: String, bufferSize: Int) throws {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw LedgerError(.file, "could not open the run file \(path): \(String(cString: strerror(errno)))", errno: errno)
        }
        self.path = path
        buffer = .allocate(byteCount: max(bufferSize, 4096), alignment: 8)
        try load()
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    func advance() throws {
        start += currentLength
        try load()
    }

    /// Makes the record at `start` current, reading more of the file when it is not whole.
    private func load() throws {
        while true {
            if let record = RunRecord.read(UnsafeRawBufferPointer(rebasing: buffer[start..<end])) {
                current = (record.sortKey, record.value)
                currentLength = record.length
                return
            }
            if atEndOfFile {
                guard start == end else { throw LedgerError(.file, "the run file \(path) ends inside a record") }
                current = nil
                currentLength = 0
                return
            }
            try refill()
        }
    }

    /// Moves the unread bytes to the front, grows the buffer when one record does not fit it,
    /// and reads what follows.
    private func refill() throws {
        let unread = end - start
        if unread >= RunRecord.headerSize {
            let needed =
                RunRecord.headerSize + Int(UnsafeRawBufferPointer(rebasing: buffer[start...]).loadUnaligned(as: UInt16.self))
                + Int(UnsafeRawBufferPointer(rebasing: buffer[start...]).loadUnaligned(fromByteOffset: 2, as: UInt32.self))
            if needed > buffer.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: needed, alignment: 8)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                buffer.deallocate()
                buffer = larger
                start = 0
                end = unread
            }
        }
        if start > 0 {
            if unread > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + start, unread) }
            start = 0
            end = unread
        }
        let count = read(descriptor, buffer.baseAddress! + end, buffer.count - end)
        guard count >= 0 else {
            if errno == EINTR { return }
            throw LedgerError(.file, "could not read the run file \(path): \(String(cString: strerror(errno)))", errno: errno)
        }
        if count == 0 { atEndOfFile = true }
        end += count
    }
}

/// Writes a run file through a buffer; ``finish()`` flushes and closes it.
final class RunFileWriter {
    private let path: String
    private var descriptor: Int32
    private var pending: [UInt8] = []
    private let bufferSize = 1 << 20

    init(path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw LedgerError(.file, "could not make the run file \(path): \(String(cString: strerror(errno)))", errno: errno)
        }
        self.path = path
        pending.reserveCapacity(bufferSize)
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    func append(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        if pending.count >= bufferSize { try flush() }
    }

    /// Writes what is buffered and closes the file (not flushed to disk: a run lives only as
    /// long as its fold).
    func finish() throws {
        try flush()
        close(descriptor)
        descriptor = -1
    }

    private func flush() throws {
        try pending.withUnsafeBytes { bytes in
            var written = 0
            while written < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw LedgerError(.file, "could not write the run file \(path): \(String(cString: strerror(errno)))", errno: errno)
                }
                written += count
            }
        }
        pending.removeAll(keepingCapacity: true)
    }
}
