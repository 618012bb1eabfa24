import Basics
import Crypto
import Foundation
import Ledger
import LogEngine

/// A package's `rows.csv` read line by line through a buffer of bounded size (a block and a
/// line), hashing every byte as it is read: what lets a package of ten million rows be checked
/// and recorded without holding the file.
struct RowsFileLines {
    /// A line longer than any row Handover writes.
    struct LineTooLong: Error {
        let line: Int
    }

    static let blockSize = 1 << 20
    /// Longer than any row of a package, line end included: an `account_id` of at most
    /// ``Identifiers/maximumLength`` bytes, quoted with each quote doubled, a `transfer_sub` of at
    /// most as many (never quoted: it holds no comma or quote), a `seq` of at most 20 digits and a
    /// salt of 32 hex digits.
    static let longestLine = 3 * Identifiers.maximumLength + 32 + 1 + 2 * RowTree.saltLength

    private let stream: FileBytes.Stream
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// SHA-256 of every byte read so far.
    private(set) var fileHasher = SHA256()
    /// The file's size when it was opened.
    var fileSize: Int { stream.size }
    /// The 1-based number of the line last lent out.
    private(set) var line = 0

    /// Opens the file at `path`; throws a ``LedgerError`` when it cannot be (missing, not a
    /// regular file, larger than ``HandoffPackage/maximumRowsBytes``).
    init(_ path: String) throws {
        stream = try FileBytes.Stream(path, limit: HandoffPackage.maximumRowsBytes)
    }

    /// Lends the next line to `body`, its line feed included (the file's last line may have
    /// none); nil at the end of the file. Throws ``LineTooLong`` for a line longer than
    /// ``longestLine``.
    mutating func next<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) throws -> Result? {
        while true {
            let from = start
            let feed = buffer.withUnsafeBufferPointer { bytes -> Int? in
                guard from < bytes.count, let found = memchr(bytes.baseAddress! + from, 0x0A, bytes.count - from) else { return nil }
                return bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            let end: Int
            if let feed {
                end = feed + 1
            } else if atEnd {
                guard start < buffer.count else { return nil }
                end = buffer.count
            } else {
                guard buffer.count - start <= Self.longestLine else { throw LineTooLong(line: line + 1) }
                try fill()
                continue
            }
            guard end - start <= Self.longestLine else { throw LineTooLong(line: line + 1) }
            line += 1
            start = end
            return try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[from..<end])) }
        }
    }

    /// Reads (and hashes) the rest of the file, whatever it holds: after a problem, the digest
    /// still says whether the file is the one the manifest signed.
    mutating func drain() throws {
        buffer.removeAll(keepingCapacity: true)
        start = 0
        while !atEnd {
            try fill()
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// The next block, after what is still unread.
    private mutating func fill() throws {
        buffer.removeSubrange(0..<start)
        start = 0
        let before = buffer.count
        if try stream.read(upTo: Self.blockSize, appendingTo: &buffer) == 0 { atEnd = true }
        buffer.withUnsafeBytes { fileHasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[before...])) }
    }
}
