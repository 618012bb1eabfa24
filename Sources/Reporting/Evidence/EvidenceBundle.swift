import Basics
import Crypto
import ExitStatuses
import Foundation
import Ledger
import LogEngine
import Projections

/// One user's evidence from one ledger, written to a directory anyone can check without
/// Handover (schemas/evidence-bundle.md): every event about the user exactly as hashed, each
/// with a C2SP tlog-proof against a signed checkpoint, the checkpoint, the verifier key, a
/// manifest and `VERIFY.md`; the user's rows of handoff packages with their paths.
public enum EvidenceBundle {
    /// The manifest's format marker.
    public static let format = "handover-evidence/3"
    /// The marker of bundles written without the person index's proofs (before it, or against a
    /// checkpoint that predates it): still checked, and said not to be proven complete.
    public static let formatWithoutIndex = "handover-evidence/2"
    /// The marker of bundles written before rows and facts: still checked.
    public static let formatWithoutFacts = "handover-evidence/1"
    /// The checkpoint with the witnesses' cosignature lines, beside `checkpoint`.
    public static let cosignedFile = "cosigned-checkpoint"
    /// The witness policy the cosignatures meet (aics-tlog's JSON form, naming the log).
    public static let policyFile = "witness-policy.json"

    /// Why a bundle could not be written.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        /// What went wrong, for the exit status.
        public enum Kind: Sendable {
            /// No user has the identifier.
            case noUser
            /// No checkpoint to prove against, or one that does not cover the user's events.
            case noCheckpoint
            /// The ledger does not lead to the checkpoint's root: it differs from what was signed.
            case doesNotHold
            /// The target directory exists.
            case targetExists
        }
        public let kind: Kind
        public let description: String
    }

    /// What a written bundle holds.
    public struct Summary: Sendable {
        /// The events written, in order.
        public var sequences: [UInt64]
        /// The checkpoint they are proved against.
        public var checkpoint: Checkpoint
        /// The witnesses whose cosignatures of it the bundle holds.
        public var cosigners: [WitnessKey] = []
        /// What the person index proves of the bundle's completeness; nil when it proves nothing.
        public var completeness: EvidenceBundleCheck.Completeness?
        /// Why the bundle cannot prove its history complete, when it cannot.
        public var notComplete: String?
    }

    /// Writes the bundle of the user `subject` names to the new directory `target`, against
    /// `checkpoint` (else the largest checkpoint the witnesses cosigned, when it covers the
    /// user's events, else the latest stored one). With `reveal` and a key store, also writes
    /// `revealed/` with sealed values opened. With `policy`, the witnesses' cosignatures must
    /// meet it. Reads the ledger only.
    public static func write(
        subject: String, ledger: Ledger, projection: UserProjection, checkpoint: Checkpoint?, policy: WitnessPolicy? = nil, reveal: Bool,
        to target: String
    ) throws -> Summary {
        let contents = try projection.read(ledger) { snapshot, view in
            guard let user = try snapshot.user(matching: subject) else {
                throw Refusal(kind: .noUser, description: "no user with identifier \"\(subject)\"")
            }
            return try Contents(of: user, snapshot: snapshot, view: view)
        }
        return try writing(to: target) { partial in
            try writeContents(subject: subject, contents, ledger: ledger, checkpoint: checkpoint, policy: policy, reveal: reveal, into: partial)
        }
    }

    /// What one ledger's bundle of one user holds: their events, their rows of handoff
    /// packages (with the events holding them and the packages' "handoff received") and of
    /// apply batches (with the batches' events), and the apply rows only stated (their batches'
    /// events hold their accounts in their JSON).
    struct Contents {
        var events: [RecordedEvent]
        var rows: [RowEvidence]
        var applied: [UserApplyRow]

        /// The user's, through the head of `view`.
        init(of user: UserState, snapshot: any ProjectionSnapshot, view: LogView) throws {
            let last = try view.head().sequence
            rows = try RowEvidence.handoffRows(of: user, through: last, snapshot: snapshot, view: view)
            applied = []
            for row in try EventQuery.applyRows(of: user, through: last, snapshot: snapshot, view: view) {
                let proven = try RowEvidence.applyRows(of: row, view: view)
                if proven.isEmpty { applied.append(row) } else { rows += proven }
            }
            let history = try EventQuery.history(of: user, through: last, snapshot: snapshot, view: view)
            var batches: [RecordedEvent] = []
            var manifests: Set<String> = []
            for row in rows {
                guard let event = try view.eventAsLogged(row.sequence) else { continue }
                batches.append(event)
                if case .handoffRowsReceived(let chunk) = event.body, let digest = chunk.manifestSHA256 { manifests.insert(digest) }
            }
            for received in try view.handoffsReceived() where manifests.contains(received.body.manifestSHA256) {
                if let event = try view.eventAsLogged(received.sequence) { batches.append(event) }
            }
            var seen = Set<UInt64>()
            events = (history + batches).sorted { $0.sequence < $1.sequence }.filter { seen.insert($0.sequence).inserted }
        }

        /// Events alone, no rows.
        init(events: [RecordedEvent]) {
            self.events = events
            rows = []
            applied = []
        }
    }

    /// Makes the bundle in `target.incomplete` through `body`, then renames it to `target`, so
    /// `target` is never half written; refuses a `target` that exists.
    static func writing<T>(to target: String, _ body: (String) throws -> T) throws -> T {
        let fm = FileManager.default
        guard !fm.fileExists(atPath: target) else {
            throw Refusal(kind: .targetExists, description: "\(target) exists; an evidence bundle goes to a new directory")
        }
        let partial = target + ".incomplete"
        if fm.fileExists(atPath: partial) { try fm.removeItem(atPath: partial) }
        try fm.createDirectory(atPath: partial, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let result = try body(partial)
        guard rename(partial, target) == 0 else {
            throw LedgerError(.file, "could not rename \(partial) to \(target): \(String(cString: strerror(errno)))")
        }
        return result
    }

    /// Writes `contents` of `ledger` into `directory` as one bundle (schemas/evidence-bundle.md),
    /// each event proved against `checkpoint` (else the latest stored one), which must cover them
    /// all, each row with its paths; the manifest lists the person's apply rows the checkpoint
    /// covers (their events name other people, so they are not in the bundle).
    static func writeContents(
        subject: String, _ contents: Contents, ledger: Ledger, checkpoint given: Checkpoint?, policy: WitnessPolicy? = nil, reveal: Bool,
        into directory: String
    ) throws -> Summary {
        let (checkpoint, key, witnessed) = try provingCheckpoint(for: contents.events, in: ledger, given: given, policy: policy)
        // The person index committed before the checkpoint, when the stored index is still that one.
        let commit: (sequence: UInt64, body: PersonIndexCommitted, event: RecordedEvent)? = try ledger.read { view in
            guard let (sequence, body) = try view.personIndexCommit(atOrBefore: checkpoint.treeSize),
                let state = try view.personIndexState(), Hex.encode(state.root.bytes) == body.root,
                let event = try view.eventAsLogged(sequence)
            else { return nil }
            return (sequence, body, event)
        }
        var events = contents.events
        if let commit, !events.contains(where: { $0.sequence == commit.sequence }) {
            events = (events + [commit.event]).sorted { $0.sequence < $1.sequence }
        }
        let revealsRows = reveal && contents.rows.contains { $0.kind != .handoffRow }
        for sub in ["/events", "/proofs"] + (contents.rows.isEmpty ? [] : ["/rows"]) + (reveal ? ["/revealed"] : [])
            + (revealsRows ? ["/revealed/rows"] : [])
        {
            try FileManager.default.createDirectory(
                atPath: directory + sub, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        var manifestEvents: [JSONValue] = []
        var written: [UInt64: RecordedEvent] = [:]
        for event in events {
            let proof = try ledger.prove(event.sequence, against: checkpoint)
            guard proof.isValid else {
                throw Refusal(
                    kind: .doesNotHold,
                    description:
                        "the inclusion proof of event \(event.sequence) does not lead to the checkpoint's root: the log differs from what the checkpoint signed (run `handover verify --checkpoint`)"
                )
            }
            try write(proof.record, to: "\(directory)/events/\(event.sequence).json")
            written[event.sequence] = try proof.record.withUnsafeBytes { try RecordedEvent(json: $0) }
            try write(Array(TlogProof(proof).text.utf8), to: "\(directory)/proofs/\(event.sequence).tlog-proof")
            if reveal {
                let opened = try proof.record.withUnsafeBytes { try SealedJSON.opened($0, with: ledger.sealer) }
                try write(opened, to: "\(directory)/revealed/\(event.sequence).json", mode: 0o600)
            }
            manifestEvents.append(
                .object([
                    "seq": .int(Int64(event.sequence)), "type": .string(event.type.rawValue), "recorded_at": .string(event.recordedAt.rfc3339),
                    "sha256": .string(Hex.encode(Array(SHA256.hash(data: proof.record)))),
                ]))
        }
        for row in contents.rows {
            try write(row.json.canonicalBytes + [0x0A], to: "\(directory)/rows/\(row.sequence).json")
            // An apply row's addresses, opened: the person's own, as `revealed/` holds their events.
            if revealsRows, row.kind != .handoffRow {
                try write(
                    try SealedJSON.opened(row.row, with: ledger.sealer) + [0x0A], to: "\(directory)/revealed/rows/\(row.sequence).json", mode: 0o600)
            }
        }
        try write(Array(checkpoint.text.utf8), to: directory + "/checkpoint")
        var cosigners: [WitnessKey] = []
        if let witnessed {
            cosigners = witnessed.witnesses
            let stated = try policy ?? WitnessPolicy(log: key.line, quorum: cosigners.count, witnesses: cosigners)
            try write(Array(witnessed.note.serialized.utf8), to: directory + "/" + cosignedFile)
            try write(stated.json, to: directory + "/" + policyFile)
        }
        try write(Array((key.line + "\n").utf8), to: directory + "/verifier-key")
        if let commit {
            let index = try indexProofs(of: written, rows: contents.rows, commit: commit, in: ledger)
            try write(index.json.canonicalBytes + [0x0A], to: directory + "/" + BundleCompleteness.file)
        }
        var members: [String: JSONValue] = [
            "format": .string(commit == nil ? formatWithoutIndex : format), "subject": .string(subject), "origin": .string(checkpoint.origin),
            "tree_size": .int(Int64(checkpoint.treeSize)), "events": .array(manifestEvents), "revealed": .bool(reveal),
        ]
        let covered = contents.applied.filter { $0.sequence <= checkpoint.treeSize }
        if !covered.isEmpty { members["apply"] = .array(covered.map(\.json)) }
        let facts = EvidenceFact.story(events: events.map(\.sequence), rows: contents.rows.map(\.sequence), apply: covered.map(\.sequence))
        members["facts"] = .array(facts.map(\.json))
        let manifest = JSONValue.object(members)
        try write(manifest.canonicalBytes + [0x0A], to: directory + "/manifest.json")
        try write(Array(EvidenceGuide.text.utf8), to: directory + "/VERIFY.md")
        // The bundle is checked as a reader will check it: one that would not hold is not handed out.
        let checked: EvidenceBundleCheck.Result
        do { checked = try EvidenceBundleCheck.run(directory, policy: policy) } catch let failure as EvidenceBundleCheck.DoesNotHold {
            throw Refusal(
                kind: .doesNotHold,
                description:
                    "the bundle written would not hold (\(failure)): the ledger's person index, projections and log disagree; `\(ShellWord.handover("verify --deep", ledger: ledger.directory))` says where"
            )
        }
        return Summary(
            sequences: events.map(\.sequence), checkpoint: checkpoint, cosigners: cosigners, completeness: checked.completeness,
            notComplete: commit == nil ? notCompleteReason(checkpoint: checkpoint, ledger: ledger) : nil)
    }

    /// `index.json`'s proofs: one for each name the written events (up to the index's size) and
    /// rows name, from the stored index, which is the one `commit` committed.
    private static func indexProofs(
        of written: [UInt64: RecordedEvent], rows: [RowEvidence], commit: (sequence: UInt64, body: PersonIndexCommitted, event: RecordedEvent),
        in ledger: Ledger
    ) throws -> BundleCompleteness.Index {
        let size = UInt64(commit.body.indexedSize)
        var names = Set<PersonName>()
        for (sequence, event) in written where sequence <= size {
            names.formUnion(PersonIndexEntry.entries(of: event, leaf: PersonIndexRecomputation.noLeaf).map(\.name))
        }
        for row in rows where row.sequence <= size {
            guard let event = written[row.sequence] else { continue }
            names.formUnion(try BundleCompleteness.names(of: row, in: event))
        }
        let proofs = try ledger.read { view in
            try names.sorted().map { name in
                guard let proof = try view.personIndexProof(of: name) else {
                    throw Refusal(
                        kind: .doesNotHold,
                        description:
                            "the person index holds no \(BundleCompleteness.shown(name)), which an event of the bundle names: `\(ShellWord.handover("verify --deep", ledger: ledger.directory))` says where the index and the log differ"
                    )
                }
                return proof
            }
        }
        guard let root = Hex.decode(commit.body.root).flatMap({ SHA256Hash($0) }) else {
            throw LedgerError(.malformedRecord, "event \(commit.sequence): its person index root is not 64 hex digits")
        }
        return BundleCompleteness.Index(commitSequence: commit.sequence, indexedSize: size, root: root, proofs: proofs)
    }

    /// Why a bundle of `ledger` against `checkpoint` cannot prove its history complete.
    private static func notCompleteReason(checkpoint: Checkpoint, ledger: Ledger) -> String {
        let committed = (try? ledger.read { try $0.personIndexCommit(atOrBefore: UInt64.max) }) ?? nil
        guard let committed else {
            return
                "the ledger has committed no person index yet: `\(ShellWord.handover("checkpoint", ledger: ledger.directory))` commits one, then write the bundle again"
        }
        guard committed.sequence <= checkpoint.treeSize else {
            return
                "the checkpoint of \(counted(checkpoint.treeSize, "event")) predates the person index committed in event \(committed.sequence): prove against a newer checkpoint"
        }
        return
            "the person index has changed since the one the checkpoint covers: `\(ShellWord.handover("checkpoint", ledger: ledger.directory))` commits it, then write the bundle again"
    }

    /// The checkpoint `events` are proved against: `given`, else the largest cosigned one that
    /// covers them (which must meet `policy` when there is one), else the latest; signed by this
    /// ledger's key (returned with it) and covering every event. With the cosigned note and its witnesses when it is one.
    private static func provingCheckpoint(
        for events: [RecordedEvent], in ledger: Ledger, given: Checkpoint?, policy: WitnessPolicy?
    ) throws -> (
        Checkpoint, key: (line: String, publicKey: [UInt8]), witnessed: (note: SignedNote, checkpoint: Checkpoint, witnesses: [WitnessKey])?
    ) {
        let witnessed = try given == nil ? cosigned(covering: events.last?.sequence ?? 0, in: ledger) : nil
        if let policy {
            guard let witnessed, policy.isMet(by: witnessed.note) else {
                throw Refusal(
                    kind: .noCheckpoint,
                    description:
                        "no checkpoint covering these events is cosigned by \(policy.quorum) of the policy's \(counted(policy.witnesses.count, "witness", "witnesses")): submit a newer one with `handover witness`"
                )
            }
        }
        guard let checkpoint = try given ?? witnessed?.checkpoint ?? ledger.latestCheckpoint() else {
            throw Refusal(
                kind: .noCheckpoint,
                description:
                    "no checkpoint has been signed for \(ledger.directory); run `handover checkpoint` on the ledger first, or pass --checkpoint FILE")
        }
        let key = try ledger.verifierKey()
        guard checkpoint.isSigned(by: key.publicKey) else {
            throw Refusal(kind: .doesNotHold, description: "the checkpoint is not signed by this ledger's verifier key \(key.line)")
        }
        let uncovered = events.filter { $0.sequence > checkpoint.treeSize }
        guard uncovered.isEmpty else {
            throw Refusal(
                kind: .noCheckpoint,
                description:
                    "\(uncovered.count) of the \(events.count) events to prove in \(ledger.directory) (from sequence \(uncovered[0].sequence)) \(uncovered.count == 1 ? "is" : "are") newer than its checkpoint of \(counted(checkpoint.treeSize, "event")); sign a newer one with `handover checkpoint`"
            )
        }
        return (checkpoint, key, witnessed)
    }

    /// The largest cosigned checkpoint, when it is this ledger's and covers event `last`: the
    /// note, the checkpoint in it and its witnesses.
    static func cosigned(covering last: UInt64, in ledger: Ledger) throws -> (note: SignedNote, checkpoint: Checkpoint, witnesses: [WitnessKey])? {
        guard let (note, witnesses) = try ledger.read({ try $0.cosignedCheckpoint() }), let own = note.signatures.first,
            let checkpoint = try? Checkpoint(parsing: SignedNote(text: note.text, signatures: [own]).serialized),
            checkpoint.isSigned(by: try ledger.verifierKey().publicKey), checkpoint.treeSize >= last
        else { return nil }
        return (note, checkpoint, witnesses)
    }

    static func write(_ bytes: [UInt8], to path: String, mode: Int = 0o644) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: mode]) else {
            throw LedgerError(.file, "could not write \(path)")
        }
    }
}

extension EvidenceBundle.Refusal: ExitStatusDeciding {
    /// No such user: failed (the one user named is not in the ledger); no checkpoint or a target that exists: usage; a
    /// proof that does not lead to the checkpoint: integrity.
    public var exitStatus: ExitStatus {
        switch kind {
        case .noUser: .failed
        case .noCheckpoint, .targetExists: .usage
        case .doesNotHold: .integrity
        }
    }
}
