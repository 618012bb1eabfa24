import ArgumentParser
import CLMDB
import Foundation
@_spi(Benchmark) import LMDB
@_spi(Benchmark) import Ledger
import LogEngine
import Projections

/// `handover-lab bench`: the ledger's figures, each beside a raw-LMDB baseline from the same run.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Measure appends, durable latency, user look-ups and rebuilds against raw LMDB.")

    @Option(help: "Events for the throughput run (also the users of the look-up run).") var events = 1_000_000
    @Option(help: "Durable single appends for the latency run.") var singles = 2_000
    @Option(help: "Look-ups for the query run.") var lookups = 20_000
    @Option(help: "Scratch directory (emptied first).") var directory = "/tmp/handover-bench"

    func run() async throws {
        // A bench's earlier directory, if any: there may be none.
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        print("Handover ledger benchmark: \(events) events, LMDB \(String(cString: mdb_version(nil, nil, nil)))")
        print("figure                                   ledger            raw LMDB          ratio")

        // 1. Group-committed appends, against raw mdb_put replaying the identical writes.
        let projection = UserProjection()
        var options = Ledger.Options()
        options.mapSize = 4 << 30
        let ledger = try await Ledger.create(
            at: directory + "/ledger", LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.bench"], role: .recipient, ledgerID: "bench"),
            folders: [projection], options: options)
        let key = try await ledger.sealer.requireKeyStore().dataKey(for: Identifier(.recipientSub, "bench-shared-key"))
        let drafts = try (0..<events).map { i in
            try SyntheticEvents.exchange(i, prefix: "u") { text, _ in try Sealer.seal(text, keyID: key.id, key: key.key) }
        }
        // About 9 puts and 1,100 recorded bytes per event.
        let recorder = RawReplay.recorder(bytes: events * 1_300, puts: events * 10)
        ledger.environment.recorder = recorder
        // In rounds: a quarter of the events appended by the ledger, then the transactions it
        // committed replayed by raw LMDB into its own environment, and so on, so that drift in
        // the machine (the disk's flush latency wanders by 10% over minutes) falls on both alike.
        let producers = 8
        let chunk = 256
        let rounds = 4
        var appendSeconds = 0.0
        var rawSeconds = 0.0
        for round in 0..<rounds {
            let part = Array(drafts[(drafts.count * round / rounds)..<(drafts.count * (round + 1) / rounds)])
            let replayed = recorder.transactions.count
            let appendStart = DispatchTime.now()
            try await ConcurrentAppends.append(part, to: ledger, lanes: producers, size: chunk)
            appendSeconds += seconds(since: appendStart)
            rawSeconds += try RawReplay.perTransaction(recorder, into: directory + "/raw", from: replayed).reduce(0, +)
        }
        ledger.environment.recorder = nil
        let commits = recorder.transactions.count
        let ledgerRate = Double(events) / appendSeconds
        let rawRate = Double(events) / rawSeconds
        row("appends/s (group commit, \(commits) commits)", fmt(ledgerRate), fmt(rawRate), ledgerRate / rawRate)
        let eventBytes = try ledger.read { view in try view.record(2).map { $0.count - 32 } ?? 0 }
        print("  (event JSON \(eventBytes) bytes; \(recorder.puts.count) puts replayed; mean commit \(events / max(commits, 1)) events)")

        // 2. Durable single-event latency, against raw put + synced commit replayed into the
        // raw environment of step 1: the same writes on the same trees.
        var ledgerLatencies: [Double] = []
        let singleRecorder = WriteRecorder()
        ledger.environment.recorder = singleRecorder
        for i in 0..<singles {
            let draft = try SyntheticEvents.exchange(i, prefix: "single") { text, _ in try Sealer.seal(text, keyID: key.id, key: key.key) }
            let t = DispatchTime.now()
            _ = try await ledger.append(draft)
            ledgerLatencies.append(seconds(since: t))
        }
        ledger.environment.recorder = nil
        let rawLatencies = try RawReplay.perTransaction(singleRecorder, into: directory + "/raw")
        row("durable append p50 (µs)", micros(p(ledgerLatencies, 0.5)), micros(p(rawLatencies, 0.5)), p(ledgerLatencies, 0.5) / p(rawLatencies, 0.5))
        row(
            "durable append p99 (µs)", micros(p(ledgerLatencies, 0.99)), micros(p(rawLatencies, 0.99)),
            p(ledgerLatencies, 0.99) / p(rawLatencies, 0.99))

        // 3. `query user` on a ledger of `events` users, against one raw cursor seek to the
        // user's newest stored version.
        var queryLatencies: [Double] = []
        var rawGetLatencies: [Double] = []
        var generator = SystemRandomNumberGenerator()
        let probes = (0..<lookups).map { _ in Int.random(in: 0..<events, using: &generator) }
        try projection.read(ledger) { snapshot, view in
            for (n, i) in probes.enumerated() {
                let draft = drafts[i]
                let id = [draft.identifiers.accountID!, draft.identifiers.transferSub!, draft.identifiers.recipientSub!][n % 3]
                let t = DispatchTime.now()
                guard try snapshot.user(matching: id) != nil else { throw ValidationError("user \(id) not found") }
                queryLatencies.append(seconds(since: t))
            }
            let versions = try view.transaction.openDatabase("user_versions", create: false)
            try view.transaction.withCursor(versions) { cursor in
                for i in probes {
                    let k = BigEndian.bytes(UInt64(i + 1)) + BigEndian.bytes(0)
                    let t = DispatchTime.now()
                    guard try cursor.seek(atLeast: k) != nil else { throw ValidationError("raw seek missed") }
                    rawGetLatencies.append(seconds(since: t))
                }
            }
        }
        row("query user p50 (µs)", micros(p(queryLatencies, 0.5)), micros(p(rawGetLatencies, 0.5)), p(queryLatencies, 0.5) / p(rawGetLatencies, 0.5))
        row(
            "query user p99 (µs)", micros(p(queryLatencies, 0.99)), micros(p(rawGetLatencies, 0.99)),
            p(queryLatencies, 0.99) / p(rawGetLatencies, 0.99))

        // 4. Projection rebuild, beside a raw cursor scan of the log.
        let rebuildStart = DispatchTime.now()
        let folded = try projection.rebuild(ledger)
        let rebuildSeconds = seconds(since: rebuildStart)
        let scanStart = DispatchTime.now()
        let scanned = try ledger.read { view in
            try view.transaction.withCursor(ledger.schema.log) { cursor in
                var n = 0
                var bytes = 0
                var entry = try cursor.first()
                while let (_, value) = entry {
                    n += 1
                    bytes &+= Int(value[value.count - 1])
                    entry = try cursor.next()
                }
                return n + (bytes & 0)
            }
        }
        let scanSeconds = seconds(since: scanStart)
        row(
            "projection rebuild events/s", fmt(Double(folded) / rebuildSeconds), fmt(Double(scanned) / scanSeconds),
            (Double(folded) / rebuildSeconds) / (Double(scanned) / scanSeconds))
        let report = try ledger.verify()
        print("verify: \(report.isIntact ? "OK" : "FAILED") \(report.eventCount) events")
        ledger.close()
        // Scratch space only: a directory left behind costs disk, not a figure.
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func seconds(since start: DispatchTime) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 }
    private func p(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]
    }
    private func fmt(_ v: Double) -> String { String(format: "%.0f", v) }
    private func micros(_ v: Double) -> String { String(format: "%.1f", v * 1e6) }
    private func row(_ name: String, _ ledger: String, _ raw: String, _ ratio: Double) {
        print(
            name.padding(toLength: 41, withPad: " ", startingAt: 0) + ledger.padding(toLength: 18, withPad: " ", startingAt: 0)
                + raw.padding(toLength: 18, withPad: " ", startingAt: 0) + String(format: "%.2f", ratio))
    }
}
