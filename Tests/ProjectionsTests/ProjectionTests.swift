import Basics
import Foundation
import LMDB
import LedgerSamples
import LogEngine
import Synchronization
import TestSupport
import Testing

@testable import Ledger
@testable import Projections

@Suite("Projections")
struct ProjectionTests {
    let dir = TemporaryDirectory()

    private func open(foldMemory: Int = UserProjection.defaultFoldMemory) async throws -> (Ledger, UserProjection) {
        let projection = UserProjection(foldMemory: foldMemory)
        return (try await Ledger.create(at: dir.sub("l"), testIdentity(), folders: [projection]), projection)
    }

    /// Users t0…t(count-1): every `failingEvery`th one's exchange timed out, the others exchanged.
    private func appendUsers(_ count: Int, failingEvery: Int, to ledger: Ledger) async throws {
        for i in 0..<count { _ = try await ledger.append(i % failingEvery == 0 ? fail("t\(i)", .timeout) : exchanged("t\(i)", "r\(i)")) }
    }

    private func user(_ id: String, _ ledger: Ledger, _ projection: UserProjection) throws -> UserState? {
        try projection.read(ledger) { snapshot, _ in try snapshot.user(matching: id) }
    }

    private func fail(_ transferSub: String, _ kind: FailureClass) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: kind, message: kind.rawValue))),
            identifiers: Identifiers(accountID: "acct-" + transferSub, transferSub: transferSub))
    }

    private func exchanged(_ transferSub: String, _ sub: String, email: SealedValue? = nil) -> EventDraft {
        EventDraft(
            .transferIDExchanged(TransferIDExchanged(email: email, isPrivateEmail: true)),
            identifiers: Identifiers(transferSub: transferSub, recipientSub: sub))
    }

    private func notification(_ sub: String, _ kind: NotificationReceived.Kind, jti: String) -> EventDraft {
        let t = Timestamp(rfc3339: "2026-11-20T10:00:00Z")!
        return EventDraft(
            .notificationReceived(NotificationReceived(kind: kind, eventTime: t)), identifiers: Identifiers(recipientSub: sub, jti: jti),
            occurredAt: t, idempotencyKey: "notification:\(jti)")
    }

    private func signIn(_ sub: String, transferSub: String?) -> EventDraft {
        let t = Timestamp(rfc3339: "2026-11-15T08:00:00Z")!
        return EventDraft(
            .signInVerified(SignInVerified(audience: "com.example.test", issuedAt: t, expiresAt: t.adding(days: 1))),
            identifiers: Identifiers(transferSub: transferSub, recipientSub: sub), occurredAt: t)
    }

    @Test("exchange, failure and retry: attempts, last error and status follow the events")
    func exchangeRules() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        _ = try await ledger.append(fail("t1", .rateLimited))
        var u = try #require(try user("t1", ledger, projection))
        #expect(u.status == .failed && u.attempts == 1 && u.lastErrorClass == .rateLimited)
        #expect(try user("acct-t1", ledger, projection)?.key == u.key)
        _ = try await ledger.append(exchanged("t1", "r1"))
        u = try #require(try user("r1", ledger, projection))
        #expect(u.status == .migrated && u.migratedVia == .exchange && u.attempts == 2 && u.lastError == nil && u.accountID == "acct-t1")
        // A later failure does not undo a migration.
        _ = try await ledger.append(fail("t1", .serverError))
        #expect(try user("t1", ledger, projection)?.status == .migrated)
    }

    @Test("a sign-in with transfer_sub migrates a pending user via sign-in, unless an exchange already did")
    func signInRules() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        _ = try await ledger.append(fail("t2", .invalidRequest))
        _ = try await ledger.append(signIn("r2", transferSub: "t2"))
        let u = try #require(try user("acct-t2", ledger, projection))
        #expect(u.status == .migrated && u.migratedVia == .signIn && u.recipientSub == "r2")
        #expect(u.migratedAt == Timestamp(rfc3339: "2026-11-15T08:00:00Z"))
        _ = try await ledger.append(exchanged("t3", "r3"))
        _ = try await ledger.append(signIn("r3", transferSub: "t3"))
        #expect(try user("r3", ledger, projection)?.migratedVia == .exchange)
        _ = try await ledger.append(signIn("r-new", transferSub: nil))
        #expect(try user("r-new", ledger, projection)?.status == .unmatched)
    }

    @Test("notifications set forwarding, consent and deletion; unknown subs are kept as unmatched and later joined")
    func notificationRules() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        _ = try await ledger.append(exchanged("t4", "r4"))
        _ = try await ledger.append(notification("r4", .emailDisabled, jti: "j1"))
        _ = try await ledger.append(notification("r4", .consentRevoked, jti: "j2"))
        _ = try await ledger.append(notification("r4", .accountDeleted, jti: "j3"))
        let redelivered = try await ledger.append(notification("r4", .accountDeleted, jti: "j3"))
        #expect(!redelivered.isRecorded)
        let u = try #require(try user("t4", ledger, projection))
        #expect(u.emailForwarding == false && u.consentRevokedAt != nil && u.accountDeletedAt != nil && u.notifications == 3)
        _ = try await ledger.append(notification("r5", .emailEnabled, jti: "j4"))
        #expect(try user("r5", ledger, projection)?.status == .unmatched)
        // A sign-in with transfer_sub joins the unmatched record to the migration record.
        _ = try await ledger.append(fail("t5", .timeout))
        _ = try await ledger.append(signIn("r5", transferSub: "t5"))
        let joined = try #require(try user("r5", ledger, projection))
        #expect(joined.status == .migrated && joined.emailForwarding == true && joined.attempts == 1 && joined.accountID == "acct-t5")
        #expect(try user("t5", ledger, projection)?.key == joined.key)
        let count = try projection.read(ledger) { snapshot, _ in try snapshot.allUsers().count }
        #expect(count == 2)
    }

    @Test("erase removes the plaintext, shows the email as erased and keeps verify green")
    func erase() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        let sealed = try await ledger.sealer.seal("relay-77@privaterelay.appleid.com", for: Identifier(.recipientSub, "r7"))
        _ = try await ledger.append(exchanged("t7", "r7", email: sealed))
        let before = try projection.read(ledger) { s, _ in try ComplianceQueries(snapshot: s, time: .now(), sealer: ledger.sealer).user("t7")!.email }
        #expect(before == .clear("relay-77@privaterelay.appleid.com"))
        let eraser = UserEraser(ledger: ledger, projection: projection)
        #expect(try await eraser.erase("acct-nonexistent", reason: "x") == nil)
        let result = try #require(try await eraser.erase("t7", reason: "request"))
        #expect(result.keysDestroyed == 1 && !result.alreadyErased)
        let after = try projection.read(ledger) { s, _ in try ComplianceQueries(snapshot: s, time: .now(), sealer: ledger.sealer).user("r7")!.email }
        #expect(after == .erased && after.cell == .text("(erased)"))
        #expect(try !filesContain(dir.path, "relay-77@privaterelay.appleid.com"))
        #expect(try ledger.verify().isIntact)
        #expect(try await UserEraser(ledger: ledger, projection: projection).erase("r7", reason: "again")?.alreadyErased == true)
    }

    @Test("rebuild reproduces the projections byte for byte")
    func rebuildIsIdentical() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        _ = try await ledger.append(contentsOf: EventSamples.all())
        for i in 0..<300 {
            _ = try await ledger.append(i % 3 == 0 ? fail("t\(i)", .rateLimited) : exchanged("t\(i)", "r\(i)"))
            if i % 7 == 0 { _ = try await ledger.append(notification("r\(i)", .emailDisabled, jti: "n\(i)")) }
            if i % 11 == 0 { _ = try await ledger.append(signIn("r\(i)", transferSub: "t\(i)")) }
        }
        _ = try await ledger.append(notification("stranger", .consentRevoked, jti: "n-stranger"))
        let before = try dumpProjections(ledger)
        #expect(before.count > 600)
        try projection.rebuild(ledger)
        #expect(try dumpProjections(ledger) == before)
        // In small transactions, twice more (back to the first generation's databases).
        for _ in 0..<2 {
            try projection.rebuild(ledger, chunk: 37)
            #expect(try dumpProjections(ledger) == before)
        }
    }

    @Test(
        "a rebuild whose fold writes a sorted run after every few events loads, from their merge, the projections the event-by-event fold wrote, byte for byte: merges, rows named twice in one event, keys written again; the deep check over the same runs agrees, and finds one changed byte"
    )
    func sortedRunsMerged() async throws {
        // A budget of one byte: every chunk's records become a run of their own, and the
        // working state is kept in files of the scratch directory.
        let (ledger, projection) = try await open(foldMemory: 1)
        defer { ledger.close() }
        _ = try await ledger.append(contentsOf: EventSamples.all())
        for i in 0..<120 {
            // Unmatched first (a notification), then joined by the exchange's sign-in: merges.
            if i % 5 == 0 { _ = try await ledger.append(notification("r\(i)", .emailEnabled, jti: "early\(i)")) }
            _ = try await ledger.append(i % 4 == 0 ? fail("t\(i)", .timeout) : exchanged("t\(i)", "r\(i)"))
            if i % 3 == 0 { _ = try await ledger.append(signIn("r\(i)", transferSub: "t\(i)")) }
        }
        // One event naming the same rows twice, and rows of users already known: the same
        // user_versions and user_links keys written more than once by one event.
        let rows = HandoffRowsReceived(
            origin: "sender", package: 1, manifestSHA256: String(repeating: "a", count: 64), fileSHA256: String(repeating: "b", count: 64),
            chunk: 0, chunkCount: 1, rowCount: 6, firstRow: 0, accountIDs: ["acct-t1", "", "acct-x", "acct-t2", "", "acct-y"],
            transferSubs: ["t1", "tx", "tx", "t2", "t-noaccount", "t2"], sequences: [1, 2, 3, 4, 5, 6])
        let key = HandoffRowsReceived.idempotencyKey(origin: "sender", package: 1, fileSHA256: rows.fileSHA256, chunk: 0)
        _ = try await ledger.append(EventDraft(.handoffRowsReceived(rows), idempotencyKey: key))
        // The same in v2 form, its rows kept beside the event: the folds read them from there.
        let beside = HandoffRowsReceived(
            origin: "sender", package: 2, manifestSHA256: String(repeating: "c", count: 64), fileSHA256: String(repeating: "d", count: 64),
            chunk: 0, chunkCount: 1, rowCount: 4, firstRow: 0, accountIDs: ["acct-t3", "", "acct-z", "acct-t7"],
            transferSubs: ["t3", "t-beside", "t-beside-2", "t7"], sequences: [7, 8, 9, 10], salts: (0..<4).map { _ in RowTree.newSalt() })
        _ = try await ledger.append(EventDraft(.handoffRowsReceived(beside), idempotencyKey: beside.idempotencyKey))
        for i in 120..<160 { _ = try await ledger.append(exchanged("t\(i)", "r\(i)")) }
        let before = try dumpProjections(ledger)
        #expect(
            try ProjectionAudit.run(ledger: ledger, projection: projection, scratch: dir.sub("audit"), chunk: 7, foldMemory: 1) == nil,
            "the deep check, its fold in runs of 7 events")
        for chunk: UInt64 in [3, 64] {
            try projection.rebuild(ledger, chunk: chunk)
            #expect(try dumpProjections(ledger) == before, "rebuilt \(chunk) events per transaction")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.sub("audit")))
        // One byte of one stored user record changed: found, named.
        try ledger.environment.write { txn in
            let root = try txn.openDatabase(ProjectionDatabases.rootName, create: false)
            let generation = try txn.get(root, key: ProjectionDatabases.generationKey).map { try BigEndian.uint64($0) } ?? 0
            let versions = try txn.openDatabase(ProjectionDatabases.names(generation: generation)[0], create: false)
            let (key, value) = try #require(try txn.withCursor(versions) { try $0.last().map { (Array($0.key), Array($0.value)) } })
            var changed = value
            changed[changed.count - 1] ^= 1
            try txn.put(versions, key: key, value: changed)
        }
        let mismatch = try ProjectionAudit.run(ledger: ledger, projection: projection, chunk: 7, foldMemory: 1)
        #expect(mismatch?.database == "user_versions")
    }

    @Test(
        "a fold with more run files than it may hold open merges them as it goes (the newest, or all), and one whose working state spills to the scratch directory (a budget of a byte) gives the same entries and state"
    )
    func runFilesMergedAsTheyGrow() async throws {
        let (ledger, _) = try await open()
        defer { ledger.close() }
        try await appendUsers(300, failingEvery: 3, to: ledger)
        let head = try ledger.read { try $0.head().sequence }
        func entries(memory: Int, mostRunFiles: Int) throws -> (entries: [[UInt8]], spilled: Int) {
            let fold = try SortedFold(
                directory: dir.sub("fold-\(memory)-\(mostRunFiles)"), for: ledger.environment, schema: ledger.schema, memory: memory,
                mostRunFiles: mostRunFiles)
            defer { fold.remove() }
            try fold.fold(through: head, chunk: 5, events: { range in try ledger.read { try $0.events(range) } })
            let entries = try fold.withEntries { folded in
                var all: [[UInt8]] = fold.stateEntries.flatMap { [$0.key, $0.value] }
                while let (table, key, value) = try folded.next() {
                    all.append([table.rawValue] + Array(key))
                    all.append(Array(value))
                }
                return all
            }
            return (entries, fold.spilledBytes)
        }
        let whole = try entries(memory: 64 << 20, mostRunFiles: 256)
        #expect(whole.entries.count > 1_000 && whole.spilled == 0)
        let merged = try entries(memory: 1, mostRunFiles: 3)
        #expect(merged.entries == whole.entries && merged.spilled > 0, "runs of a byte, merged 3 at a time; the working state in files")
        // Up to 6 files: the runs since the last merge are merged, beside the earlier merges.
        #expect(try entries(memory: 1, mostRunFiles: 6).entries == whole.entries)
    }

    /// Where a rebuild is interrupted.
    enum RebuildStop: String, CustomTestStringConvertible, Sendable {
        case afterFold, whileLoading, whileFoldingWhatFollowed
        var testDescription: String { rawValue }
    }

    @Test(
        "a rebuild interrupted after its fold, while loading or while folding what was appended since leaves the projections in use untouched, and running it again finishes it, with what was appended meanwhile",
        arguments: [RebuildStop.afterFold, .whileLoading, .whileFoldingWhatFollowed])
    func interruptedRebuild(at stop: RebuildStop) async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        try await appendUsers(200, failingEvery: 4, to: ledger)
        let before = try dumpProjections(ledger)
        struct Interrupted: Error {}
        var calls = 0
        var heard: [UInt64] = []
        // 25 × 8 entries per loading transaction: the 201 events' entries take several.
        #expect(throws: Interrupted.self) {
            try projection.rebuild(ledger, chunk: 25) { folded, _ in
                calls += 1
                heard.append(folded)
                switch stop {
                case .afterFold: throw Interrupted()
                case .whileLoading: if calls == 3 { throw Interrupted() }
                case .whileFoldingWhatFollowed:
                    if calls == 2 { try appendWaiting(ledger, (0..<100).map { exchanged("late\($0)", "later\($0)") }) }
                    if folded > 201 { throw Interrupted() }
                }
            }
        }
        #expect(heard.first == 201, "the fold reports the whole log")
        switch stop {
        case .afterFold: #expect(heard == [201])
        case .whileLoading: #expect(heard == [201, 201, 201], "the load reports the head it loads")
        case .whileFoldingWhatFollowed: #expect(heard.last.map { $0 > 201 && $0 < 301 } == true)
        }
        if stop != .whileFoldingWhatFollowed {
            #expect(try dumpProjections(ledger) == before, "readers still see the whole projections in use")
        }
        let audit = dir.sub("audit-\(stop.rawValue)")
        #expect(try ProjectionAudit.run(ledger: ledger, projection: projection, scratch: audit) == nil, "the projections in use agree with the log")
        #expect(!FileManager.default.fileExists(atPath: audit), "the deep check removes its scratch directory")
        #expect(try user("t8", ledger, projection)?.status == .failed)
        // Appended during the interrupted rebuild: folded into the generation in use, and into
        // the new one when the rebuild continues.
        _ = try await ledger.append(exchanged("t8", "r8"))
        _ = try await ledger.append(signIn("r300", transferSub: "t300"))
        let expected = try dumpProjections(ledger)
        // A scratch directory that exists cannot be used: refused where the rebuild has its
        // load to do again, and not needed, so untouched, where only its fold is left.
        let existing = dir.sub("existing-\(stop.rawValue)")
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        if stop == .whileFoldingWhatFollowed {
            try projection.rebuild(ledger, chunk: 25, scratch: existing)
        } else {
            let rebuildKeys = {
                try ledger.read { view in
                    let root = try view.transaction.openDatabase(ProjectionDatabases.rootName, create: false)
                    return try [ProjectionDatabases.rebuildingKey, ProjectionDatabases.loaderKey].map {
                        try view.transaction.get(root, key: $0).map(Array.init)
                    }
                }
            }
            let keysBefore = try rebuildKeys()
            #expect(throws: (any Error).self) { try projection.rebuild(ledger, chunk: 25, scratch: existing) }
            #expect(try rebuildKeys() == keysBefore, "the refused rebuild wrote nothing")
            try projection.rebuild(ledger, chunk: 25)
        }
        #expect(FileManager.default.fileExists(atPath: existing))
        #expect(try dumpProjections(ledger) == expected)
        #expect(try user("t8", ledger, projection)?.status == .migrated)
        #expect(try ledger.read { view in try projection.checkpoint(in: view.transaction) } == (try ledger.read { try $0.head().sequence }))
    }

    @Test("a rebuild begun while another loads takes the load over: the first stops with taken-over, and the projections end as the log implies")
    func rebuildTakenOver() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        try await appendUsers(120, failingEvery: 5, to: ledger)
        let before = try dumpProjections(ledger)
        struct Interrupted: Error {}
        var outerCalls = 0
        #expect {
            try projection.rebuild(ledger, chunk: 10) { _, _ in
                outerCalls += 1
                guard outerCalls == 2 else { return }
                // Mid-load, a second rebuild begins (and stops after its scratch fold).
                #expect(throws: Interrupted.self) { try projection.rebuild(ledger, chunk: 10) { _, _ in throw Interrupted() } }
            }
        } throws: { error in
            (error as? LedgerError)?.code == .takenOver
        }
        #expect(try dumpProjections(ledger) == before)
        try projection.rebuild(ledger, chunk: 10)
        #expect(try dumpProjections(ledger) == before)
    }

    @Test("--as-of answers from the events recorded by then")
    func asOf() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        let failed = try await ledger.append(fail("t8", .serverError))
        guard case .recorded(_, let firstTime) = failed else {
            Issue.record("not recorded")
            return
        }
        try await Task.sleep(nanoseconds: 5_000_000)
        let done = try await ledger.append(exchanged("t8", "r8"))
        guard case .recorded(_, let secondTime) = done else {
            Issue.record("not recorded")
            return
        }
        #expect(firstTime < secondTime)
        let then = try projection.read(ledger, asOf: firstTime) { s, _ in (try s.user(matching: "t8"), try s.user(matching: "r8")) }
        #expect(then.0?.status == .failed)
        #expect(then.1 == nil)
        let now = try projection.read(ledger, asOf: secondTime) { s, _ in (try s.user(matching: "r8"), try s.allUsers()) }
        #expect(now.0?.status == .migrated)
        let stored = try projection.read(ledger) { s, _ in try s.allUsers() }
        #expect(now.1 == stored, "the stored versions as of the last event agree with the projection")
        #expect(try projection.read(ledger, asOf: Timestamp(microseconds: 0)) { s, _ in try s.allUsers() }.isEmpty)
    }

    @Test("as of every event, the stored versions answer what folding the log up to it gives: users, links, merges, order, window")
    func asOfEveryEvent() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        _ = try await ledger.append(contentsOf: EventSamples.all())
        for i in 0..<40 {
            _ = try await ledger.append(i % 3 == 0 ? fail("t\(i)", .rateLimited) : exchanged("t\(i)", "r\(i)"))
            if i % 4 == 0 { _ = try await ledger.append(notification("r\(i)", .emailDisabled, jti: "n\(i)")) }
            if i % 5 == 0 { _ = try await ledger.append(signIn("r\(i)", transferSub: "t\(i)")) }
            if i % 6 == 0 { _ = try await ledger.append(exchanged("t\(i)", "r\(i)")) }
        }
        // Unmatched users later joined to migration records (merges).
        for i in 40..<46 {
            _ = try await ledger.append(notification("r\(i)", .consentRevoked, jti: "n\(i)"))
            _ = try await ledger.append(fail("t\(i)", .timeout))
            _ = try await ledger.append(signIn("r\(i)", transferSub: "t\(i)"))
        }
        let head = try ledger.read { try $0.head().sequence }
        let expected = ReferenceFold()
        // The events naming each identifier, in order, read once.
        var namingAll: [Identifier: [UInt64]] = [:]
        try ledger.read { view in
            try view.forEachEvent(from: 1, through: head) { event in
                for kind in IdentifierKind.allCases {
                    if let value = event.identifiers[kind] { namingAll[Identifier(kind, value), default: []].append(event.sequence) }
                }
            }
        }
        for sequence in 1...head {
            let time = try #require(try ledger.read { try $0.event(sequence) }).recordedAt
            let (last, users, migrated, window, byIdentifier, eventLists, linked) = try projection.read(ledger, asOf: time) { snapshot, _ in
                let users = try snapshot.allUsers()
                let byIdentifier = try users.flatMap { user in try user.identifiers.map { ($0, try snapshot.user(with: $0)) } }
                let eventLists = try users.flatMap { user in try user.identifiers.map { ($0, try snapshot.eventSequences(linkedTo: [$0])) } }
                return (
                    try snapshot.checkpoint(), users, try snapshot.migratedUsers(), try snapshot.window(), byIdentifier, eventLists,
                    try snapshot.allLinkedUsers(.transferSub)
                )
            }
            // Events committed together share a recorded time: the picture ends at the last of them.
            #expect(last >= sequence)
            try expected.advance(through: last, in: ledger)
            #expect(try users == expected.allUsers(), "users as of \(last)")
            #expect(try migrated == expected.migratedUsers(), "migrated order as of \(last)")
            #expect(try window == expected.window(), "window as of \(last)")
            #expect(try linked == expected.allLinkedUsers(.transferSub), "transfer_subs in byte order, first linked and their users, as of \(last)")
            for (id, user) in byIdentifier { #expect(try user == expected.user(with: id), "\(id) as of \(last)") }
            // Each identifier's event list is its users' events, and holds every event naming it.
            for (id, sequences) in eventLists {
                #expect(try sequences == expected.eventSequences(linkedTo: [id]), "events of \(id) as of \(last)")
                let naming = (namingAll[id] ?? []).filter { $0 <= last }
                #expect(Set(naming).isSubset(of: Set(sequences)), "events naming \(id) as of \(last)")
            }
        }
    }

    @Test(
        "projections of an older layout beside a log longer than bulkLoadBeyond are loaded in key order at the next writable open and end as the fold left them; a load that cannot start (its scratch directory exists) leaves the directory alone and the log is folded instead"
    )
    func openLoadsInBulk() async throws {
        let path = dir.sub("l")
        let before: [[UInt8]]
        do {
            let (ledger, _) = try await open()
            try await appendUsers(300, failingEvery: 4, to: ledger)
            before = try dumpProjections(ledger)
            ledger.close()
        }
        let existing = dir.sub("existing")
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        for (scratch, step) in [
            (nil, "projections: loaded 301 events in key order"), (existing, "projections: folded 301 events the log held beyond them"),
        ] {
            do {
                let bare = try Ledger.open(at: path)
                let forgot = try bare.environment.write { txn in
                    try txn.delete(try txn.openDatabase(ProjectionDatabases.rootName, create: false), key: ProjectionDatabases.layoutKey)
                }
                #expect(forgot)
                bare.close()
            }
            var options = Ledger.Options()
            options.bulkLoadBeyond = 100
            let ledger = try Ledger.open(at: path, folders: [UserProjection(scratch: scratch)], options: options)
            #expect(ledger.upgrades == [step])
            #expect(try dumpProjections(ledger) == before)
            let leftOver = try ledger.read { view in
                let root = try view.transaction.openDatabase(ProjectionDatabases.rootName, create: false)
                return try [ProjectionDatabases.rebuildingKey, ProjectionDatabases.loaderKey].filter {
                    try view.transaction.get(root, key: $0) != nil
                }
            }
            #expect(leftOver.isEmpty, "no rebuild is left under way")
            ledger.close()
        }
        #expect(FileManager.default.fileExists(atPath: existing))
    }

    @Test("projections catch up with events appended by a process that did not fold them")
    func catchUp() async throws {
        let path = dir.sub("l")
        try await Ledger.create(at: path, testIdentity(), folders: [UserProjection()]).close()
        let bare = try Ledger.open(at: path)
        _ = try await bare.append(exchanged("t9", "r9"))
        bare.close()
        let projection = UserProjection()
        let ledger = try Ledger.open(at: path, folders: [projection])
        defer { ledger.close() }
        #expect(try user("t9", ledger, projection)?.status == .migrated)
        #expect(try ledger.read { view in try projection.checkpoint(in: view.transaction) } == 2)
    }

    @Test("the window gives the deadline and days left")
    func window() async throws {
        let (ledger, projection) = try await open()
        defer { ledger.close() }
        let accepted = Timestamp(rfc3339: "2026-11-01")!
        try await WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: accepted, correcting: false)
        let w = try #require(try projection.read(ledger) { s, _ in try s.window() })
        #expect(w.deadline == Timestamp(rfc3339: "2026-12-31"))
        #expect(w.daysLeft(at: Timestamp(rfc3339: "2026-12-30T12:00:00Z")!) == 1)
        #expect(w.daysLeft(at: Timestamp(rfc3339: "2027-01-05")!) == 0)
        await #expect(throws: WindowRecorder.Refusal.self) {
            try await WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: Timestamp(rfc3339: "2026-11-03")!, correcting: false)
        }
        #expect(try await !WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: accepted, correcting: false))
    }
}

/// Every key and value of the projection databases in use (and their checkpoint and user-key
/// counter, not the root's bookkeeping of generations).
func dumpProjections(_ ledger: Ledger) throws -> [[UInt8]] {
    try ledger.read { view in
        let txn = view.transaction
        let root = try txn.openDatabase(ProjectionDatabases.rootName, create: false)
        let generation = try txn.get(root, key: ProjectionDatabases.generationKey).map { try BigEndian.uint64($0) } ?? 0
        var all: [[UInt8]] = []
        let names = ProjectionDatabases.names(generation: generation)
        for name in names.dropLast() {
            let db = try txn.openDatabase(name, create: false)
            try txn.withCursor(db) { cursor in
                var entry = try cursor.first()
                while let (k, v) = entry {
                    all.append(Array(k))
                    all.append(Array(v))
                    entry = try cursor.next()
                }
            }
        }
        let state = try txn.openDatabase(names.last!, create: false)
        for key in [ProjectionDatabases.checkpointKey, ProjectionDatabases.nextUserKey, ProjectionDatabases.layoutKey] {
            all.append(key)
            all.append(try txn.get(state, key: key) ?? txn.get(root, key: key) ?? [])
        }
        return all
    }
}

/// Appends `drafts` from synchronous code (a rebuild's progress handler), waiting for the commit.
func appendWaiting(_ ledger: Ledger, _ drafts: [EventDraft]) throws {
    let done = DispatchSemaphore(value: 0)
    let failure = Mutex<(any Error)?>(nil)
    Task.detached {
        do { _ = try await ledger.append(contentsOf: drafts) } catch { failure.withLock { $0 = error } }
        done.signal()
    }
    done.wait()
    if let error = failure.withLock({ $0 }) { throw error }
}
