import Basics
import LogEngine

extension LogView {
    /// Every "handoff issued" event, oldest first, with its sequence number.
    public func handoffsIssued() throws -> [(sequence: UInt64, body: HandoffIssued)] {
        try bodies(of: .handoffIssued) { if case .handoffIssued(let body) = $0 { body } else { nil } }
    }

    /// Every "handoff received" event, oldest first, with its sequence number.
    public func handoffsReceived() throws -> [(sequence: UInt64, body: HandoffReceived)] {
        try bodies(of: .handoffReceived) { if case .handoffReceived(let body) = $0 { body } else { nil } }
    }

    /// Every "handoff acknowledged" event, oldest first, with its sequence number.
    public func handoffsAcknowledged() throws -> [(sequence: UInt64, body: HandoffAcknowledged)] {
        try bodies(of: .handoffAcknowledged) { if case .handoffAcknowledged(let body) = $0 { body } else { nil } }
    }

    /// The row tree roots of every chunk of the package whose chunk `chunk` is event `sequence`,
    /// in chunk order: the leaves of the tree whose root the package's signed manifest holds as
    /// `rows-root` (a row's package path is its chunk's path among them). Nil when `chunk` is not
    /// of a v2 package, or the package's "handoff received" or one of its chunks is not in the
    /// log; a ``LedgerError`` when the chunks do not lead to the signed root.
    ///
    /// A package's chunks are taken in one after another: they are looked for first beside
    /// `sequence` among the "handoff rows received" events, each root read from the event's
    /// stored bytes without decoding them (a package of 10M rows has about 9,800 chunks); only
    /// when those roots do not lead to the signed one is each chunk found by its idempotency key.
    public func packageChunkRoots(of chunk: HandoffRowsReceived, at sequence: UInt64) throws -> [SHA256Hash]? {
        guard chunk.form == .v2, let digest = chunk.manifestSHA256,
            let signed = try handoffsReceived().first(where: { $0.body.manifestSHA256 == digest })?.body.rowsRoot
        else { return nil }
        func leadToSigned(_ roots: [SHA256Hash]) -> Bool { Hex.encode(RowTree(leaves: roots).root.bytes) == signed }
        let before = try sequences(of: .handoffRowsReceived, from: 1, through: sequence, atMost: .max).suffix(chunk.chunk + 1)
        let after = try sequences(of: .handoffRowsReceived, from: sequence + 1, through: .max, atMost: chunk.chunkCount - chunk.chunk - 1)
        let nearby = try (before + after).compactMap { try loggedRowsRoot($0) }
        if nearby.count == chunk.chunkCount, leadToSigned(nearby) { return nearby }
        var roots: [SHA256Hash] = []
        for c in 0..<chunk.chunkCount {
            let key = HandoffRowsReceived.idempotencyKey(origin: chunk.origin, package: chunk.package, fileSHA256: chunk.fileSHA256, chunk: c)
            guard let found = try self.sequence(forIdempotencyKey: key), case .handoffRowsReceived(let other)? = try eventAsLogged(found)?.body,
                let root = other.rowsRoot
            else { return nil }
            roots.append(root)
        }
        guard leadToSigned(roots) else {
            throw LedgerError(
                .malformedRecord,
                "handoff package \(chunk.package ?? 0): its chunks' row tree roots do not lead to the manifest's rows-root \(signed)")
        }
        return roots
    }

    /// The `rows_root` member of event `sequence`'s JSON (a v2 batch event's), read from its
    /// stored bytes without decoding them; nil when it has none. Canonical JSON escapes every
    /// quote inside a string, so the bytes `"rows_root":"` can only begin that member; a caller
    /// checks what it reads against a root it trusts.
    func loggedRowsRoot(_ sequence: UInt64) throws -> SHA256Hash? {
        guard let raw = try record(sequence) else { return nil }
        let json = try LogView.eventJSON(ofStoredRecord: raw, sequence: sequence)
        let member = Self.rowsRootMember
        guard json.count >= member.count + 64,
            let at = (0...(json.count - member.count - 64)).first(where: { json[$0..<($0 + member.count)].elementsEqual(member) })
        else { return nil }
        let hex = UnsafeRawBufferPointer(rebasing: json[(at + member.count)..<(at + member.count + 64)])
        return Hex.decode(String(decoding: hex, as: UTF8.self)).flatMap { SHA256Hash($0) }
    }

    private static let rowsRootMember = Array(#""rows_root":""#.utf8)

    /// The events of `type` (few: found through the type index), their bodies taken by `pick`.
    private func bodies<Body>(of type: EventType, _ pick: (EventBody) -> Body?) throws -> [(sequence: UInt64, body: Body)] {
        try sequences(of: type).compactMap { sequence in try event(sequence).flatMap { pick($0.body) }.map { (sequence, $0) } }
    }
}
