import Foundation
import Ledger
import LogEngine
import Migration
import Projections
import TestSupport
import Testing

/// `handover handoff receive`: a package's rows taken into team B's log once, however often it
/// is received, whatever conflicts with it, and wherever a receive is killed.
@Suite("handoff receive: every row exactly once", .serialized)
struct HandoffReceiveTests {
    /// The "handoff rows received" events of the ledger at `directory`, and its users.
    static func recorded(_ directory: String) throws -> (chunks: [HandoffRowsReceived], users: [UserState]) {
        let projection = UserProjection()
        let ledger = try Ledger.open(at: directory, folders: [projection], options: Ledger.Options(access: .readOnly))
        defer { ledger.close() }
        let chunks = try ledger.read { view in
            try view.sequences(of: .handoffRowsReceived).compactMap { sequence -> HandoffRowsReceived? in
                guard case .handoffRowsReceived(let body)? = try view.event(sequence)?.body else { return nil }
                return body
            }
        }
        return (chunks, try projection.read(ledger) { snapshot, _ in try snapshot.allUsers() })
    }

    /// Team A's package of `rows` rows, made in process (no stand-in), its verifier key, and a
    /// new team B ledger that has received nothing.
    struct BigPackage {
        let dir = TemporaryDirectory()
        let pristine: String, package: String, key: String
        let chunkCount: Int

        init(rows total: Int) async throws {
            chunkCount = (total + HandoffRowsForm.v2.rowsPerChunk - 1) / HandoffRowsForm.v2.rowsPerChunk
            let a = dir.sub("a")
            pristine = dir.sub("b-new")
            package = dir.sub("handoff-0001")
            key = dir.sub("a.pub")
            let sender = try await Ledger.create(
                at: a, LedgerCreated(teamID: "AAAA111111", clientIDs: ["com.example.app"], role: .sender, ledgerID: UUID().uuidString),
                folders: [UserProjection()])
            for first in stride(from: 0, to: total, by: 4_096) {
                _ = try await sender.append(
                    contentsOf: (first..<min(first + 4_096, total)).map { i in
                        EventDraft(
                            .transferIDGenerated(TransferIDGenerated(targetTeam: "BBBB222222")),
                            identifiers: Identifiers(
                                accountID: "acct-\(i)", senderSub: "000\(i).sender",
                                transferSub: String(format: "%06x.%08x", i, i &* 2_654_435_761 & 0xFFFF_FFFF)),
                            idempotencyKey: "generate:BBBB222222:000\(i).sender")
                    })
            }
            #expect(try await HandoffIssuer(ledger: sender).issue(target: "BBBB222222", into: package)?.rowCount == total)
            sender.close()
            let exported = try handover("checkpoint", "--public-key", "--ledger", a)
            try Data(exported.out.utf8).write(to: URL(fileURLWithPath: key))
            let made = try handover("init", "--ledger", pristine, "--team-id", "BBBB222222", "--client-id", "com.example.app", "--role", "recipient")
            #expect(made.status == 0)
        }
    }

    @Test("a package received twice records its rows once; another package under the same number is refused and records none")
    func twiceAndConflicting() throws {
        let f = try SignedHandoffTests.Fixture(users: 5)
        let b = f.teams.recipient
        let first = try handover("handoff", "receive", f.package, "--sender-key", f.senderKey, "--ledger", b)
        #expect(first.status == 0, "\(first.err)")
        let again = try handover("handoff", "receive", f.package, "--sender-key", f.senderKey, "--ledger", b)
        #expect(
            again.status == 0 && again.out.contains("0 chunks recorded now, 1 recorded before") && again.out.contains("received before"),
            "\(again.out)\(again.err)")
        // Team A's own key signs another manifest under number 1, one row fewer.
        let conflicting = try f.resigned(
            "conflicting",
            rows: { text in
                var lines = text.components(separatedBy: "\r\n")
                lines.remove(at: lines.count - 2)
                return lines.joined(separator: "\r\n")
            }
        ) { _ in }
        let refused = try handover("handoff", "receive", conflicting, "--sender-key", f.senderKey, "--ledger", b)
        #expect(refused.status == 2 && refused.err.contains("conflicting"), "\(refused.err)")
        let (chunks, users) = try Self.recorded(b)
        #expect(chunks.count == 1 && chunks[0].transferSubs.count == 5)
        #expect(users.count == 5 && users.allSatisfy { $0.status == .received && $0.package == 1 && $0.accountID != nil })
        let verified = try handover("verify", "--ledger", b)
        #expect(verified.status == 0 && verified.out.contains("OK: 1 handoff of 5 rows"), "\(verified.out)\(verified.err)")
    }

    @Test("rows not written as Handover writes them, or listing a user twice, are refused naming the line, and nothing is recorded")
    func rowsRefusedByLine() throws {
        let f = try SignedHandoffTests.Fixture(users: 5)
        /// `rows.csv` as lines (the header first), changed by `change`.
        func lines(_ change: @escaping (inout [String]) -> Void) -> (String) -> String {
            { text in
                var lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
                change(&lines)
                return lines.joined(separator: "\r\n") + "\r\n"
            }
        }
        func fields(_ line: String) -> [String] { line.components(separatedBy: ",") }
        let cases: [(what: String, package: String, says: String)] = [
            (
                "a field quoted where it need not be",
                try f.resigned("quoted", rows: lines { $0[3] = "\"" + fields($0[3])[0] + "\"," + fields($0[3]).dropFirst().joined(separator: ",") }) {
                    _ in
                },
                "line 4: is not written as Handover writes it"
            ),
            (
                "a line ended by LF alone", try f.resigned("lf", rows: { $0.replacingOccurrences(of: "\r\n", with: "\n") }) { _ in },
                "first line is not the header"
            ),
            (
                "a transfer_sub listed twice",
                try f.resigned(
                    "sub-twice",
                    rows: lines { l in
                        var row = fields(l[4])
                        row[1] = fields(l[2])[1]
                        l[4] = row.joined(separator: ",")
                    }
                ) { _ in }, "line 5: transfer_sub"
            ),
            (
                "more rows than the manifest says", try f.resigned("more-rows") { $0.rowCount = 4 },
                "has more than the 4 rows the manifest says (line 6)"
            ),
            ("fewer rows than the manifest says", try f.resigned("fewer-rows") { $0.rowCount = 6 }, "has 5 rows, the manifest says 6"),
            (
                "an account_id listed twice",
                try f.resigned(
                    "account-twice",
                    rows: lines { l in
                        var row = fields(l[5])
                        row[0] = fields(l[1])[0]
                        l[5] = row.joined(separator: ",")
                    }
                ) { _ in }, "is listed on line 2 too, for another transfer_sub"
            ),
        ]
        for c in cases {
            let refused = try handover("handoff", "receive", c.package, "--sender-key", f.senderKey, "--ledger", f.teams.recipient)
            #expect(refused.status == 2 && refused.err.contains("rows-mismatch") && refused.err.contains(c.says), "\(c.what): \(refused.err)")
        }
        let (chunks, users) = try Self.recorded(f.teams.recipient)
        #expect(chunks.isEmpty && users.isEmpty, "no row of a refused package recorded")

        // A field quoted because it must be (an account_id holding a comma and a quote) is Handover's own writing.
        let quoted = try f.resigned(
            "needs-quotes",
            rows: lines { l in
                var row = fields(l[3])
                row[0] = "\"acct,\"\"3\""
                l[3] = row.joined(separator: ",")
            }
        ) { _ in }
        let taken = try handover("handoff", "receive", quoted, "--sender-key", f.senderKey, "--ledger", f.teams.recipient)
        #expect(taken.status == 0, "\(taken.err)")
        #expect(try Self.recorded(f.teams.recipient).users.contains { $0.accountID == "acct,\"3" })
        #expect(try handover("verify", "--ledger", f.teams.recipient).status == 0)
    }

    @Test("a rows.csv changed after its check is refused when read again, before any row of the changed chunk is used")
    func changedAfterCheck() throws {
        let f = try SignedHandoffTests.Fixture(users: 5)
        var digest: String?
        let read = try HandoffPackageReader.read(
            HandoffPackage(path: f.package), senderKey: try VerifierKey.read(from: f.senderKey), manifestDigest: &digest)
        #expect(try read.rows.all().count == 5 && read.rows.chunkCount == 1)
        try SignedHandoffTests.edit(f.package + "/" + HandoffPackage.rowsFile) { $0.replacingOccurrences(of: "\nacct-3,", with: "\nacct-X,") }
        var chunks = try read.rows.chunks()
        #expect(throws: HandoffRefusal.self) { _ = try chunks.next() }
        #expect(throws: HandoffRefusal.self) { _ = try read.rows.userList() }
    }

    @Test("verify finds a received package's row recorded other than the package says (exit 4), though the log's chain holds")
    func changedRowFound() async throws {
        let f = try SignedHandoffTests.Fixture(users: 5)
        let key = try VerifierKey.read(from: f.senderKey)
        do {
            let projection = UserProjection()
            let ledger = try Ledger.open(at: f.teams.recipient, folders: [projection])
            defer { ledger.close() }
            let verified = try await HandoffAcceptance(ledger: ledger, package: HandoffPackage(path: f.package), senderKey: key).accept()
            // A tool that records the rows it was given, one account_id changed on the way.
            let rows = try verified.rows.all()
            var accounts = rows.map { $0.accountID ?? "" }
            accounts[2] = "acct-someone-else"
            let body = HandoffRowsReceived(
                origin: key.name, package: 1, manifestSHA256: verified.manifestSHA256, fileSHA256: verified.rows.sha256, chunk: 0, chunkCount: 1,
                rowCount: rows.count, firstRow: 0, accountIDs: accounts, transferSubs: rows.map(\.transferSub),
                sequences: rows.map { Int($0.sequence) }, salts: rows.compactMap(\.salt))
            #expect(try await ledger.append(EventDraft(.handoffRowsReceived(body), idempotencyKey: body.idempotencyKey)).sequence > 0)
        }
        let verified = try handover("verify", "--ledger", f.teams.recipient)
        #expect(verified.status == 4 && verified.err.contains("a row was changed after it was received"), "\(verified.out)\(verified.err)")
        #expect(verified.out.contains("OK: "), "the chain itself holds: \(verified.out)")
    }

    @Test(
        "a receive of 30,000 rows killed while it records its chunks (4 kills; 10 at full size), then run to the end: each chunk once, each user once, verify holds"
    )
    func crashLoop() async throws {
        // Thirty chunks: enough that a receive is still recording when a kill lands.
        let total = 30_000
        let killsWanted = TestSize.pick(quick: 4, full: 10)
        let big = try await BigPackage(rows: total)
        let (dir, pristine, package, key, chunkCount) = (big.dir, big.pristine, big.package, big.key, big.chunkCount)
        let receive = { (ledger: String, round: Int) in
            try RunningProduct(
                "handover", ["handoff", "receive", package, "--sender-key", key, "--ledger", ledger, "--receipt", dir.sub("receipt-\(round)")])
        }

        // Each round on a fresh copy: the kill is sent once the package is received and its first
        // chunk is on disk, within a few milliseconds, so that it lands while chunks are recorded;
        // what the ledger holds afterwards says where it landed. A round whose receive finished
        // first counts no kill.
        var generator = SystemRandomNumberGenerator()
        var landed: [Int] = []
        var round = 0
        while landed.count < killsWanted, round < 40 {
            round += 1
            let b = dir.sub("b-\(round)")
            #expect(try runCommand("/bin/cp", ["-a", pristine, b]).status == 0)
            let watched = try Ledger.open(at: b, options: Ledger.Options(access: .readOnly))
            let process = try receive(b, round)
            let deadline = Date().addingTimeInterval(120)
            while process.isRunning, try watched.read({ try $0.sequences(of: .handoffRowsReceived).isEmpty }), Date() < deadline { usleep(500) }
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            process.signal(SIGKILL)
            let ended = process.wait()
            watched.close()
            let chunks = try Self.recorded(b).chunks.count
            if ended.signalled, chunks < chunkCount {
                landed.append(chunks)
                let again = try receive(b, round).wait()
                #expect(again.status == 0, "round \(round): \(again.out)\(again.err)")
                try Self.expectWhole(b, total: total, chunkCount: chunkCount)
            }
        }
        #expect(landed.count >= killsWanted, "kills that landed while chunks were recorded (chunks on disk at each): \(landed), in \(round) rounds")
        #expect(landed.allSatisfy { (1..<chunkCount).contains($0) }, "\(landed)")
    }

    /// The receive on `b` taken to its end: each chunk once in order, each user once, verify and
    /// the deep check hold, one "handoff received".
    static func expectWhole(_ b: String, total: Int, chunkCount: Int) throws {
        let (chunks, users) = try Self.recorded(b)
        #expect(chunks.map(\.chunk) == Array(0..<chunkCount), "each chunk once, in order: \(chunks.map(\.chunk))")
        #expect(chunks.reduce(0) { $0 + $1.transferSubs.count } == total)
        #expect(users.count == total && Set(users.compactMap(\.transferSub)).count == total && Set(users.compactMap(\.accountID)).count == total)
        #expect(users.allSatisfy { $0.status == .received && $0.package == 1 })
        let verified = try handover("verify", "--deep", "--ledger", b)
        #expect(verified.status == 0 && verified.out.contains("OK: 1 handoff of \(total) rows"), "\(verified.out)\(verified.err)")
        let received = try handover("query", "events", "--type", "handoff-received", "--format", "json", "--ledger", b)
        #expect((try JSONSerialization.jsonObject(with: Data(received.out.utf8)) as? [Any])?.count == 1, "one handoff-received event")
    }
}
