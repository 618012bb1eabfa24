import Basics
import Crypto
import Ledger
import LogEngine

/// The rows of a package's `rows.csv`, checked in one streamed pass and read again chunk by
/// chunk, in bounded memory: a block of the file at a time, plus 16 bytes a row for finding a
/// user listed twice and 64 bytes per chunk (``HandoffRowsForm/rowsPerChunk`` rows).
///
/// The check (``check(_:against:)``) holds the file to the manifest: its SHA-256 is the
/// manifest's `rows-sha256`, it is written as Handover writes it (the header, then one CRLF line
/// per row, each field quoted only where it must be: so the rows, once recorded, can be checked
/// against the manifest again), its row count is the manifest's, each row's event comes after the
/// previous row's within the checkpoint's new events, each `transfer_sub` reads as Apple's, no
/// user is listed twice and, in v2, the rows' Merkle root is the manifest's `rows-root`. Each later read (``chunks()``) is held to the very bytes checked, a
/// chunk at a time: a file changed in between is refused before any row of the changed chunk is used.
public struct PackageRows: Sendable {
    /// The file's path.
    public let path: String
    /// SHA-256 of the file, hex: the manifest's `rows-sha256`.
    public let sha256: String
    /// How many rows it holds: the manifest's count.
    public let count: Int
    /// The rows' form, the manifest's.
    public let form: HandoffRowsForm
    /// SHA-256 of each chunk's lines, as checked.
    private let chunkDigests: [SHA256Hash]

    /// How many chunks the rows make.
    public var chunkCount: Int { chunkDigests.count }

    /// Checks `package`'s rows against `manifest`; throws the ``HandoffRefusal`` of the first
    /// check that fails (the digest's first: a file that is not the one signed is refused as that,
    /// whatever else is wrong with it).
    public static func check(_ package: HandoffPackage, against manifest: HandoffManifest) throws -> PackageRows {
        let path = package.file(HandoffPackage.rowsFile)
        var lines: RowsFileLines
        do { lines = try RowsFileLines(path) } catch { throw HandoffRefusal(.malformed, ErrorText.describing(error)) }
        var check = RowsCheck(path: path, fileSize: lines.fileSize, manifest: manifest)
        do {
            let header = manifest.rowsForm.header
            guard try lines.next({ $0.elementsEqual(header) }) == true else {
                throw HandoffRefusal(
                    .rowsMismatch,
                    "\(HandoffPackage.rowsFile)'s first line is not the header \(manifest.rowsForm.columns.joined(separator: ",")) ended by CRLF")
            }
            while let problem = try lines.next({ check.take($0) }) {
                if let problem { throw problem }
            }
        } catch let refusal as HandoffRefusal {
            check.problem = refusal
        } catch let long as RowsFileLines.LineTooLong {
            check.problem = HandoffRefusal(.rowsMismatch, "\(path), line \(long.line): is longer than any row Handover writes")
        } catch { throw HandoffRefusal(.malformed, ErrorText.describing(error)) }
        do { try lines.drain() } catch { throw HandoffRefusal(.malformed, ErrorText.describing(error)) }
        let digest = Hex.encode(lines.fileHasher.finalize())
        guard digest == manifest.rowsSHA256 else {
            throw HandoffRefusal(
                .rowsDigest,
                "\(HandoffPackage.rowsFile) hashes to \(digest), the manifest says \(manifest.rowsSHA256): a row was changed, removed or added")
        }
        let chunkDigests = try check.finish(fileSHA256: digest)
        return PackageRows(path: path, sha256: digest, count: check.count, form: manifest.rowsForm, chunkDigests: chunkDigests)
    }

    /// The refusal of a file whose bytes, read again, are not the ones checked: rows from
    /// `first` (0-based) on, or anywhere.
    static func changed(_ first: Int?, count: Int = 0, chunk: Int = 0) -> HandoffRefusal {
        let which = first.map { "rows \($0 + 1) to \(min(count, $0 + chunk)) are not the ones checked, so none of them was used" }
        return HandoffRefusal(
            .rowsDigest, "\(HandoffPackage.rowsFile) changed after it was checked: " + (which ?? "it no longer hashes to the manifest's rows-sha256"))
    }

    /// Reads the rows again, a chunk at a time, each chunk held to the one checked.
    public func chunks() throws -> Chunks {
        do { return Chunks(rows: self, lines: try RowsFileLines(path)) } catch { throw HandoffRefusal(.malformed, ErrorText.describing(error)) }
    }

    /// Every row, in file order: for a reconciliation, which joins them all.
    public func all() throws -> [PackageListing.Row] {
        var rows: [PackageListing.Row] = []
        rows.reserveCapacity(count)
        var chunks = try chunks()
        while let chunk = try chunks.next() { rows.append(contentsOf: chunk) }
        return rows
    }

    /// The rows as an exchange's users, keyed by `transfer_sub`, read from `input` (the package
    /// directory, as the operator named it; `rows.csv` itself by default).
    public func userList(input: String? = nil) throws -> UserList {
        var users: [MigrationUser] = []
        users.reserveCapacity(count)
        var chunks = try chunks()
        while let chunk = try chunks.next() {
            for row in chunk { users.append(MigrationUser(identifier: row.transferSub, accountID: row.accountID, line: users.count + 2)) }
        }
        return UserList(checked: users, sha256: sha256, path: input ?? path, keyColumn: "transfer_sub")
    }

    /// The rows read again chunk by chunk (``PackageRows/chunks()``).
    public struct Chunks {
        private let rows: PackageRows
        private var lines: RowsFileLines
        private var chunk = 0
        private var headerRead = false

        fileprivate init(rows: PackageRows, lines: RowsFileLines) {
            self.rows = rows
            self.lines = lines
        }

        /// The next chunk's rows; nil after the last. Throws a ``HandoffRefusal`` when the
        /// chunk's bytes are not the ones checked (the file changed since).
        public mutating func next() throws -> [PackageListing.Row]? {
            guard chunk < rows.chunkCount else { return nil }
            let per = rows.form.rowsPerChunk
            let first = chunk * per
            let size = min(per, rows.count - first)
            var hasher = SHA256()
            var found: [PackageListing.Row] = []
            found.reserveCapacity(size)
            do {
                if !headerRead {
                    _ = try lines.next { _ in () }
                    headerRead = true
                }
                while found.count < size,
                    let row = try lines.next({ line -> PackageListing.Row? in
                        hasher.update(bufferPointer: UnsafeRawBufferPointer(line))
                        return HandoffRowLine(line, form: rows.form).flatMap { $0.row }
                    })
                {
                    guard let row else { break }
                    found.append(row)
                }
            } catch is RowsFileLines.LineTooLong { throw PackageRows.changed(first, count: rows.count, chunk: per) }
            // Any other error is the file's reading (a disk's), thrown as it is.
            guard found.count == size, SHA256Hash(hasher.finalize()) == rows.chunkDigests[chunk] else {
                throw PackageRows.changed(first, count: rows.count, chunk: per)
            }
            chunk += 1
            return found
        }
    }
}
