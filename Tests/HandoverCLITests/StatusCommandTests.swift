import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger

/// `handover status` on the rehearsal's ledgers: the window and the users by state it shows
/// are what `window` and `query state` answer; exit 1 when not on track. (That it changes no
/// byte of a ledger is shown with the other read commands, on a write-protected copy.)
@Suite("status")
struct StatusCommandTests {
    let dir = TemporaryDirectory()

    /// A command's `--format json` answer; `status` exits 0 or 1, as its `exit_status` says.
    private func json(_ args: [String]) throws -> JSONValue {
        let r = try runProduct("handover", args + ["--format", "json"])
        let answer = try JSONValue.parse(Array(r.out.utf8))
        let expected = args.first == "status" ? answer["exit_status"]?.intValue.map(Int32.init) ?? -1 : 0
        #expect(r.status == expected, "\(args): \(r.out) \(r.err)")
        return answer
    }

    @Test("on both demo ledgers: users by state equal query state's, the window equals window's, the last run is the last run-finished")
    func agreesWithQuery() throws {
        for side in [DemoLedger.Side.sender, .recipient] {
            let ledger = try DemoLedger.copy(side, into: dir)
            let status = try json(["status", "--ledger", ledger, "--warn-days", "0"])
            var byState: [String: Int64] = [:]
            for row in try json(["query", "state", "--ledger", ledger]).arrayValue ?? [] {
                byState[row["status"]?.stringValue ?? "?", default: 0] += 1
            }
            let shown = (status["users_by_state"]?.objectValue ?? [:]).compactMapValues(\.intValue).filter { $0.value > 0 }
            #expect(shown == byState, "\(side): status \(shown), query state \(byState)")
            let window = try json(["window", "--ledger", ledger]).arrayValue?.first
            #expect(status["window"]?["accepted_at"]?.stringValue == window?["accepted_at"]?.stringValue, "\(side)")
            #expect(status["window"]?["closes_at"]?.stringValue == window?["deadline"]?.stringValue, "\(side): \(String(describing: window))")
            let runs = try json(["query", "events", "--type", "run-finished", "--ledger", ledger]).arrayValue ?? []
            #expect(status["last_run"]?["exit_status"]?.intValue == runs.last?["body"]?["exit_status"]?.intValue, "\(side)")
        }
    }

    @Test("the demo's users not done are those Apple refused for good: settled, so on track whatever --warn-days, and no retry suggested")
    func settledUsersAreNotAConcern() throws {
        let ledger = try DemoLedger.copy(.recipient, into: dir)
        let status = try json(["status", "--ledger", ledger, "--warn-days", "3650"])
        let settled = status["settled_by_reason"]?["refused-by-apple"]?.intValue ?? 0
        try #require(settled > 0, "the demo leaves users Apple refused")
        #expect(status["users_by_state"]?["failed"]?.intValue == settled && status["users_left"]?.intValue == 0, "\(status)")
        #expect(status["exit_status"]?.intValue == 0 && status["concerns"]?.arrayValue?.isEmpty == true, "\(status)")
        #expect(!(status["next"]?.arrayValue ?? []).contains { $0.stringValue?.contains("--retry-failed") == true }, "\(status)")
    }
}
