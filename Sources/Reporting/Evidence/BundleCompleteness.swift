import Basics
import Ledger
import LogEngine

/// Step 8 of checking an evidence bundle (schemas/evidence-bundle.md, "index.json"): the person
/// index's proofs show that the events and rows in the bundle are every one the log's first
/// `indexed_size` events hold that names any of the names they name, and that those names are
/// one person's, the one the manifest's `subject` names.
enum BundleCompleteness {
    typealias DoesNotHold = EvidenceBundleCheck.DoesNotHold

    /// The file.
    static let file = "index.json"

    /// `index.json`, read.
    struct Index {
        /// The "person index committed" event the proofs lead to.
        var commitSequence: UInt64
        var indexedSize: UInt64
        var root: SHA256Hash
        var proofs: [PersonIndexProof]

        var json: JSONValue {
            .object([
                "commit_seq": .int(Int64(commitSequence)), "indexed_size": .int(Int64(indexedSize)), "root": .string(Hex.encode(root.bytes)),
                "names": .array(proofs.sorted { $0.name < $1.name }.map(\.json)),
            ])
        }

        init(commitSequence: UInt64, indexedSize: UInt64, root: SHA256Hash, proofs: [PersonIndexProof]) {
            self.commitSequence = commitSequence
            self.indexedSize = indexedSize
            self.root = root
            self.proofs = proofs
        }

        init(bytes: [UInt8]) throws {
            let object: [String: JSONValue]
            do { object = try JSONValue.parseObject(untrusted: bytes) } catch {
                throw DoesNotHold(file: file, reason: "not a JSON object (\(error))")
            }
            guard object.count == 4, let commit = object["commit_seq"]?.intValue, commit > 0, let size = object["indexed_size"]?.intValue, size >= 0,
                let rootText = object["root"]?.stringValue, let root = Hex.decode(rootText).flatMap({ SHA256Hash($0) }),
                Hex.encode(root.bytes) == rootText, let names = object["names"]?.arrayValue
            else { throw DoesNotHold(file: file, reason: "not {commit_seq, indexed_size, root, names}") }
            var proofs: [PersonIndexProof] = []
            for entry in names {
                do { proofs.append(try PersonIndexProof(json: entry)) } catch { throw DoesNotHold(file: file, reason: error.description) }
            }
            self.init(commitSequence: UInt64(commit), indexedSize: UInt64(size), root: root, proofs: proofs)
        }
    }

    /// What a complete bundle proves.
    struct Proven {
        var index: Index
        /// The names, each with how many events and rows of the log name it.
        var names: [PersonName: UInt64]
        /// Events shown that are newer than the index (shown, not proven complete).
        var afterIndex: [UInt64]
    }

    /// One thing shown that names a name: its event's sequence number, its leaf hash, and its file.
    private struct Thing {
        var sequence: UInt64
        var leaf: SHA256Hash
        var file: String
    }

    /// Checks `index` against the bundle's `events` (each decoded from its JSON alone, with its
    /// leaf hash), `rows` and `subject`.
    static func check(
        _ index: Index, events: [UInt64: (event: RecordedEvent, leaf: SHA256Hash)], rows: [UInt64: RowEvidence], subject: String?
    ) throws -> Proven {
        // The commit the proofs lead to is one of the bundle's proven events.
        guard let commit = events[index.commitSequence], case .personIndexCommitted(let body) = commit.event.body else {
            throw DoesNotHold(file: file, reason: "commit_seq \(index.commitSequence) is not a \"person index committed\" event in events/")
        }
        guard UInt64(body.indexedSize) == index.indexedSize, body.root == Hex.encode(index.root.bytes) else {
            throw DoesNotHold(file: file, reason: "its indexed_size and root are not those of events/\(index.commitSequence).json")
        }
        var proofs: [PersonName: PersonIndexProof] = [:]
        for proof in index.proofs {
            guard proofs.updateValue(proof, forKey: proof.name) == nil else {
                throw DoesNotHold(file: file, reason: "it proves \(shown(proof.name)) twice")
            }
            guard proof.root == index.root else {
                throw DoesNotHold(
                    file: file, reason: "the proof of \(shown(proof.name)) does not lead to the committed root \(Hex.encode(index.root.bytes))")
            }
        }
        // What the shown events and rows name, up to the index's size; and which names go together.
        var things: [PersonName: [Thing]] = [:]
        var together = Partition()
        var afterIndex: [UInt64] = []
        for (sequence, (event, leaf)) in events.sorted(by: { $0.key < $1.key }) where sequence != index.commitSequence {
            let names = PersonIndexEntry.entries(of: event, leaf: leaf).map(\.name)
            var rowNames: [PersonName] = []
            if let row = rows[sequence] {
                rowNames = try Self.names(of: row, in: event)
                for name in rowNames where sequence <= index.indexedSize {
                    things[name, default: []].append(
                        Thing(sequence: sequence, leaf: RowTree.leafHash(kind: row.kind, row: row.row), file: "rows/\(sequence).json"))
                }
            }
            guard sequence <= index.indexedSize else {
                guard (names + rowNames).contains(where: { proofs[$0] != nil }) else {
                    throw DoesNotHold(file: "events/\(sequence).json", reason: "it is newer than the index and names no one the index proves")
                }
                afterIndex.append(sequence)
                continue
            }
            guard !(names + rowNames).isEmpty else {
                throw DoesNotHold(file: "events/\(sequence).json", reason: "it names no person or package: it is in no one's history")
            }
            for name in names { things[name, default: []].append(Thing(sequence: sequence, leaf: leaf, file: "events/\(sequence).json")) }
            together.join(names + rowNames)
            // A package's rows go with its package.
            if case .handoffRowsReceived(let chunk) = event.body, let digest = chunk.manifestSHA256 { together.join(rowNames + [.package(digest)]) }
        }
        for name in things.keys.sorted() where proofs[name] == nil {
            throw DoesNotHold(
                file: file, reason: "it has no proof for \(shown(name)), which \(things[name]![0].file) names: every name shown must be proven")
        }
        var counts: [PersonName: UInt64] = [:]
        for (name, proof) in proofs.sorted(by: { $0.key < $1.key }) {
            var history = PersonHistory.empty
            let shownThings = (things[name] ?? []).sorted { $0.sequence < $1.sequence }
            for thing in shownThings { history.append(sequence: thing.sequence, leaf: thing.leaf) }
            guard history == proof.history else {
                let more = proof.history.count > history.count
                throw DoesNotHold(
                    file: file,
                    reason: """
                        the index holds \(counted(proof.history.count, "event or row", "events or rows")) naming \(shown(name)) in the first \
                        \(counted(index.indexedSize, "event")); the bundle shows \(history.count)\(more ? ": some were left out" : proof.history.count == history.count ? " that are not those" : ": some are not in its history")
                        """)
            }
            counts[name] = proof.history.count
        }
        // The subject is one of the names, and every person's name goes with it.
        let people = proofs.keys.filter { $0.kind != PersonName.packageKind }
        guard let subject, let subjectName = people.filter({ $0.value == subject }).min() else {
            throw DoesNotHold(
                file: "manifest.json",
                reason: "its subject \(shown(subject ?? "(none)")) is not a name the index proves: the bundle is about someone else")
        }
        if let stranger = people.sorted().first(where: { !together.same($0, subjectName) }) {
            throw DoesNotHold(
                file: file, reason: "\(shown(stranger)) shares no event or row with \(shown(subjectName)): it is another person's history")
        }
        return Proven(index: index, names: counts, afterIndex: afterIndex)
    }

    /// The names a row of event `event` names.
    static func names(of row: RowEvidence, in event: RecordedEvent) throws -> [PersonName] {
        switch row.kind {
        case .handoffRow:
            guard let line = HandoffRowLine(row.row, form: .v2), let account = line.accountIDText, let transferSub = line.transferSubText else {
                throw DoesNotHold(file: "rows/\(row.sequence).json", reason: "its row is not a v2 rows.csv line")
            }
            return (account.isEmpty ? [] : [PersonName(kind: "account_id", value: account)]) + [PersonName(kind: "transfer_sub", value: transferSub)]
        case .applyIntendedRow, .applySettledRow:
            switch ApplyRowLine(row.row, kind: row.kind) {
            case .intended(let account, _, _)?, .settled(let account, _, _)?: return [PersonName(kind: "account_id", value: account)]
            default: throw DoesNotHold(file: "rows/\(row.sequence).json", reason: "its row is not a \(row.kind.rawValue) line")
            }
        }
    }

    /// A name as a person reads it, escaped.
    static func shown(_ name: PersonName) -> String { "\(name.kind) \(InertText.forScreen(name.value))" }
    private static func shown(_ text: String) -> String { InertText.forScreen(text) }

    /// Names that go together (union-find).
    private struct Partition {
        private var parent: [PersonName: PersonName] = [:]

        mutating func root(_ name: PersonName) -> PersonName {
            var at = name
            while let up = parent[at], up != at { at = up }
            return at
        }

        mutating func join(_ names: [PersonName]) {
            guard let first = names.first else { return }
            let top = root(first)
            if parent[top] == nil { parent[top] = top }
            for name in names.dropFirst() {
                let other = root(name)
                if other != top { parent[other] = top }
            }
        }

        mutating func same(_ a: PersonName, _ b: PersonName) -> Bool { root(a) == root(b) }
    }
}
