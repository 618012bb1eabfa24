import Basics
import Crypto
import Ledger
import LogEngine

/// The checks ``PackageRows/check(_:against:)`` makes of each row as it streams past, and of the
/// rows as a whole at the end, keeping what the second read is held to: each chunk's SHA-256.
struct RowsCheck {
    let path: String
    let manifest: HandoffManifest
    /// The first problem found; once set, the rest of the file is only hashed.
    var problem: HandoffRefusal?
    private(set) var count = 0
    private var last: UInt64
    private var chunkHasher = SHA256()
    private var chunkDigests: [SHA256Hash] = []
    /// The row tree of the chunk being read, and the roots of those read (v2).
    private var chunkTree = MerkleFrontier()
    private var chunkRoots: [SHA256Hash] = []
    private var form: HandoffRowsForm { manifest.rowsForm }
    /// A 64-bit hash of each `transfer_sub` and each `account_id`, sorted at the end: equal
    /// neighbours are a user listed twice (or, rarely, a collision, told apart by a second read).
    private var subHashes: [UInt64] = []
    private var accountHashes: [UInt64] = []

    /// A check of the file at `path`, of `fileSize` bytes, against `manifest`.
    init(path: String, fileSize: Int, manifest: HandoffManifest) {
        self.path = path
        self.manifest = manifest
        last = manifest.previousTreeSize
        // The shortest row is 6 bytes (",b,1" and CRLF): room for what the file can hold.
        let expected = min(manifest.rowCount, fileSize / 6)
        subHashes.reserveCapacity(expected)
        accountHashes.reserveCapacity(expected)
    }

    /// Takes the next row's line (after the header); returns the problem with it, if any.
    mutating func take(_ bytes: UnsafeBufferPointer<UInt8>) -> HandoffRefusal? {
        let line = count + 2
        guard count < manifest.rowCount else {
            return HandoffRefusal(
                .rowsMismatch, "\(HandoffPackage.rowsFile) has more than the \(manifest.rowCount) rows the manifest says (line \(line))")
        }
        guard let fields = HandoffRowLine(bytes, form: form) else {
            return HandoffRefusal(
                .rowsMismatch,
                "\(path), line \(line): is not written as Handover writes it (each row a CRLF line of \(form.columns.joined(separator: ", ")), "
                    + "each field quoted only where it must be), so its rows could not be checked again once recorded")
        }
        let text = String(decoding: fields.sequence, as: UTF8.self)
        guard let sequence = UInt64(text), String(sequence) == text, sequence > last, sequence <= manifest.checkpoint.treeSize else {
            return HandoffRefusal(
                .notCovered,
                "line \(line) lists event \(InertText.forScreen(text)): each row's event must come after the previous row's "
                    + "and after event \(manifest.previousTreeSize), up to event \(manifest.checkpoint.treeSize), the checkpoint's last")
        }
        last = sequence
        let sub = String(decoding: fields.transferSub, as: UTF8.self)
        if let problem = UserList.problem(with: sub, column: "transfer_sub") { return mismatch(line, problem) }
        guard let account = String(validating: fields.accountID, as: UTF8.self) else { return mismatch(line, "account_id is not valid UTF-8") }
        guard account.trimmingWhitespace == account else {
            return mismatch(line, "account_id \"\(InertText.forScreen(account))\" begins or ends with white space")
        }
        if let problem = UserList.problem(withAccountID: account) { return mismatch(line, problem) }
        if form == .v2 {
            guard fields.saltBytes != nil else { return mismatch(line, "salt is not 32 lowercase hex digits") }
            let row = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 2)]))
            chunkTree.append(leaf: RowTree.leafHash(kind: .handoffRow, row: row)) { _, _, _ in }
        }
        subHashes.append(RowsCheck.hash(fields.transferSub))
        if !account.isEmpty { accountHashes.append(RowsCheck.hash(fields.accountID)) }
        chunkHasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
        count += 1
        if count % form.rowsPerChunk == 0 { closeChunk() }
        return nil
    }

    /// The checks of the rows as a whole, once the file has been read and its digest found to be
    /// `fileSHA256`, the manifest's: the problem found on the way, the count, a user listed
    /// twice, the rows' root (v2). Returns each chunk's SHA-256; throws a ``HandoffRefusal``.
    mutating func finish(fileSHA256: String) throws -> [SHA256Hash] {
        if let problem { throw problem }
        guard count > 0 else { throw HandoffRefusal(.rowsMismatch, "\(path): has a header but no users") }
        guard count == manifest.rowCount else {
            throw HandoffRefusal(.rowsMismatch, "\(HandoffPackage.rowsFile) has \(count) rows, the manifest says \(manifest.rowCount)")
        }
        if count % form.rowsPerChunk != 0 { closeChunk() }
        let subs = RowsCheck.repeated(&subHashes)
        let accounts = RowsCheck.repeated(&accountHashes)
        if !subs.isEmpty || !accounts.isEmpty, let twice = try listedTwice(subs: subs, accounts: accounts, fileSHA256: fileSHA256) { throw twice }
        if let signed = manifest.rowsRoot {
            let root = Hex.encode(RowTree(leaves: chunkRoots).root.bytes)
            guard root == signed else {
                throw HandoffRefusal(
                    .rowsRoot, "the rows' Merkle root is \(root), the manifest signs \(signed): no row of this package could be proven alone")
            }
        }
        return chunkDigests
    }

    private mutating func closeChunk() {
        chunkDigests.append(SHA256Hash(chunkHasher.finalize()))
        chunkHasher = SHA256()
        if form == .v2 {
            chunkRoots.append(SHA256Hash(chunkTree.root)!)
            chunkTree = MerkleFrontier()
        }
    }

    private func mismatch(_ line: Int, _ problem: String) -> HandoffRefusal {
        HandoffRefusal(.rowsMismatch, InputProblem(file: path, line: line, problem).description)
    }

    /// The first user listed twice among the rows whose hash repeats, read again from the file;
    /// nil when the repeats were collisions, once the whole file is found to be the one checked.
    private func listedTwice(subs: Set<UInt64>, accounts: Set<UInt64>, fileSHA256: String) throws -> HandoffRefusal? {
        var lines: RowsFileLines
        do {
            lines = try RowsFileLines(path)
            _ = try lines.next { _ in () }
        } catch { throw HandoffRefusal(.malformed, ErrorText.describing(error)) }
        var subLines: [[UInt8]: Int] = [:]
        var accountLines: [[UInt8]: Int] = [:]
        var line = 1
        while true {
            let next: HandoffRowLine??
            do { next = try lines.next { HandoffRowLine($0, form: form) } } catch is RowsFileLines.LineTooLong {
                throw PackageRows.changed(nil)
            } catch {
                throw HandoffRefusal(.malformed, ErrorText.describing(error))
            }
            guard let read = next else { break }
            line += 1
            guard let fields = read else { throw PackageRows.changed(nil) }
            if subs.contains(RowsCheck.hash(fields.transferSub)) {
                if let first = subLines.updateValue(line, forKey: Array(fields.transferSub)) {
                    return mismatch(
                        line,
                        "transfer_sub \(InertText.forScreen(String(decoding: fields.transferSub, as: UTF8.self))) is listed on line \(first) too: a package lists each user once"
                    )
                }
            }
            if !fields.accountID.isEmpty, accounts.contains(RowsCheck.hash(fields.accountID)) {
                if let first = accountLines.updateValue(line, forKey: Array(fields.accountID)) {
                    return mismatch(
                        line,
                        "account_id \(InertText.forScreen(String(decoding: fields.accountID, as: UTF8.self))) is listed on line \(first) too, for another transfer_sub"
                    )
                }
            }
        }
        guard Hex.encode(lines.fileHasher.finalize()) == fileSHA256 else { throw PackageRows.changed(nil) }
        return nil
    }

    /// The hashes that occur more than once (sorting `hashes`).
    private static func repeated(_ hashes: inout [UInt64]) -> Set<UInt64> {
        hashes.sort()
        var found = Set<UInt64>()
        for i in hashes.indices.dropFirst() where hashes[i] == hashes[i - 1] { found.insert(hashes[i]) }
        return found
    }

    private static func hash(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }
}
