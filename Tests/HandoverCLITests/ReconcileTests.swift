import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// `handover reconcile` on the demo's two ledgers, against a join this test makes itself from
/// each ledger's own `query` answers.
@Suite("reconcile across the two teams' ledgers")
struct ReconcileTests {
    let dir = TemporaryDirectory()

    /// The rows of a `--format json` answer of `handover`.
    private func rows(_ args: String...) throws -> [JSONValue] { try rows(args) }

    private func rows(_ args: [String]) throws -> [JSONValue] {
        let r = try runProduct("handover", args)
        #expect(r.status == 0, "\(args): \(r.err)")
        return try #require(try JSONValue.parse(Array(r.out.utf8)).arrayValue, "\(args) answers a JSON array")
    }

    @Test("the totals and every row equal a join of each ledger's query answers")
    func equalsTheJoin() throws {
        let sender = try DemoLedger.copy(.sender, into: dir)
        let recipient = try DemoLedger.copy(.recipient, into: dir)

        // Team A: each transfer_sub's user and its generation event; the packages by checkpoint size.
        var senderUsers: [String: JSONValue] = [:]
        for user in try rows("query", "state", "--ledger", sender, "--format", "json") {
            if let t = user["transfer_sub"]?.stringValue { senderUsers[t] = user }
        }
        var generatedAt: [String: Int64] = [:]
        for event in try rows("query", "events", "--type", "transfer-id-generated", "--ledger", sender, "--format", "json") {
            if let t = event["identifiers"]?["transfer_sub"]?.stringValue, generatedAt[t] == nil { generatedAt[t] = event["seq"]?.intValue }
        }
        let issued = try rows("query", "events", "--type", "handoff-issued", "--ledger", sender, "--format", "json").compactMap {
            e -> (size: Int64, package: Int64, manifest: String)? in
            guard let body = e["body"], let size = body["checkpoint"]?["tree_size"]?.intValue, let n = body["package"]?.intValue,
                let m = body["manifest_sha256"]?.stringValue
            else { return nil }
            return (size, n, m)
        }.sorted { $0.size < $1.size }
        let received = Set(
            try rows("query", "events", "--type", "handoff-received", "--ledger", recipient, "--format", "json").compactMap {
                $0["body"]?["manifest_sha256"]?.stringValue
            })
        // Team B: each transfer_sub's user.
        var recipientUsers: [String: JSONValue] = [:]
        for user in try rows("query", "state", "--ledger", recipient, "--format", "json") {
            if let t = user["transfer_sub"]?.stringValue { recipientUsers[t] = user }
        }

        // The join, by the rules docs/migrating.md ("Both halves") gives.
        var expected: [String: [String: String]] = [:]
        for t in Set(senderUsers.keys).union(recipientUsers.keys) {
            let a = senderUsers[t]
            let b = recipientUsers[t]
            let package = generatedAt[t].flatMap { seq in issued.first { $0.size >= seq } }
            let wasReceived = package.map { received.contains($0.manifest) } ?? false
            let outcome: String
            if b?["status"]?.stringValue == "migrated" {
                outcome = b?["migrated_via"]?.stringValue == "sign-in" ? "signed-in" : (wasReceived ? "exchanged" : "exchanged-unlisted")
            } else if b?["status"]?.stringValue == "failed" {
                outcome = "failed"
            } else if wasReceived || b != nil {
                outcome = "not-attempted"
            } else {
                outcome = "not-received"
            }
            expected[t] = [
                "account_id": a?["account_id"]?.stringValue ?? b?["account_id"]?.stringValue ?? "",
                "package": package.map { String($0.package) } ?? "",
                "received": String(wasReceived), "outcome": outcome, "recipient_sub": b?["recipient_sub"]?.stringValue ?? "",
                "generated_at": a?["migrated_at"]?.stringValue ?? "",
            ]
        }

        let joined = try rows("reconcile", "--sender", sender, "--recipient", recipient, "--rows", "--format", "json")
        #expect(joined.count == expected.count, "one row per transfer_sub either ledger names")
        var seen: [String] = []
        for row in joined {
            let t = try #require(row["transfer_sub"]?.stringValue)
            seen.append(t)
            let got = [
                "account_id": row["account_id"]?.stringValue ?? "", "package": row["package"]?.intValue.map { String($0) } ?? "",
                "received": row["package_received"]?.boolValue.map { String($0) } ?? "", "outcome": row["outcome"]?.stringValue ?? "",
                "recipient_sub": row["recipient_sub"]?.stringValue ?? "", "generated_at": row["generated_at"]?.stringValue ?? "",
            ]
            #expect(got == expected[t], "\(t)")
        }
        #expect(seen == seen.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "rows in transfer_sub byte order")
        #expect(
            joined.contains { $0["outcome"] == .string("signed-in") && $0["account_id"]?.stringValue != nil }, "sign-in users get team A's account_id"
        )

        // The totals count the same rows.
        let totals = try rows("reconcile", "--sender", sender, "--recipient", recipient, "--format", "json")
        var counted: [String: Int] = [:]
        for row in expected.values { counted[row["outcome"]!, default: 0] += 1 }
        for total in totals {
            let outcome = try #require(total["outcome"]?.stringValue)
            #expect(total["users"]?.intValue == Int64(counted[outcome] ?? 0), "\(outcome)")
        }

        // With team A's packages in place of its ledger: the same join, but for the generation times.
        let packages = try ["handoff-0001", "handoff-0002"].map { try DemoLedger.copy(file: $0, into: dir) }
        let fromPackages = try rows(
            ["reconcile", "--recipient", recipient, "--packages"] + packages + [
                "--sender-key", try DemoLedger.copy(file: "sender.pub", into: dir), "--rows", "--format", "json",
            ])
        let strip: (JSONValue) -> [String: JSONValue] = { row in
            (row.objectValue ?? [:]).filter { $0.key != "generated_at" && $0.key != "delay_seconds" }
        }
        #expect(fromPackages.map(strip) == joined.map(strip), "the packages give what team A's ledger gives, but for generated_at and delay_seconds")

        // As of team A's first package, before team B received it: every generated user is
        // "not-received", and there are as many rows as team A then knew transfer_subs.
        let firstIssued = try #require(
            try rows("query", "events", "--type", "handoff-issued", "--ledger", sender, "--format", "json").first?["recorded_at"]?.stringValue)
        let then = try rows("reconcile", "--sender", sender, "--recipient", recipient, "--rows", "--format", "json", "--as-of", firstIssued)
        let knownThen = try rows("query", "state", "--ledger", sender, "--format", "json", "--as-of", firstIssued).filter {
            $0["transfer_sub"]?.stringValue != nil
        }
        #expect(
            then.count == knownThen.count && then.allSatisfy { $0["outcome"] == .string("not-received") && $0["package"] == .int(1) },
            "\(then.prefix(2))")

        // The report on team B's ledger, given team A's, carries the same totals (JSON and HTML).
        let report = try runProduct(
            "handover", ["report", "--ledger", recipient, "--sender", sender, "--format", "json", "--html", dir.sub("report.html")])
        #expect(report.status == 0, "\(report.err)")
        let halves = try #require(try JSONValue.parse(Array(report.out.utf8))["both_halves"])
        #expect(halves["totals"] == .array(totals), "\(halves)")
        #expect(halves["checkpoints_held"] == .int(2))
        #expect(try String(contentsOfFile: dir.sub("report.html"), encoding: .utf8).contains("<h2>Both halves</h2>"))
    }
}
