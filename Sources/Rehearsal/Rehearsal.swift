import Crypto
import Foundation
import Ledger
import Projections

/// A whole transfer rehearsed through the Ledger API: a sender and a recipient ledger, every
/// event type, failures of each class, sign-ins, notifications and erasures, then the
/// answers to the main questions. Until Handover talks to Apple's stand-in, this is what
/// `handover demo` runs.
public struct Rehearsal {
    public let directory: String
    public let users: Int
    let senderTeam = "AAAA111111"
    let recipientTeam = "BBBB222222"
    let clientID = "com.example.notes"

    public init(directory: String, users: Int) {
        self.directory = directory
        self.users = users
    }

    /// A reproducible pseudo-random sequence (SplitMix64), so every rehearsal tells the same story.
    struct Dice {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func percent() -> Int { Int(next() % 100) }
    }

    static func derive(_ parts: String...) -> String {
        Hex.encode(SHA256.hash(data: Data(parts.joined(separator: "|").utf8)).prefix(16))
    }

    static func sha256Hex(_ text: String) -> String {
        Hex.encode(SHA256.hash(data: Data(text.utf8)))
    }

    func senderSub(_ i: Int) -> String { "000\(100 + i % 900).\(Rehearsal.derive("sender", String(i))).\(1000 + i % 9000)" }
    func transferSub(_ i: Int) -> String { "t\(Rehearsal.derive("transfer", senderSub(i), recipientTeam))" }
    func recipientSub(_ i: Int) -> String { "001\(100 + i % 900).\(Rehearsal.derive("recipient", transferSub(i))).\(2000 + i % 7000)" }
    func accountID(_ i: Int) -> String { String(format: "acct-%05d", i) }

    /// Writes both ledgers and prints the answers through `say`.
    public func run(_ say: (String) -> Void) async throws {
        let started = Date()
        let acceptedAt = Timestamp(seconds: (Timestamp.now().seconds / 86_400 - 20) * 86_400)
        say("Rehearsing a transfer of \(users) users from team \(senderTeam) to team \(recipientTeam) in \(directory)\n")

        let senderDir = directory + "/sender", recipientDir = directory + "/recipient"
        let senderProjection = UserProjection(), recipientProjection = UserProjection()
        let sender = try await Ledger.create(at: senderDir, LedgerCreated(teamID: senderTeam, clientIDs: [clientID], role: .sender, ledgerID: UUID().uuidString.lowercased()), folders: [senderProjection])
        let recipient = try await Ledger.create(at: recipientDir, LedgerCreated(teamID: recipientTeam, clientIDs: [clientID, clientID + ".web"], role: .recipient, ledgerID: UUID().uuidString.lowercased()), folders: [recipientProjection])
        defer { sender.close(); recipient.close() }
        for (ledger, projection) in [(sender, senderProjection), (recipient, recipientProjection)] {
            try await WindowRecorder(ledger: ledger, projection: projection).record(acceptedAt: acceptedAt, correcting: false)
        }

        let generated = try await generate(sender, acceptedAt: acceptedAt)
        say("Team A: generated \(generated.count) transfer identifiers (\(users - generated.count) failed) -> \(senderDir)")
        try await exchange(recipient, recipientProjection, generated: generated, acceptedAt: acceptedAt)
        say("Team B: exchanged, then recorded sign-ins and Apple's notifications -> \(recipientDir)\n")

        for (name, ledger) in [("sender", sender), ("recipient", recipient)] {
            let report = try ledger.verify()
            say("verify \(name): \(report.isIntact ? "OK" : "FAILED"), \(report.eventCount) events, head \(report.headHash.prefix(16))…")
        }
        let queries = try recipientProjection.read(recipient) { snapshot, _ in
            let q = ComplianceQueries(snapshot: snapshot, time: .now(), sealer: recipient.sealer)
            return (try q.window(), try q.migrated(), try q.pending(), try q.failuresByClass(), try q.state())
        }
        say("\n== Transfer window (team B) ==\n" + queries.0.render(.table))
        let migrated = queries.1.rows
        let byPath = Dictionary(grouping: migrated, by: { $0[5].text }).mapValues(\.count)
        say("== Who migrated ==\n\(migrated.count) of \(users) users: " + byPath.sorted { $0.key < $1.key }.map { "\($0.value) by \($0.key)" }.joined(separator: ", ")
            + "; first \(migrated.first?[4].text ?? "-"), last \(migrated.last?[4].text ?? "-")\n")
        say("== Who is pending and why (first 8 of \(queries.2.rows.count)) ==\n" + QueryTable(columns: queries.2.columns, rows: Array(queries.2.rows.prefix(8))).render(.table))
        say("== Failures by class ==\n" + queries.3.render(.table))
        let erased = queries.4.rows.filter { $0[15] != .null }.count
        let revoked = queries.4.rows.filter { $0[13] != .null }.count
        let unmatched = queries.4.rows.filter { $0[6].text == "unmatched" }.count
        say("Consent revoked: \(revoked), accounts deleted and erased: \(erased), unmatched notifications: \(unmatched)\n")
        let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
        say("""
        Rehearsal finished in \(seconds) s. Explore further:
          handover query pending   --ledger \(recipientDir)
          handover query migrated  --ledger \(recipientDir) --format csv
          handover query user \(accountID(7))    --ledger \(recipientDir)
          handover query failures --by-class --ledger \(senderDir)
          handover query events --type notification-received --limit 5 --ledger \(recipientDir)
          handover query state --as-of \(acceptedAt.date) --ledger \(recipientDir)
          handover verify --ledger \(recipientDir)
        """)
    }

    /// Team A's run: one refused attempt (bad key ID), then the real run with a token refresh.
    private func generate(_ ledger: Ledger, acceptedAt: Timestamp) async throws -> [Int] {
        let refusedRun = UUID().uuidString.lowercased()
        _ = try await ledger.append(contentsOf: [
            EventDraft(.runStarted(RunStarted(command: "generate", inputPath: "users.csv", inputSHA256: Rehearsal.sha256Hex("users.csv"), targetTeam: recipientTeam, userCount: users)), runID: refusedRun),
            EventDraft(.accessTokenFailed(AccessTokenFailed(teamID: senderTeam, clientID: clientID, keyID: "WRONGKEY01", failure: Failure(kind: .invalidClient, code: "invalid_client", httpStatus: 400, message: "Apple refused the client secret: check the key ID, team ID and client ID"))), runID: refusedRun),
            EventDraft(.runFinished(RunFinished(command: "generate", counts: ["not_started": users], durationMilliseconds: 412, exitStatus: 3)), runID: refusedRun),
        ])
        let run = UUID().uuidString.lowercased()
        _ = try await ledger.append(EventDraft(.runStarted(RunStarted(command: "generate", inputPath: "users.csv", inputSHA256: Rehearsal.sha256Hex("users.csv"), targetTeam: recipientTeam, userCount: users)), runID: run))
        var dice = Dice(state: 0xA11CE)
        var drafts: [EventDraft] = []
        var generated: [Int] = []
        for i in 0..<users {
            if i % 1000 == 0 {
                let issued = Timestamp.now()
                drafts.append(EventDraft(.accessTokenIssued(AccessTokenIssued(teamID: senderTeam, clientID: clientID, keyID: "KEY1234567", expiresAt: issued.adding(days: 0).addingSeconds(3600), fingerprint: String(Rehearsal.derive("token", String(i)).prefix(16)))), occurredAt: issued, runID: run))
            }
            let ids = Identifiers(accountID: accountID(i), senderSub: senderSub(i))
            switch dice.percent() {
            case 0..<2:
                drafts.append(EventDraft(.transferIDGenerationFailed(TransferIDGenerationFailed(targetTeam: recipientTeam, failure: Failure(kind: .invalidRequest, code: "invalid_request", httpStatus: 400, message: "Apple answered invalid_request: the user may have revoked authorization"))), identifiers: ids, runID: run))
            case 2:
                drafts.append(EventDraft(.transferIDGenerationFailed(TransferIDGenerationFailed(targetTeam: recipientTeam, failure: Failure(kind: .serverError, httpStatus: 503, message: "HTTP 503 on every attempt", attempts: 5))), identifiers: ids, runID: run))
            default:
                var withTransfer = ids
                withTransfer.transferSub = transferSub(i)
                drafts.append(EventDraft(.transferIDGenerated(TransferIDGenerated(targetTeam: recipientTeam)), identifiers: withTransfer, idempotencyKey: "generate:\(recipientTeam):\(senderSub(i))", runID: run))
                generated.append(i)
            }
        }
        try await appendConcurrently(drafts, to: ledger)
        // Before the transfer, Apple told team A about one user revoking consent.
        _ = try await ledger.append(EventDraft(.notificationReceived(NotificationReceived(kind: .consentRevoked, eventTime: acceptedAt.addingSeconds(-3600))), identifiers: Identifiers(senderSub: senderSub(3), jti: "jti-a-\(Rehearsal.derive("a3"))"), occurredAt: acceptedAt.addingSeconds(-3600)))
        _ = try await ledger.append(EventDraft(.runFinished(RunFinished(command: "generate", counts: ["succeeded": generated.count, "failed": users - generated.count], durationMilliseconds: 5_231, exitStatus: generated.count == users ? 0 : 1)), runID: run))
        return generated
    }

    /// Team B's run, then sign-ins and Apple's notifications during and after the window.
    private func exchange(_ ledger: Ledger, _ projection: UserProjection, generated: [Int], acceptedAt: Timestamp) async throws {
        let run = UUID().uuidString.lowercased()
        _ = try await ledger.append(EventDraft(.runStarted(RunStarted(command: "exchange", inputPath: "handoff.csv", inputSHA256: Rehearsal.sha256Hex("handoff.csv"), userCount: generated.count)), runID: run))
        let keys = try ledger.sealer.keyStore.dataKeys(for: generated.map { Identifier(.recipientSub, recipientSub($0)) })
        var dice = Dice(state: 0xB0B)
        var drafts: [EventDraft] = []
        var failed: [Int] = []
        var migrated: [Int] = []
        for (n, i) in generated.enumerated() {
            if n % 1000 == 0 {
                drafts.append(EventDraft(.accessTokenIssued(AccessTokenIssued(teamID: recipientTeam, clientID: clientID, keyID: "KEY7654321", expiresAt: Timestamp.now().addingSeconds(3600), fingerprint: String(Rehearsal.derive("tokenB", String(n)).prefix(16)))), runID: run))
            }
            let base = Identifiers(accountID: accountID(i), transferSub: transferSub(i))
            let roll = dice.percent()
            let failure: Failure? = switch roll {
            case 0..<3: Failure(kind: .rateLimited, httpStatus: 429, message: "HTTP 429 after 6 attempts (Retry-After honoured)", attempts: 6)
            case 3..<5: Failure(kind: .invalidRequest, code: "invalid_request", httpStatus: 400, message: "Apple answered invalid_request: transfer_sub unknown or consent revoked")
            case 5: Failure(kind: .timeout, message: "no answer within 30 s on 4 attempts", attempts: 4)
            default: nil
            }
            if let failure {
                drafts.append(EventDraft(.transferIDExchangeFailed(TransferIDExchangeFailed(failure: failure)), identifiers: base, runID: run))
                failed.append(i)
                continue
            }
            var ids = base
            ids.recipientSub = recipientSub(i)
            let isPrivate = dice.percent() < 80
            let email = isPrivate ? "\(Rehearsal.derive("relay", String(i)).prefix(10))@privaterelay.appleid.com" : "user\(i)@example.org"
            let sealed = try Sealer.seal(email, keyID: keys[n].id, key: keys[n].key)
            drafts.append(EventDraft(.transferIDExchanged(TransferIDExchanged(email: sealed, isPrivateEmail: isPrivate)), identifiers: ids, idempotencyKey: "exchange:\(transferSub(i))", runID: run))
            migrated.append(i)
        }
        try await appendConcurrently(drafts, to: ledger)
        _ = try await ledger.append(EventDraft(.runFinished(RunFinished(command: "exchange", counts: ["succeeded": migrated.count, "failed": failed.count], durationMilliseconds: 4_870, exitStatus: failed.isEmpty ? 0 : 1)), runID: run))

        // Users whose exchange failed sign in during the window with a transfer_sub claim.
        var events: [EventDraft] = []
        for (n, i) in failed.enumerated() where n % 3 != 0 {
            let iat = acceptedAt.adding(days: 3 + n % 15).addingSeconds(n * 61)
            events.append(EventDraft(.signInVerified(SignInVerified(audience: clientID, issuedAt: iat, expiresAt: iat.addingSeconds(600), emailVerified: true, isPrivateEmail: true, nonceChecked: true, realUserStatus: 2)), identifiers: Identifiers(transferSub: transferSub(i), recipientSub: recipientSub(i)), occurredAt: iat))
        }
        events.append(EventDraft(.signInRejected(TokenRejected(reason: "expired", detail: "exp 2026-01-01T00:00:00Z is more than 60 s in the past", payloadSHA256: Rehearsal.sha256Hex("expired-token")))))
        // Apple's notifications after migration; one is redelivered and recorded once.
        for (n, i) in migrated.prefix(60).enumerated() {
            let kind: NotificationReceived.Kind = n < 25 ? .emailDisabled : n < 35 ? .emailEnabled : n < 50 ? .consentRevoked : .accountDeleted
            let time = acceptedAt.adding(days: 5 + n % 14).addingSeconds(n * 97)
            let jti = "jti-\(Rehearsal.derive("jti", String(i)))"
            let draft = EventDraft(.notificationReceived(NotificationReceived(kind: kind, eventTime: time)), identifiers: Identifiers(recipientSub: recipientSub(i), jti: jti), occurredAt: time, idempotencyKey: "notification:\(jti)")
            events.append(draft)
            if n == 0 { events.append(draft) }
        }
        let stranger = "001999.\(Rehearsal.derive("stranger")).0001"
        events.append(EventDraft(.notificationReceived(NotificationReceived(kind: .consentRevoked, eventTime: .now())), identifiers: Identifiers(recipientSub: stranger, jti: "jti-stranger"), occurredAt: .now(), idempotencyKey: "notification:jti-stranger"))
        events.append(EventDraft(.notificationRejected(TokenRejected(reason: "bad-signature", detail: "RS256 signature does not verify with key kid=W6WcOKB", payloadSHA256: Rehearsal.sha256Hex("forged")))))
        try await appendConcurrently(events, to: ledger)

        // The ledger's policy erases users whose account Apple reports deleted.
        let eraser = UserEraser(ledger: ledger, projection: projection)
        for i in migrated.prefix(60).suffix(10) { _ = try await eraser.erase(recipientSub(i), reason: "account-deleted notification") }
    }

    /// Appends from 16 concurrent tasks, as a migration run does, so commits are shared.
    private func appendConcurrently(_ drafts: [EventDraft], to ledger: Ledger) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            let lanes = 16
            for lane in 0..<lanes {
                let mine = stride(from: lane, to: drafts.count, by: lanes).map { drafts[$0] }
                group.addTask { for draft in mine { _ = try await ledger.append(draft) } }
            }
            try await group.waitForAll()
        }
    }
}

extension Timestamp {
    func addingSeconds(_ seconds: Int) -> Timestamp { Timestamp(microseconds: microseconds + Int64(seconds) * 1_000_000) }
}
