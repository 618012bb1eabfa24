import Basics
import Foundation
import LogEngine
import TestSupport
import Testing

@testable import Ledger
@testable import Projections
@testable import Reporting

/// The report's figures on a ledger whose every event the test wrote, so each expected
/// number is known: migrations on three days (by the sign-ins' iat) and today, one after the
/// deadline, a failure, notifications before and after a user's migration, an unmatched user.
@Suite("report figures")
struct ReportFigureTests {
    let dir = TemporaryDirectory()
    let now = Timestamp.now()

    private func signIn(_ n: Int, daysAgo: Int) -> EventDraft {
        let iat = now.adding(days: -daysAgo)
        return EventDraft(
            .signInVerified(SignInVerified(audience: "com.example.test", issuedAt: iat, expiresAt: iat.adding(days: 1))),
            identifiers: Identifiers(transferSub: "t-s\(n)", recipientSub: "r-s\(n)"), occurredAt: iat)
    }

    private func exchanged(_ n: Int) -> EventDraft {
        EventDraft(
            .transferIDExchanged(TransferIDExchanged(email: nil, isPrivateEmail: true)),
            identifiers: Identifiers(accountID: "acct-\(n)", transferSub: "t-e\(n)", recipientSub: "r-e\(n)"))
    }

    private func notification(_ kind: NotificationReceived.Kind, sub: String, daysAgo: Int, jti: String) -> EventDraft {
        let time = now.adding(days: -daysAgo)
        return EventDraft(
            .notificationReceived(NotificationReceived(kind: kind, eventTime: time, email: nil, isPrivateEmail: nil)),
            identifiers: Identifiers(recipientSub: sub, jti: jti), occurredAt: time)
    }

    @Test("per-day migrations, deadline split, pending, failures, notifications since migration; --as-of leaves out what came later")
    func figures() async throws {
        let projection = UserProjection()
        let ledger = try await Ledger.create(at: dir.sub("l"), testIdentity(), folders: [projection])
        defer { ledger.close() }
        // Window accepted 70 days ago: the deadline was 10 days ago, after the sign-ins, before the exchanges.
        let accepted = now.adding(days: -70)
        _ = try await ledger.append(EventDraft(.transferAccepted(TransferAccepted(acceptedAt: accepted)), occurredAt: accepted))
        _ = try await ledger.append(contentsOf: [signIn(1, daysAgo: 13), signIn(2, daysAgo: 12), signIn(3, daysAgo: 12)])
        let signInsRecorded = try ledger.read { try $0.head() }
        try await Task.sleep(for: .milliseconds(5))
        _ = try await ledger.append(contentsOf: [
            exchanged(1), exchanged(2),
            EventDraft(
                .transferIDExchangeFailed(TransferIDExchangeFailed(failure: CallFailure(kind: .rateLimited, httpStatus: 429, message: "HTTP 429"))),
                identifiers: Identifiers(accountID: "acct-9", transferSub: "t-e9")),
            notification(.consentRevoked, sub: "r-s1", daysAgo: 1, jti: "j1"),
            notification(.accountDeleted, sub: "r-s2", daysAgo: 20, jti: "j2"),
            notification(.emailDisabled, sub: "r-stranger", daysAgo: 1, jti: "j3"),
            EventDraft(
                .userErased(UserErased(reason: "account-deleted notification", keysDestroyed: 1)), identifiers: Identifiers(recipientSub: "r-s2")),
        ])

        let report = try MigrationReport.make(ledger: ledger, projection: projection, asOf: nil)
        #expect(report.usersKnown == 6)
        #expect(report.migrated == 5)
        #expect(report.migratedByPath.map(\.path) == ["sign-in", "exchange"] && report.migratedByPath.map(\.users) == [3, 2])
        #expect(report.beforeDeadline == 3 && report.afterDeadline == 2)
        #expect(report.days.map(\.date) == [now.adding(days: -13).date, now.adding(days: -12).date, now.date])
        #expect(report.days.map(\.migrated) == [1, 2, 2] && report.days.map(\.cumulative) == [1, 3, 5])
        #expect(report.firstMigration?.occurred == now.adding(days: -13))
        #expect(report.firstMigration?.recorded == signInsRecorded.recordedAt)
        #expect(report.pending.count == 1)
        #expect(report.failuresByClass.map { [$0.errorClass?.rawValue, "\($0.users)"] } == [["rate_limited", "1"]])
        let byType = Dictionary(uniqueKeysWithValues: report.notifications.map { ($0.type, $0) })
        #expect(byType["consent-revoked"]?.received == 1 && byType["consent-revoked"]?.sinceMigration == 1)
        #expect(byType["account-deleted"]?.received == 1 && byType["account-deleted"]?.sinceMigration == 0)
        #expect(byType["email-disabled"]?.sinceMigration == 0)
        #expect(byType["consent-revoked"]?.firstOccurred == now.adding(days: -1))
        #expect(report.consentRevoked == 1 && report.accountsDeleted == 1 && report.usersErased == 1)
        #expect(report.unmatched.count == 1 && report.unmatchedNotifications == 1)
        #expect(report.throughSequence == 12)

        // The figures the queries give are the report's.
        try projection.read(ledger) { (snapshot: any ProjectionSnapshot, _: LogView) throws in
            let queries = ComplianceQueries(snapshot: snapshot, time: report.asOf, sealer: nil)
            #expect(try queries.migrated().rows.count == report.migrated)
            #expect(try queries.pending() == Answers.pending.table(report.pending))
            #expect(try queries.unmatched() == Answers.unmatched.table(report.unmatched))
        }

        // As of the moment the sign-ins were recorded: the exchanges and notifications had not happened.
        let then = try MigrationReport.make(ledger: ledger, projection: projection, asOf: signInsRecorded.recordedAt)
        #expect(then.isHistorical && then.throughSequence == signInsRecorded.sequence)
        #expect(then.migrated == 3 && then.usersKnown == 3)
        #expect(then.days.map(\.cumulative) == [1, 3])
        #expect(then.notifications.isEmpty && then.pending.isEmpty && then.usersErased == 0)
        let before = try MigrationReport.make(
            ledger: ledger, projection: projection, asOf: Timestamp(microseconds: signInsRecorded.recordedAt.microseconds - 1))
        #expect(before.migrated == 0 && before.days.isEmpty)

        // Both readings go to JSON and to a page with three charts and no scripts or fetched assets.
        #expect(report.json["migrated"]?.intValue == 5)
        #expect(then.json["historical"]?.boolValue == true)
        let html = report.html
        #expect(html.components(separatedBy: "<svg ").count - 1 == 3)
        #expect(!html.contains("<script") && !html.contains("src=") && !html.contains("href=") && !html.contains("@import"))
        #expect(html.replacingOccurrences(of: "xmlns=\"http://www.w3.org/2000/svg\"", with: "").range(of: "http") == nil)
    }
}
