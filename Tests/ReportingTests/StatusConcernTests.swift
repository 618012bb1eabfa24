import Basics
import Foundation
import TestSupport
import Testing

@testable import Ledger
@testable import Projections
@testable import Reporting

/// `status`'s verdict on ledgers whose every event the test wrote: not on track only for what
/// someone can do before the deadline, each with the command that does it (the ledger named);
/// users Apple settled are shown as settled, never as failing.
@Suite("status: what on-call can act on")
struct StatusConcernTests {
    let dir = TemporaryDirectory()
    let now = Timestamp.now()

    /// A recipient ledger with the window accepted `daysAgo` days ago and a finished exchange
    /// run (exit `exit`) that recorded `events`.
    private func ledger(daysAgo: Int, exit: Int, _ events: [EventDraft]) async throws -> (Ledger, UserProjection) {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("ledger b"), testIdentity(), folders: [projection])
        let accepted = now.adding(days: -daysAgo)
        _ = try await ledger.append(EventDraft(.transferAccepted(TransferAccepted(acceptedAt: accepted)), occurredAt: accepted))
        _ = try await ledger.append(EventDraft(.runStarted(RunStarted(command: "exchange", inputPath: "handoff-0001", handoff: "signed"))))
        _ = try await ledger.append(contentsOf: events)
        _ = try await ledger.append(
            EventDraft(.runFinished(RunFinished(command: "exchange", counts: ["failed": events.count], durationMilliseconds: 10, exitStatus: exit))))
        return (ledger, projection)
    }

    private func failed(_ n: Int, _ kind: FailureClass) -> EventDraft {
        EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: kind, httpStatus: 400, message: "Apple answered \(kind)"))),
            identifiers: Identifiers(accountID: "acct-\(n)", transferSub: "t-\(n)"))
    }

    @Test("a user Apple refused for good (invalid_request), with 60 days left: on track, shown as settled, no retry suggested")
    func refusedForGoodIsSettled() async throws {
        let (ledger, projection) = try await ledger(daysAgo: 0, exit: 1, [failed(1, .invalidRequest)])
        defer { ledger.close() }
        let status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .success && status.concerns == [], "\(status.text)")
        #expect(status.settledByReason == ["refused-by-apple": 1] && status.usersLeft == 0)
        #expect(status.text.contains("settled:      refused-by-apple 1"), "\(status.text)")
        #expect(!status.text.contains("--retry-failed") && !status.text.contains("failures:"), "\(status.text)")
    }

    @Test("the same with 5 days left: still on track, since no run changes the user")
    func settledNearTheDeadline() async throws {
        let (ledger, projection) = try await ledger(daysAgo: 55, exit: 1, [failed(1, .invalidRequest)])
        defer { ledger.close() }
        let status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .success, "\(status.text)")
    }

    @Test("a failure a retry can help: not on track, and the step names the retry with --ledger, the package and --retry-failed")
    func retryableIsAConcern() async throws {
        let (ledger, projection) = try await ledger(daysAgo: 0, exit: 1, [failed(1, .serverError), failed(2, .invalidRequest)])
        defer { ledger.close() }
        let status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .failed && status.concerns.count == 1, "\(status.text)")
        #expect(status.failuresByClass == ["server_error": 1] && status.settledByReason == ["refused-by-apple": 1])
        let retry =
            "handover exchange --ledger '\(dir.sub("ledger b"))' --transfers handoff-0001 --sender-key SENDER.PUB --out EXCHANGED.CSV --retry-failed"
        #expect(status.nextSteps.contains { $0.hasSuffix("retry: " + retry) }, "\(status.nextSteps)")
    }

    @Test("users a run can still migrate with fewer days left than --warn-days: not on track, saying how many and how many days")
    func usersLeftNearTheDeadline() async throws {
        let (ledger, projection) = try await ledger(daysAgo: 55, exit: 1, [failed(1, .serverError), failed(2, .invalidRequest)])
        defer { ledger.close() }
        let status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now, warnDays: 14)
        #expect(status.concerns.first == "1 user not migrated with 5 days left (under 14)", "\(status.concerns)")
        #expect(status.text.contains("NOT ON TRACK: 1 user not migrated with 5 days left (under 14); the last run"), "\(status.text)")
    }

    @Test("team A: a user whose generation failed, then who revoked consent, is settled; every next step names the ledger")
    func revokedIsSettled() async throws {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("ledger a"), testIdentity(role: .sender), folders: [projection])
        defer { ledger.close() }
        let failure = CallFailure(kind: .serverError, httpStatus: 500, message: "HTTP 500")
        _ = try await ledger.append(contentsOf: [
            EventDraft(.runStarted(RunStarted(command: "generate", inputPath: "users.csv", targetTeam: "CCCC333333"))),
            EventDraft(
                .transferIDGenerationFailed(TransferIDGenerationFailed(targetTeam: "CCCC333333", failure: failure)),
                identifiers: Identifiers(accountID: "acct-1", senderSub: "s-1")),
            EventDraft(.runFinished(RunFinished(command: "generate", counts: ["failed": 1], durationMilliseconds: 10, exitStatus: 1))),
        ])
        var status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .failed && status.failuresByClass == ["server_error": 1], "\(status.text)")
        let retry = "handover generate --ledger '\(dir.sub("ledger a"))' --users users.csv --target CCCC333333 --out HANDOFF.CSV --retry-failed"
        #expect(status.nextSteps.contains { $0.hasSuffix(retry) }, "\(status.nextSteps)")
        _ = try await ledger.append(
            EventDraft(
                .notificationReceived(NotificationReceived(kind: .consentRevoked, eventTime: now, email: nil, isPrivateEmail: nil)),
                identifiers: Identifiers(senderSub: "s-1", jti: "jti-1"), occurredAt: now))
        status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .success && status.settledByReason == ["consent-revoked": 1] && status.failuresByClass == [:], "\(status.text)")
        for step in status.nextSteps where step.contains("handover ") {
            #expect(step.contains("--ledger '\(dir.sub("ledger a"))'"), "\(step)")
        }
    }

    @Test("a recipient's ledger with no package received: says so and how to receive one; near the deadline, not on track")
    func noPackage() async throws {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("empty"), testIdentity(), folders: [projection])
        defer { ledger.close() }
        var status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.text.contains("packages:     none received"), "\(status.text)")
        #expect(
            status.nextSteps.first?.hasSuffix("handover handoff receive PACKAGE --ledger \(dir.sub("empty")) --sender-key SENDER.PUB") == true,
            "\(status.nextSteps)")
        #expect(status.exitStatus == .success)
        let accepted = now.adding(days: -50)
        _ = try await ledger.append(EventDraft(.transferAccepted(TransferAccepted(acceptedAt: accepted)), occurredAt: accepted))
        status = try LedgerStatus.read(ledger: ledger, projection: projection, now: now)
        #expect(status.exitStatus == .failed && status.concerns.first?.hasPrefix("no package received from team A with 10 days left") == true)
    }
}
