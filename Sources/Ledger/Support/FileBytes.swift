import Foundation

/// Reads a file that came from outside (a package, a receipt) without trusting its size.
public enum FileBytes {
    /// The bytes of the file at `path`; refuses one larger than `limit` bytes without reading
    /// past it. Throws a ``LedgerError`` naming the file.
    public static func read(_ path: String, limit: Int? = nil) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw LedgerError(.file, "\(path) is missing or cannot be read") }
        defer { try? handle.close() } // closing a file only read cannot lose anything
        let data: Data?
        do { data = try limit.map { try handle.read(upToCount: $0 + 1) } ?? handle.readToEnd() } catch {
            throw LedgerError(.file, "\(path) cannot be read", underlying: error)
        }
        let bytes = Array(data ?? Data())
        if let limit, bytes.count > limit { throw LedgerError(.malformedRecord, "\(path) is larger than \(limit) bytes") }
        return bytes
    }
}
