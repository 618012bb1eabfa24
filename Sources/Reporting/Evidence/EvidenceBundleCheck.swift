import Basics
import Crypto
import ExitStatuses
import Foundation
import Ledger
import LogEngine
import Projections

/// Checks an evidence bundle with no ledger present, by the rules of
/// schemas/evidence-bundle.md: the verifier key's form, the checkpoint's signature, each
/// proof's form and that it leads from its event's bytes to the checkpoint's root, each row's
/// paths to the roots its event and its package sign, and the manifest against the files.
public enum EvidenceBundleCheck {
    /// A file of the bundle that does not hold, and why.
    public struct DoesNotHold: Error, CustomStringConvertible, Sendable, ExitStatusDeciding {
        /// The file, relative to the bundle.
        public let file: String
        public let reason: String
        public var description: String { "\(file): \(reason)" }
        /// A bundle that does not hold is an integrity failure (exit 4).
        public var exitStatus: ExitStatus { .integrity }
        public var exitMessage: String? { "the bundle does not hold: \(self)" }
    }

    /// What a bundle that holds proves.
    public struct Result: Sendable {
        public var origin: String
        public var treeSize: UInt64
        /// The checkpoint's root.
        public var rootHash: [UInt8]
        public var verifierKey: String
        public var sequences: [UInt64]
        /// The identifier the bundle was asked for, as its manifest says (a guide, not evidence).
        public var subject: String?
        /// The person's story, one line per fact, in order; each fact proven or only stated.
        public var story: [(fact: EvidenceFact, line: String)]
        /// The witnesses whose cosignature of the checkpoint verifies, and the quorum of the
        /// policy they meet; nil for a bundle without cosignatures.
        public var witnesses: (cosigners: [String], quorum: Int, policyGiven: Bool)?
        /// What the person index proves of the bundle's completeness; nil for a bundle without
        /// `index.json` (written before the index, or against a checkpoint that predates it).
        public var completeness: Completeness?
    }

    /// What the person index proves: that the events and rows shown are every one of the log's
    /// first `indexedSize` events that names any of `names`.
    public struct Completeness: Sendable {
        /// The "person index committed" event the proofs lead to.
        public var commitSequence: UInt64
        public var indexedSize: UInt64
        /// Each name, with how many events and rows name it.
        public var names: [(name: PersonName, count: UInt64)]
        /// Events shown that are newer than the index: proven, not proven complete.
        public var afterIndex: [UInt64]

        /// What the index's labels do not hide, said beside every complete bundle.
        public static let labelsNote =
            "The index labels each identifier by its plain SHA-256 hash, not a verifiable random function: a reader holding many bundles can at times learn that a guessed identifier is not in the ledger, never that it is (schemas/audit-evidence.md, \"Person index\")."

        /// The line a dispute can quote.
        public var statement: String {
            let listed = names.map { "\(BundleCompleteness.shown($0.name)) (\($0.count))" }.joined(separator: ", ")
            return
                "Complete: the events and rows shown are every event and row of the log's first \(counted(indexedSize, "event")) naming \(listed): the person index committed in event \(commitSequence), which the checkpoint covers, proves it."
        }
    }

    /// The largest file of a bundle read (an event, a proof, a manifest).
    public static let maximumFileBytes = 1 << 20

    /// Checks the bundle in `directory`; with `expectedKey`, its verifier key must be that one;
    /// with `policy`, the checkpoint's cosignatures must meet it (else the bundle's own policy,
    /// when it has cosignatures).
    public static func run(_ directory: String, expectedKey: String? = nil, policy: WitnessPolicy? = nil) throws -> Result {
        func read(_ name: String) throws -> Data {
            do { return Data(try FileBytes.read(directory + "/" + name, limit: maximumFileBytes)) } catch {
                throw DoesNotHold(file: name, reason: "missing, unreadable or larger than \(maximumFileBytes) bytes")
            }
        }
        let (line, checkpoint) = try signedCheckpoint(expectedKey: expectedKey, read: read)  // 1 and 2
        let witnesses = try checkWitnesses(in: directory, checkpoint: checkpoint, keyLine: line, policy: policy, read: read)  // 7
        // The manifest, read first for the digests it lists and checked last.
        let (manifest, format, listed) = try manifestEvents(read: read)
        let (digests, decoded, leaves) = try provenEvents(  // 3 and 4
            in: directory, checkpoint: checkpoint, listed: listed, read: read)
        // 5. Each row, against its event and its roots.
        let rowProofs = try rows(in: directory, read: read)
        if format == EvidenceBundle.formatWithoutFacts, !rowProofs.isEmpty || manifest["facts"] != nil {
            throw DoesNotHold(
                file: "manifest.json", reason: "a \(EvidenceBundle.formatWithoutFacts) manifest, with rows or facts only later bundles have")
        }
        var revealed: [UInt64: [UInt8]] = [:]
        for sequence in try names(in: directory, "revealed/rows", suffix: ".json", optional: true) {
            var line = Array(try read("revealed/rows/\(sequence).json"))
            if line.last == 0x0A { line.removeLast() }
            revealed[sequence] = line
        }
        let rowLines = try BundleRowsCheck.run(rowProofs, events: decoded, subject: manifest["subject"]?.stringValue, revealed: revealed)
        // 8. Completeness, from the person index.
        let hasIndex = FileManager.default.fileExists(atPath: directory + "/" + BundleCompleteness.file)
        guard hasIndex == (format == EvidenceBundle.format) else {
            throw DoesNotHold(
                file: hasIndex ? BundleCompleteness.file : "manifest.json",
                reason: hasIndex
                    ? "beside a \(format ?? "") manifest, which has no person index"
                    : "a \(EvidenceBundle.format) manifest, and no \(BundleCompleteness.file)")
        }
        var completeness: Completeness?
        if hasIndex {
            let index = try BundleCompleteness.Index(bytes: Array(try read(BundleCompleteness.file)))
            var shown: [UInt64: (event: RecordedEvent, leaf: SHA256Hash)] = [:]
            for (sequence, event) in decoded { shown[sequence] = (event, leaves[sequence]!) }
            if let unread = digests.keys.sorted().first(where: { decoded[$0] == nil }) {
                throw DoesNotHold(file: "events/\(unread).json", reason: "this version cannot read it, so it cannot tell whom it names")
            }
            let proven = try BundleCompleteness.check(index, events: shown, rows: rowProofs, subject: manifest["subject"]?.stringValue)
            completeness = Completeness(
                commitSequence: index.commitSequence, indexedSize: index.indexedSize,
                names: proven.names.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                afterIndex: proven.afterIndex)
        }
        // 6. The manifest against the files.
        guard manifest["origin"]?.stringValue == checkpoint.origin, manifest["tree_size"]?.intValue == Int64(checkpoint.treeSize) else {
            throw DoesNotHold(file: "manifest.json", reason: "its origin or tree size is not the checkpoint's")
        }
        guard listed == digests else {
            throw DoesNotHold(file: "manifest.json", reason: "its events (sequence and SHA-256) are not the files in events/")
        }
        let applied = manifest["apply"]?.arrayValue ?? []
        let appliedSequences = applied.compactMap { $0["seq"]?.intValue }.filter { $0 > 0 }.map(UInt64.init)
        guard appliedSequences.count == applied.count else {
            throw DoesNotHold(file: "manifest.json", reason: "an entry of apply has no seq")
        }
        // A statement is printed only where it could be true: its events within the checkpoint,
        // the intent before the settlement, neither one of the events shown.
        for entry in applied {
            let seq = entry["seq"]?.intValue ?? 0
            let intent = entry["intent_seq"]?.intValue
            guard seq <= Int64(checkpoint.treeSize), intent.map({ $0 > 0 && $0 < seq }) ?? true,
                digests[UInt64(seq)] == nil, intent.map({ digests[UInt64($0)] == nil }) ?? true,
                entry["run"]?.stringValue.map({ !$0.isEmpty }) == true
            else {
                throw DoesNotHold(
                    file: "manifest.json",
                    reason:
                        "its apply entry of event \(seq) cannot be: its events must be within the checkpoint's \(counted(checkpoint.treeSize, "event")), the intent before the settlement, neither among the events shown, with a run"
                )
            }
        }
        let facts = EvidenceFact.story(events: digests.keys.sorted(), rows: rowLines.keys.sorted(), apply: appliedSequences)
        if format != EvidenceBundle.formatWithoutFacts { try checkClaimed(manifest["facts"]?.arrayValue ?? [], against: facts) }
        let story = facts.map { fact in
            switch fact.kind {
            case .event: (fact, decoded[fact.sequence].map(Self.line) ?? "event \(fact.sequence), which this version cannot read")
            case .row: (fact, rowLines[fact.sequence]!)
            case .apply: (fact, Self.line(apply: applied.first { $0["seq"]?.intValue == Int64(fact.sequence) }!))
            }
        }
        return Result(
            origin: checkpoint.origin, treeSize: checkpoint.treeSize, rootHash: checkpoint.rootHash, verifierKey: line,
            sequences: digests.keys.sorted(),
            subject: manifest["subject"]?.stringValue, story: story, witnesses: witnesses, completeness: completeness)
    }

    /// Steps 1 and 2: the verifier key (with `expectedKey`, that one) and the checkpoint it
    /// signed (its text exactly the file's), with the key's line.
    private static func signedCheckpoint(
        expectedKey: String?, read: (String) throws -> Data
    ) throws -> (keyLine: String, checkpoint: Checkpoint) {
        let keyLine = String(decoding: try read("verifier-key"), as: UTF8.self)
        guard let (name, publicKey) = Checkpoint.publicKey(fromVerifierKey: keyLine) else {
            throw DoesNotHold(file: "verifier-key", reason: "not a verifier key (name+keyid+base64 of 0x01 and 32 bytes, the key ID matching)")
        }
        let line = Checkpoint.verifierKey(name: name, publicKey: publicKey)
        if let expectedKey, expectedKey.trimmingCharacters(in: .whitespacesAndNewlines) != line {
            throw DoesNotHold(
                file: "verifier-key", reason: "is \(line), not the key given (\(expectedKey.trimmingCharacters(in: .whitespacesAndNewlines)))")
        }
        let checkpointText = String(decoding: try read("checkpoint"), as: UTF8.self)
        let checkpoint: Checkpoint
        do { checkpoint = try Checkpoint(parsing: checkpointText) } catch { throw DoesNotHold(file: "checkpoint", reason: "\(error)") }
        guard checkpoint.origin == name else {
            throw DoesNotHold(file: "checkpoint", reason: "its origin is \(checkpoint.origin), the verifier key's name \(name)")
        }
        guard checkpoint.text == checkpointText, checkpoint.isSigned(by: publicKey) else {
            throw DoesNotHold(file: "checkpoint", reason: "its signature does not verify with \(line)")
        }
        return (line, checkpoint)
    }

    /// `manifest.json`, its format and the SHA-256 it lists for each event.
    private static func manifestEvents(
        read: (String) throws -> Data
    ) throws -> (manifest: [String: JSONValue], format: String?, listed: [UInt64: String]) {
        let manifest: [String: JSONValue]
        do { manifest = try JSONValue.parseObject(untrusted: Array(try read("manifest.json"))) } catch let error as JSONParseError {
            throw DoesNotHold(file: "manifest.json", reason: "not a \(EvidenceBundle.format) manifest (\(error))")
        }
        let format = manifest["format"]?.stringValue
        guard [EvidenceBundle.format, EvidenceBundle.formatWithoutIndex, EvidenceBundle.formatWithoutFacts].contains(format),
            let entries = manifest["events"]?.arrayValue
        else {
            throw DoesNotHold(file: "manifest.json", reason: "not a \(EvidenceBundle.format) manifest")
        }
        var listed: [UInt64: String] = [:]
        for entry in entries {
            guard let object = entry.objectValue, let seq = object["seq"]?.intValue, seq > 0, let sha = object["sha256"]?.stringValue,
                listed[UInt64(seq)] == nil
            else {
                throw DoesNotHold(file: "manifest.json", reason: "an entry of events is not {seq, sha256} once per event")
            }
            listed[UInt64(seq)] = sha
        }
        return (manifest, format, listed)
    }

    /// Steps 3 and 4: each proof and its event, paired one to one, the event's bytes leading to
    /// the checkpoint's root (the manifest's digests, `listed`, say which file to name when
    /// not). Each event's SHA-256, and the event decoded where this version can.
    private static func provenEvents(
        in directory: String, checkpoint: Checkpoint, listed: [UInt64: String], read: (String) throws -> Data
    ) throws -> (digests: [UInt64: String], decoded: [UInt64: RecordedEvent], leaves: [UInt64: SHA256Hash]) {
        let events = try names(in: directory, "events", suffix: ".json")
        let proofs = try names(in: directory, "proofs", suffix: ".tlog-proof")
        if let lone = proofs.subtracting(events).min() {
            throw DoesNotHold(file: "proofs/\(lone).tlog-proof", reason: "no events/\(lone).json beside it")
        }
        if let lone = events.subtracting(proofs).min() {
            throw DoesNotHold(file: "events/\(lone).json", reason: "no proofs/\(lone).tlog-proof beside it")
        }
        var digests: [UInt64: String] = [:]
        var decoded: [UInt64: RecordedEvent] = [:]
        var leaves: [UInt64: SHA256Hash] = [:]
        for sequence in events.sorted() {
            let proofFile = "proofs/\(sequence).tlog-proof"
            let eventFile = "events/\(sequence).json"
            let proof: TlogProof
            do { proof = try TlogProof(parsing: String(decoding: try read(proofFile), as: UTF8.self)) } catch let error as LedgerError {
                throw DoesNotHold(file: proofFile, reason: error.message)
            }
            guard proof.index == sequence - 1 else {
                throw DoesNotHold(file: proofFile, reason: "index \(proof.index) is not the leaf of event \(sequence) (\(sequence - 1))")
            }
            guard proof.index < checkpoint.treeSize else {
                throw DoesNotHold(file: proofFile, reason: "index \(proof.index) is outside the checkpoint's \(checkpoint.treeSize) events")
            }
            guard proof.checkpointText == checkpoint.text else {
                throw DoesNotHold(file: proofFile, reason: "the checkpoint in it differs from the bundle's")
            }
            let record = Array(try read(eventFile))
            let digest = Hex.encode(Array(SHA256.hash(data: record)))
            guard
                MerkleProof.verifyInclusion(
                    leafHash: MerkleHash.leaf(record), index: proof.index, treeSize: checkpoint.treeSize, path: proof.path, root: checkpoint.rootHash)
            else {
                // Either file may be the altered one; the manifest's digest (not evidence, a
                // guide) says which to name.
                if listed[sequence] != digest {
                    throw DoesNotHold(
                        file: eventFile, reason: "its bytes do not lead to the checkpoint's root with \(proofFile): the event was altered")
                }
                throw DoesNotHold(file: proofFile, reason: "its path does not lead from \(eventFile) to the checkpoint's root: the proof was altered")
            }
            let object: [String: JSONValue]
            do { object = try JSONValue.parseObject(untrusted: record) } catch {
                throw DoesNotHold(file: eventFile, reason: "not a JSON object (\(error))")
            }
            guard object["seq"]?.intValue == Int64(sequence) else { throw DoesNotHold(file: eventFile, reason: "its seq is not \(sequence)") }
            digests[sequence] = digest
            leaves[sequence] = record.withUnsafeBytes { MerkleHash.leafHash($0) }
            // An event this version cannot decode is still proven; its line says only its type.
            decoded[sequence] = try? record.withUnsafeBytes { try RecordedEvent(json: $0) }
        }
        return (digests, decoded, leaves)
    }

    /// The witnesses' cosignatures of the checkpoint (`cosigned-checkpoint`) against the policy
    /// given, else the bundle's own (`witness-policy.json`): the note is the checkpoint with
    /// more signature lines, and enough of the policy's witnesses verify in it.
    private static func checkWitnesses(
        in directory: String, checkpoint: Checkpoint, keyLine: String, policy given: WitnessPolicy?, read: (String) throws -> Data
    ) throws -> (cosigners: [String], quorum: Int, policyGiven: Bool)? {
        let cosignedFile = EvidenceBundle.cosignedFile
        let policyFile = EvidenceBundle.policyFile
        let present = [cosignedFile, policyFile].map { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        guard present.contains(true) || given != nil else { return nil }
        guard present[0] else {
            throw DoesNotHold(file: cosignedFile, reason: "missing: the bundle holds no witness's cosignature for the policy to count")
        }
        let note: SignedNote
        do { note = try SignedNote(parsing: Array(try read(cosignedFile))) } catch let error as LedgerError {
            throw DoesNotHold(file: cosignedFile, reason: error.message)
        }
        guard note.text == checkpoint.body, note.signatures.contains(where: { $0.line == checkpoint.text.components(separatedBy: "\n\n")[1] })
        else {
            throw DoesNotHold(file: cosignedFile, reason: "it is not the bundle's checkpoint with the witnesses' lines added")
        }
        // Every line by the log's own key verifies, as every policy witness's must (below).
        guard let (_, logKey) = Checkpoint.publicKey(fromVerifierKey: keyLine), note.verify(name: checkpoint.origin, publicKey: logKey) == .verified
        else {
            throw DoesNotHold(file: cosignedFile, reason: "a line by the log's own key does not verify (a known key's failing line refuses the note)")
        }
        let policy: WitnessPolicy
        if let given {
            policy = given
        } else {
            guard present[1] else { throw DoesNotHold(file: policyFile, reason: "missing beside \(cosignedFile)") }
            do { policy = try WitnessPolicy(json: Array(try read(policyFile))) } catch let error as LedgerError {
                throw DoesNotHold(file: policyFile, reason: error.message)
            }
        }
        if let log = policy.log, log != keyLine {
            throw DoesNotHold(file: given == nil ? policyFile : cosignedFile, reason: "the policy is about the log \(log), not \(keyLine)")
        }
        if let failing = policy.failing(in: note).first {
            throw DoesNotHold(
                file: cosignedFile,
                reason:
                    "the line of the policy's witness \(InertText.forScreen(failing.name)) does not verify with its key (a known key's failing line refuses the note)"
            )
        }
        let cosigners = policy.cosigners(in: note)
        guard cosigners.count >= policy.quorum else {
            throw DoesNotHold(
                file: cosignedFile,
                reason:
                    "\(counted(cosigners.count, "cosignature")) of the policy's witnesses \(cosigners.count == 1 ? "verifies" : "verify"), the quorum is \(policy.quorum)"
            )
        }
        return (cosigners.map(\.name), policy.quorum, given != nil)
    }

    /// The files `rows/SEQ.json`, read (none without `rows/`).
    private static func rows(in directory: String, read: (String) throws -> Data) throws -> [UInt64: RowEvidence] {
        var proofs: [UInt64: RowEvidence] = [:]
        for sequence in try names(in: directory, "rows", suffix: ".json", optional: true) {
            let file = "rows/\(sequence).json"
            let bytes = Array(try read(file))
            do { proofs[sequence] = try RowEvidence(json: try JSONValue.parseObject(untrusted: bytes)) } catch {
                throw DoesNotHold(file: file, reason: "not a row with its paths (\(ErrorText.describing(error)))")
            }
        }
        return proofs
    }

    /// Step 6's `facts`: the manifest's list is exactly `facts`, the one the files give.
    private static func checkClaimed(_ claimed: [JSONValue], against facts: [EvidenceFact]) throws {
        for (i, fact) in facts.enumerated() where i >= claimed.count || claimed[i] != fact.json {
            let what = i < claimed.count ? "says \(String(decoding: claimed[i].canonicalBytes, as: UTF8.self))" : "ends"
            throw DoesNotHold(
                file: "manifest.json",
                reason:
                    "facts entry \(i + 1) \(what) where the bundle's files give \(fact.file) \(fact.proven ? "proven" : "stated"): a statement presented as proven, or the story reordered"
            )
        }
        guard claimed.count == facts.count else {
            throw DoesNotHold(file: "manifest.json", reason: "its facts list \(claimed.count) links; the bundle's files give \(facts.count)")
        }
    }

    /// An event's line of the story.
    static func line(_ event: RecordedEvent) -> String {
        "event \(event.sequence), \(event.recordedAt.rfc3339), \(event.type.rawValue): \(InertText.forScreen(EventQuery.summary(event)))"
    }

    /// An apply row's line of the story, from the manifest's entry.
    private static func line(apply entry: JSONValue) -> String {
        func value(_ name: String) -> String { entry[name].map { $0.stringValue.map(InertText.forScreen) ?? "NULL" } ?? "?" }
        return "apply run \(value("run")) batch \(entry["batch"]?.intValue.map(String.init) ?? "?") (event \(entry["seq"]?.intValue ?? 0)): "
            + "\(value("outcome")), \(value("old_value")) → \(value("new_value"))"
    }

    /// The sequence numbers named by the files `NAME<suffix>` in `sub`; a name that is not a
    /// decimal sequence number (no leading zeros) fails.
    private static func names(in directory: String, _ sub: String, suffix: String, optional: Bool = false) throws -> Set<UInt64> {
        let files: [String]
        if optional && !FileManager.default.fileExists(atPath: directory + "/" + sub) { return [] }
        do { files = try FileManager.default.contentsOfDirectory(atPath: directory + "/" + sub) } catch {
            throw DoesNotHold(file: sub, reason: "missing or unreadable (\(error.localizedDescription))")
        }
        var sequences = Set<UInt64>()
        for file in files {
            let stem = file.hasSuffix(suffix) ? String(file.dropLast(suffix.count)) : ""
            guard let sequence = UInt64(stem), String(sequence) == stem, sequence > 0 else {
                throw DoesNotHold(file: "\(sub)/\(file)", reason: "not SEQ\(suffix)")
            }
            sequences.insert(sequence)
        }
        return sequences
    }
}
