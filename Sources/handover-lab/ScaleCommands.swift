import ArgumentParser
import Basics
import CLMDB
import Foundation
@_spi(Benchmark) import LMDB
@_spi(Benchmark) import Ledger
import LogEngine
import Projections

// The writers behind `tools/bench --scale`. This file compiles against the commit before
// ledger format 2 as well: tools/bench copies it into that worktree with `#if BASELINE` turned
// into `#if true`, so it uses only the API both have; the raw replay is the one difference.

/// `handover-lab scale-write`: a realistic recipient ledger of about `--events` events.
///
/// Users are exchanged in chunks of 256 by 8 concurrent producers (group commit): about 5%
/// fail once (rate limited) and are retried, 10% get a notification from Apple afterwards,
/// and one in 100,000 is erased. Each user's relay address is sealed with its own data key.
/// Prints one JSON object: the append rate, the event JSON bytes, and sample identifiers and
/// times for the query measurements.
struct ScaleWriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-write", abstract: "Write a realistic ledger of about N events and print its figures as JSON.")

    @Option var ledger: String
    @Option(help: "Events to write (about).") var events: Int
    @Option(help: "Sample identifiers to print.") var samples = 400

    func run() async throws {
        var options = Ledger.Options()
        options.mapSize = 1 << 30
        let identity = LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.scale"], role: .recipient, ledgerID: "scale")
        let ledger = try await Ledger.create(at: self.ledger, identity, folders: [UserProjection()], options: options)
        let users = Int(Double(events) / 1.15)
        let chunk = 256
        let producers = 8
        let start = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<producers {
                group.addTask {
                    var first = lane * chunk
                    while first < users {
                        let range = first..<min(first + chunk, users)
                        _ = try await ledger.append(contentsOf: try ScaleMix.drafts(for: range, ledger: ledger))
                        first += producers * chunk
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = Date().timeIntervalSince(start)
        // Sample users and times for the queries, and the bytes of event JSON.
        var generator = SystemRandomNumberGenerator()
        let picked = (0..<samples).map { _ in Int.random(in: 0..<users, using: &generator) }
        let (count, jsonBytes, times) = try ledger.read { view in
            try view.transaction.withCursor(ledger.schema.log) { cursor in
                var count = 0
                var bytes = 0
                var entry = try cursor.first()
                while let (_, value) = entry {
                    count += 1
                    bytes += value.count - 32
                    entry = try cursor.next()
                }
                let times = try (0..<samples).map { _ in try view.event(UInt64.random(in: 2...UInt64(count), using: &generator))!.recordedAt.rfc3339 }
                return (count, bytes, times)
            }
        }
        ledger.close()
        let summary = ScaleWriteSummary(
            events: count, users: users, seconds: seconds, appendsPerSecond: Double(count) / seconds, jsonBytes: jsonBytes,
            sampleUsers: picked.map { ScaleMix.identifiers(of: $0) }.map { [$0.accountID!, $0.transferSub!, $0.recipientSub!] }, sampleTimes: times)
        print(String(decoding: try JSONEncoder.sortedKeys().encode(summary), as: UTF8.self))
    }
}

/// `handover-lab scale-appenders`: new users' exchanges appended to an existing ledger by
/// `--tasks` tasks, each handing over `--batch` events per append and awaiting them: 64 tasks
/// of 1 are 64 concurrent single-event appenders, 8 tasks of 256 a group-committed bulk load.
/// The events are made before the clock starts (one shared data key), so the figure is the
/// ledger's own.
struct ScaleAppendersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-appenders", abstract: "Append N new users' exchanges from concurrent appenders; print events/s as JSON.")

    @Option var ledger: String
    @Option var count = 50_000
    @Option var tasks = 64
    @Option(help: "Events per append call.") var batch = 1
    @Option(
        help:
            "Also replay the appends' writes through raw LMDB into a copy of the ledger's environment made before them, in this directory (emptied first): the same writes on the same trees. Skipped, and said so, when the disk has no room for the copy."
    )
    var raw: String?

    func run() async throws {
        let copied = try raw.map { try RawReplay.copy(ofLedgerAt: self.ledger, into: $0) } ?? false
        let ledger = try Ledger.open(at: self.ledger, folders: [UserProjection()])
        let key = try await ledger.sealer.requireKeyStore().dataKey(for: Identifier(.recipientSub, "appenders-shared-key"))
        let prefix = "appender-\(UUID().uuidString.prefix(8))"
        let drafts = try (0..<count).map { i in
            try SyntheticEvents.exchange(i, prefix: prefix) { text, _ in try Sealer.seal(text, keyID: key.id, key: key.key) }
        }
        let lanes = tasks
        let size = batch
        let recorder = RawReplay.recorder(bytes: copied ? count * 1_300 : 0, puts: copied ? count * 10 : 0)
        if copied { ledger.environment.recorder = recorder }
        // Both sides start cold only when there are two sides to compare.
        let cold = copied && PageCache.drop()
        let start = Date()
        try await ConcurrentAppends.append(drafts, to: ledger, lanes: lanes, size: size)
        let seconds = Date().timeIntervalSince(start)
        ledger.environment.recorder = nil
        ledger.close()
        var figures: [String: Double] = [
            "events": Double(count), "tasks": Double(lanes), "batch": Double(size), "seconds": seconds,
            "appends_per_second": Double(count) / seconds, "started_cold": cold ? 1 : 0,
        ]
        if let raw, copied {
            _ = PageCache.drop()
            let rawSeconds = try RawReplay.perTransaction(recorder, into: raw).reduce(0, +)
            // Scratch space only: a directory left behind costs disk, not a figure.
            try? FileManager.default.removeItem(atPath: raw)
            figures["raw_appends_per_second"] = Double(count) / rawSeconds
            figures["ratio_to_raw"] = rawSeconds / seconds
            figures["commits"] = Double(recorder.transactions.count)
        }
        print(String(decoding: try JSONEncoder.sortedKeys().encode(figures), as: UTF8.self))
    }
}

/// `handover-lab scale-singles`: durable single appends, one after another, against raw LMDB
/// replaying the identical transactions (same puts, synced commit) into a fresh environment.
struct ScaleSinglesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale-singles", abstract: "Durable single appends on a ledger against raw LMDB replaying them; print p50/p99 as JSON.")

    @Option var ledger: String
    @Option var count = 2_000
    @Option(help: "Scratch directory for the raw environment (emptied first).") var raw = "/tmp/handover-scale-raw"

    func run() async throws {
        // Raw LMDB replays the same writes on the same trees: a copy of the environment as it
        // stands before them, or, without room for one, a fresh environment (said in the output).
        let copied = try RawReplay.copy(ofLedgerAt: self.ledger, into: raw)
        let ledger = try Ledger.open(at: self.ledger, folders: [UserProjection()])
        let key = try await ledger.sealer.requireKeyStore().dataKey(for: Identifier(.recipientSub, "singles-shared-key"))
        let recorder = WriteRecorder()
        ledger.environment.recorder = recorder
        // Each side starts cold, and with the copy's writes on disk: left dirty, they would be
        // flushed by the raw side's first syncs.
        let cold = PageCache.drop()
        var latencies: [Double] = []
        for i in 0..<count {
            let draft = try SyntheticEvents.exchange(i, prefix: "single-\(UUID().uuidString.prefix(8))") { text, _ in
                try Sealer.seal(text, keyID: key.id, key: key.key)
            }
            let t = DispatchTime.now()
            _ = try await ledger.append(draft)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t.uptimeNanoseconds) / 1e9)
        }
        ledger.environment.recorder = nil
        ledger.close()
        if cold { _ = PageCache.drop() }
        let rawLatencies = try RawReplay.perTransaction(recorder, into: raw)
        // Scratch space only: a directory left behind costs disk, not a figure.
        try? FileManager.default.removeItem(atPath: raw)
        func p(_ values: [Double], _ q: Double) -> Double { values.sorted()[min(values.count - 1, Int(Double(values.count) * q))] * 1e6 }
        print(
            "{\"count\":\(count),\"p50_us\":\(p(latencies, 0.5)),\"p99_us\":\(p(latencies, 0.99)),\"raw_p50_us\":\(p(rawLatencies, 0.5)),\"raw_p99_us\":\(p(rawLatencies, 0.99)),\"raw_on_copy\":\(copied),\"started_cold\":\(cold ? 1 : 0)}"
        )
    }
}

/// The events of the scale ledger: which users fail first, get notified or are erased.
enum ScaleMix {
    static func identifiers(of i: Int) -> Identifiers {
        let tag = SyntheticEvents.hex("scale/\(i)")
        return Identifiers(
            accountID: "acct-\(i)", transferSub: "t" + SyntheticEvents.hex("t\(tag)"), recipientSub: "001\(100 + i % 900).\(tag).\(1000 + i % 9000)")
    }

    /// The events of users `range`, in the order a run and Apple would produce them.
    static func drafts(for range: Range<Int>, ledger: Ledger) throws -> [EventDraft] {
        let ids = range.map(identifiers(of:))
        let keys = try ledger.sealer.requireKeyStore().dataKeys(for: ids.map { Identifier(.transferSub, $0.transferSub!) })
        var drafts: [EventDraft] = []
        drafts.reserveCapacity(range.count * 6 / 5)
        for (n, i) in range.enumerated() where i % 20 == 7 {
            let failure = CallFailure(kind: .rateLimited, httpStatus: 429, message: "HTTP 429 from /auth/usermigrationinfo", attempts: 3)
            drafts.append(
                EventDraft(
                    .transferIDExchangeFailed(TransferIDExchangeFailed(failure: failure)),
                    identifiers: Identifiers(accountID: ids[n].accountID, transferSub: ids[n].transferSub), runID: "scale-run"))
        }
        for (n, _) in range.enumerated() {
            // The tag's first 20 hex digits: an address of the user's own, as unique as Apple's.
            let tag = ids[n].recipientSub!.split(separator: ".")[1].prefix(20)
            let email = try Sealer.seal("\(tag)@privaterelay.appleid.com", keyID: keys[n].id, key: keys[n].key)
            drafts.append(
                EventDraft(
                    .transferIDExchanged(TransferIDExchanged(email: email, isPrivateEmail: true)), identifiers: ids[n],
                    idempotencyKey: "exchange:\(ids[n].transferSub!)", runID: "scale-run"))
        }
        let now = Timestamp.now()
        for (n, i) in range.enumerated() where i % 10 == 3 {
            let jti = SyntheticEvents.hex("jti/\(i)")
            let kind: NotificationReceived.Kind = [.emailDisabled, .emailEnabled, .consentRevoked][i / 10 % 3]
            drafts.append(
                EventDraft(
                    .notificationReceived(NotificationReceived(kind: kind, eventTime: now)),
                    identifiers: Identifiers(recipientSub: ids[n].recipientSub, jti: jti), occurredAt: now, idempotencyKey: "notification:" + jti))
        }
        for (n, i) in range.enumerated() where i % 100_000 == 50_001 {
            let destroyed = try ledger.sealer.requireKeyStore().destroyKeys(for: [Identifier(.transferSub, ids[n].transferSub!)])
            drafts.append(EventDraft(.userErased(UserErased(reason: "scale benchmark erasure", keysDestroyed: destroyed)), identifiers: ids[n]))
        }
        return drafts
    }
}

/// Events appended by concurrent tasks, as the benchmarks' producers append them.
enum ConcurrentAppends {
    /// Appends `drafts` from `lanes` tasks, each handing over `size` events per append and
    /// awaiting them (lane k takes chunks k, k + lanes, ...): 8 lanes of 256 are a
    /// group-committed bulk load, 64 of 1 concurrent single-event appenders.
    static func append(_ drafts: [EventDraft], to ledger: Ledger, lanes: Int, size: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var first = lane * size
                    while first < drafts.count {
                        _ = try await ledger.append(contentsOf: Array(drafts[first..<min(first + size, drafts.count)]))
                        first += lanes * size
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// Raw LMDB replaying recorded transactions: `mdb_put` and a synced commit, nothing else.
enum RawReplay {
    /// Empties `directory`, then copies the environment of the ledger in `ledger` into it page
    /// for page (no compaction: the same trees, so replayed puts touch the pages the ledger's
    /// did) and returns true; false, with `directory` left empty, when the disk lacks room for
    /// the copy. Call it before opening the ledger: the copy reads every page through a map of
    /// its own, closed before returning, since the kernel cannot drop pages a process maps and
    /// the ledger's side would then start warm and raw LMDB's cold.
    static func copy(ofLedgerAt ledger: String, into directory: String) throws -> Bool {
        // An earlier run's replay directory, if any: there may be none.
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #if BASELINE
        return false  // before format 2 the environment had no copy
        #else
        let size = (try FileManager.default.attributesOfItem(atPath: Ledger.dataFile(in: ledger))[.size] as? Int) ?? 0
        guard let space = DiskSpace(at: directory), space.available > Int64(size) + Int64(size / 10) + (2 << 30) else { return false }
        try Environment(path: ledger, options: Environment.Options(readOnly: true)).copy(to: directory, compact: false)
        return true
        #endif
    }

    /// A recorder for about `bytes` recorded bytes and `puts` puts, its storage touched
    /// before the measured writes (before format 2, a plain one).
    static func recorder(bytes: Int, puts: Int) -> WriteRecorder {
        #if BASELINE
        return WriteRecorder()
        #else
        return WriteRecorder(reservingBytes: bytes, puts: puts)
        #endif
    }

    /// One put as raw LMDB takes it.
    private struct RawPut {
        let database: String
        let databaseFlags: UInt32
        let key: UnsafeRawBufferPointer
        let value: UnsafeRawBufferPointer
        let flags: UInt32
    }

    /// Replays each transaction from the `first` into the environment at `path` (created when
    /// missing); returns each one's seconds (its puts and its synced commit).
    static func perTransaction(_ recorder: WriteRecorder, into path: String, from first: Int = 0) throws -> [Double] {
        typealias Put = (database: String, databaseFlags: UInt32, key: Range<Int>, value: Range<Int>, flags: UInt32)
        #if BASELINE
        // Before format 2 the recorder kept each put's bytes as arrays, and no database had flags.
        var bytes: [UInt8] = []
        var puts: [Put] = []
        var ranges: [Range<Int>] = []
        for transaction in recorder.transactions {
            let start = puts.count
            for put in transaction {
                let k = bytes.count
                bytes += put.key
                let v = bytes.count
                bytes += put.value
                puts.append((put.database.name, 0, k..<v, v..<bytes.count, put.flags.rawValue))
            }
            ranges.append(start..<puts.count)
        }
        #else
        // Only the replayed transactions' puts are converted.
        let bytes = recorder.bytes
        let ranges = recorder.transactions
        let puts = recorder.puts.lazy.map { ($0.database.name, $0.database.flags.rawValue, $0.key, $0.value, $0.flags.rawValue) as Put }
        #endif
        return try bytes.withUnsafeBytes { arena in
            let transactions = ranges[first...].map { range -> [RawPut] in
                puts[range].map {
                    RawPut(
                        database: $0.database, databaseFlags: $0.databaseFlags, key: UnsafeRawBufferPointer(rebasing: arena[$0.key]),
                        value: UnsafeRawBufferPointer(rebasing: arena[$0.value]), flags: $0.flags)
                }
            }
            return try replay(transactions, into: path)
        }
    }

    private static func replay(_ transactions: [[RawPut]], into path: String) throws -> [Double] {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var env: OpaquePointer?
        mdb_env_create(&env)
        mdb_env_set_maxdbs(env, 32)
        mdb_env_set_mapsize(env, 64 << 30)
        guard mdb_env_open(env, path, UInt32(MDB_NOTLS), 0o644) == 0 else { throw ValidationError("raw env open failed") }
        defer { mdb_env_close(env) }
        var handles: [String: MDB_dbi] = [:]
        var setup: OpaquePointer?
        mdb_txn_begin(env, nil, 0, &setup)
        for put in transactions.joined() where handles[put.database] == nil {
            var dbi: MDB_dbi = 0
            mdb_dbi_open(setup, put.database, UInt32(MDB_CREATE) | put.databaseFlags, &dbi)
            handles[put.database] = dbi
        }
        mdb_txn_commit(setup)
        let resolved = transactions.map { $0.map { (handles[$0.database]!, $0) } }
        var latencies: [Double] = []
        latencies.reserveCapacity(resolved.count)
        for puts in resolved {
            let began = DispatchTime.now()
            var txn: OpaquePointer?
            mdb_txn_begin(env, nil, 0, &txn)
            for (dbi, put) in puts {
                var k = MDB_val(mv_size: put.key.count, mv_data: UnsafeMutableRawPointer(mutating: put.key.baseAddress))
                var v = MDB_val(mv_size: put.value.count, mv_data: UnsafeMutableRawPointer(mutating: put.value.baseAddress))
                let rc = mdb_put(txn, dbi, &k, &v, put.flags)
                precondition(rc == 0 || rc == MDB_KEYEXIST, "raw mdb_put failed: \(rc)")
            }
            precondition(mdb_txn_commit(txn) == 0)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - began.uptimeNanoseconds) / 1e9)
        }
        return latencies
    }
}
