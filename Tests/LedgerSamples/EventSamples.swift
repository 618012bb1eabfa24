import Basics
import Ledger

/// One realistic example of every event type, for round-trip tests, schema checks and docs.
public enum EventSamples {
    /// A draft of each type in ``EventType/allCases`` order.
    public static func all(
        email: SealedValue = SealedValue(keyID: "00112233445566778899aabbccddeeff", combined: "bm9uY2UxMjM0NTY3Y2lwaGVydGV4dHRhZ3RhZ3RhZ3RhZw==")
    ) -> [EventDraft] {
        let t = Timestamp(rfc3339: "2026-11-02T09:30:00Z")!
        let user = Identifiers(accountID: "acct-42", senderSub: "000123.abc.0456", transferSub: "t.9f8e7d", recipientSub: "001999.def.0789")
        let senderCheckpoint = CheckpointFields(
            origin: "handover/AAAA111111/0c4e2a10-0000-4000-8000-000000000002", treeSize: 4_215,
            rootHash: "7f1u3xh1m9g9c0uK0S5Tq2lQ3Yy1mN0nq9XjQe4bq5U=",
            signature: "q1b2cwABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=")
        let senderNote =
            "\(senderCheckpoint.origin)\n\(senderCheckpoint.treeSize)\n\(senderCheckpoint.rootHash)\n\n\u{2014} \(senderCheckpoint.origin) \(senderCheckpoint.signature)\n"
        // Package 2's two rows, and the digest `verify` rebuilds from them: the samples hold together.
        let rows = (
            accountIDs: ["acct-42", "acct-44"], transferSubs: ["t.9f8e7d", "t.1111"], sequences: [4_102, 4_107],
            salts: [Array(0..<16), Array(16..<32)].map { $0.map(UInt8.init) }
        )
        var digest = HandoffRowsDigest(form: .v2)
        for i in 0..<2 {
            digest.add(accountID: rows.accountIDs[i], transferSub: rows.transferSubs[i], sequence: UInt64(rows.sequences[i]), salt: rows.salts[i])
        }
        let rowsSHA256 = digest.finalize()
        let received = HandoffRowsReceived(
            origin: senderCheckpoint.origin, package: 2, manifestSHA256: String(repeating: "78", count: 32), fileSHA256: rowsSHA256, chunk: 0,
            chunkCount: 1, rowCount: 2, firstRow: 0, accountIDs: rows.accountIDs, transferSubs: rows.transferSubs, sequences: rows.sequences,
            salts: rows.salts)
        let salt = { (first: Int) in (first..<first + 16).map(UInt8.init) }
        // acct-42 takes its new sub and its relay address (both addresses sealed) and has its
        // forwarding flag set; acct-44's sub collides and its email is the user's own, kept.
        let intent = ApplyIntended(
            batch: 0,
            rows: [
                ApplyIntended.Row(
                    account: "acct-42",
                    cells: [
                        ApplyCell(column: .recipientSub, old: .text("000123.abc.0456"), new: .text("001999.def.0789"), planned: .change),
                        ApplyCell(column: .email, old: .sealed(email), new: .sealed(email), planned: .change),
                        ApplyCell(column: .emailForwarding, old: nil, new: .text("true"), planned: .change),
                    ]),
                ApplyIntended.Row(
                    account: "acct-44",
                    cells: [
                        ApplyCell(column: .recipientSub, old: nil, new: .text("001999.ghi.0789"), planned: .collision, holders: ["acct-7"]),
                        ApplyCell(column: .email, old: nil, new: nil, planned: .kept),
                    ]),
            ], salts: [salt(32), salt(48)], holderSalts: [ApplyIntended.CellIndex(row: 1, column: .recipientSub): salt(64)])
        let failure = CallFailure(
            kind: .invalidRequest, code: "invalid_request", httpStatus: 400, message: "Apple answered \"invalid_request\"\nuser revoked", attempts: 2)
        let drafts: [EventDraft] = [
            EventDraft(
                .ledgerCreated(
                    LedgerCreated(
                        teamID: "BBBB222222", clientIDs: ["com.example.app", "com.example.web"], role: .recipient,
                        ledgerID: "5b1f3c8e-0000-4000-8000-000000000001"))),
            EventDraft(.transferAccepted(TransferAccepted(acceptedAt: t)), occurredAt: t),
            EventDraft(
                .runStarted(
                    RunStarted(
                        command: "exchange", inputPath: "handoff.csv", inputSHA256: String(repeating: "ab", count: 32), targetTeam: nil,
                        userCount: 2000)), runID: "run-1"),
            EventDraft(
                .runFinished(
                    RunFinished(command: "exchange", counts: ["succeeded": 1990, "failed": 10], durationMilliseconds: 61_000, exitStatus: 1)),
                runID: "run-1"),
            EventDraft(
                .accessTokenIssued(
                    AccessTokenIssued(
                        teamID: "BBBB222222", clientID: "com.example.app", keyID: "KEY1234567", expiresAt: t.adding(days: 1),
                        fingerprint: "0123456789abcdef")), occurredAt: t, runID: "run-1"),
            EventDraft(
                .accessTokenFailed(
                    AccessTokenFailed(
                        teamID: "BBBB222222", clientID: "com.example.app",
                        failure: CallFailure(kind: .invalidClient, code: "invalid_client", httpStatus: 400, message: "client secret refused"))),
                runID: "run-1"),
            EventDraft(
                .transferIDGenerated(TransferIDGenerated(targetTeam: "BBBB222222")),
                identifiers: Identifiers(accountID: "acct-42", senderSub: "000123.abc.0456", transferSub: "t.9f8e7d"),
                idempotencyKey: "generate:BBBB222222:000123.abc.0456"),
            EventDraft(
                .transferIDGenerationFailed(TransferIDGenerationFailed(targetTeam: "BBBB222222", failure: failure)),
                identifiers: Identifiers(accountID: "acct-43", senderSub: "000123.abd.0456")),
            EventDraft(
                .transferIDExchanged(TransferIDExchanged(email: email, isPrivateEmail: true)),
                identifiers: Identifiers(accountID: "acct-42", transferSub: "t.9f8e7d", recipientSub: "001999.def.0789"),
                idempotencyKey: "exchange:t.9f8e7d"),
            EventDraft(
                .transferIDExchangeFailed(
                    TransferIDExchangeFailed(failure: CallFailure(kind: .rateLimited, httpStatus: 429, message: "HTTP 429", attempts: 6))),
                identifiers: Identifiers(accountID: "acct-44", transferSub: "t.1111")),
            EventDraft(
                .signInVerified(
                    SignInVerified(
                        audience: "com.example.app", issuedAt: t, expiresAt: t.adding(days: 1), email: email, emailVerified: true,
                        isPrivateEmail: true, nonceChecked: true, realUserStatus: 2)),
                identifiers: Identifiers(transferSub: "t.1111", recipientSub: "001999.ghi.0789"), occurredAt: t),
            EventDraft(
                .signInRejected(
                    TokenRejected(reason: "expired", detail: "exp is 3 hours in the past", payloadSHA256: String(repeating: "cd", count: 32)))),
            EventDraft(
                .notificationReceived(NotificationReceived(kind: .emailDisabled, eventTime: t, email: email, isPrivateEmail: true)),
                identifiers: Identifiers(recipientSub: "001999.def.0789", jti: "jti-1"), occurredAt: t,
                idempotencyKey: EventDraft.notificationIdempotencyKey(jti: "jti-1")),
            EventDraft(
                .notificationRejected(
                    TokenRejected(
                        reason: "bad-signature", detail: "signature does not verify with kid W6WcOKB",
                        payloadSHA256: String(repeating: "ef", count: 32)))),
            EventDraft(.userErased(UserErased(reason: "account-deleted notification", keysDestroyed: 1)), identifiers: user),
            EventDraft(
                .rejectionsSummarized(
                    RejectionsSummarized(
                        source: "203.0.113.7", from: t, until: Timestamp(microseconds: t.microseconds + 60_000_000),
                        counts: ["notifications": 4_210, "sign-ins": 3], firstPayloadSHA256: String(repeating: "12", count: 32),
                        lastPayloadSHA256: String(repeating: "34", count: 32)))),
            EventDraft(
                .handoffIssued(
                    HandoffIssued(
                        package: 2, targetTeam: "BBBB222222", rowCount: 2, rowsSHA256: rowsSHA256,
                        manifestSHA256: String(repeating: "78", count: 32), previousTreeSize: 4_100, checkpoint: senderCheckpoint)),
                idempotencyKey: "handoff-issued:BBBB222222:2"),
            EventDraft(
                .handoffReceived(
                    HandoffReceived(
                        senderTeam: "AAAA111111", package: 2, rowCount: 2, rowsSHA256: rowsSHA256,
                        rowsRoot: received.rowsRoot.map { Hex.encode($0.bytes) }, manifestSHA256: String(repeating: "78", count: 32),
                        manifest: "handover-handoff/v2\npackage 2\n…",
                        packagePath: "handoff-0002",
                        checkpoint: senderCheckpoint)),
                idempotencyKey: "handoff-received:" + senderCheckpoint.origin + ":2"),
            EventDraft(
                .handoffRefused(
                    HandoffRefused(
                        reason: "rows-digest", detail: "rows.csv hashes to 9a…, the manifest says 56…: a row was changed, removed or added",
                        packagePath: "handoff-0002", manifestSHA256: String(repeating: "78", count: 32), senderKeyName: senderCheckpoint.origin))),
            EventDraft(
                .handoffAcknowledged(
                    HandoffAcknowledged(
                        package: 2, targetTeam: "BBBB222222", manifestSHA256: String(repeating: "78", count: 32), recipientSequence: 2_051,
                        recipientCheckpoint: CheckpointFields(
                            origin: "handover/BBBB222222/5b1f3c8e-0000-4000-8000-000000000001", treeSize: 2_051,
                            // A checkpoint signed before 0.5.0, with its time line.
                            rootHash: "3q2+7w3erbvN3q2+7w3erbvN3q2+7w3erbvN3q2+7w0=", time: t, signature: senderCheckpoint.signature),
                        cosignedAt: t,
                        cosignature: "AAECAwAAAABqAAAAAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==")),
                idempotencyKey: "handoff-acknowledged:" + String(repeating: "78", count: 32)),
            EventDraft(.handoffRowsReceived(received), idempotencyKey: received.idempotencyKey),
            EventDraft(
                .applyStarted(
                    ApplyStarted(
                        targetKind: .postgres, target: "postgres://db.example.com:5432/app?sslmode=require", table: "accounts", keyColumn: "id",
                        columns: PerColumn(recipientSub: "apple_sub", email: "email", emailForwarding: "mail_forwarded"),
                        condition: "provider = 'apple'", undoOf: nil, userCount: 2, batchSize: 1_000,
                        accountsSHA256: "5b6e8a3b8d8a0e5f7b0a2c5f6f4d1e2c3b4a5968778695a4b3c2d1e0f9e8d7c6", sinceLast: true)),
                idempotencyKey: ApplyStarted.idempotencyKey(run: "run-4"), runID: "run-4"),
            EventDraft(.applyIntended(intent), idempotencyKey: ApplyIntended.idempotencyKey(run: "run-4", batch: 0), runID: "run-4"),
            EventDraft(
                .applySettled(
                    ApplySettled(
                        batch: 0, intentSHA256: intent.sha256, committed: true, recovered: false, undo: false,
                        rows: [
                            ApplySettled.Row(
                                account: "acct-42",
                                outcomes: [
                                    ApplyCellOutcome(.recipientSub, .applied), ApplyCellOutcome(.email, .applied),
                                    ApplyCellOutcome(.emailForwarding, .applied),
                                ]),
                            ApplySettled.Row(
                                account: "acct-44", outcomes: [ApplyCellOutcome(.recipientSub, .collision), ApplyCellOutcome(.email, .kept)]),
                        ], salts: [salt(80), salt(96)])),
                idempotencyKey: ApplySettled.idempotencyKey(run: "run-4", batch: 0), runID: "run-4"),
            EventDraft(
                .witnessCosigned(
                    WitnessCosigned(
                        witnessKey: "witness.example.org+7b4a71ef+BIIfV1bZ3w6M1gXb5XvQz0b1Ck2S8dQ5v0sJm4Yy3nEc",
                        url: "https://witness.example.org/add-checkpoint", checkpoint: senderCheckpoint, oldSize: 4_100,
                        cosignature: "bxwqfgAAAABqAAAAAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==",
                        cosignedAt: t)),
                idempotencyKey: WitnessCosigned.idempotencyKey(
                    witnessKey: "witness.example.org+7b4a71ef+BIIfV1bZ3w6M1gXb5XvQz0b1Ck2S8dQ5v0sJm4Yy3nEc", treeSize: 4_215)),
            EventDraft(
                .checkpointWitnessed(
                    CheckpointWitnessed(
                        origin: senderCheckpoint.origin, treeSize: 4_215, rootHash: senderCheckpoint.rootHash, oldSize: 4_100,
                        checkpoint: senderNote,
                        cosignature: "bxwqfgAAAABqAAAAAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw==",
                        cosignedAt: t)),
                idempotencyKey: CheckpointWitnessed.idempotencyKey(origin: senderCheckpoint.origin, oldSize: 4_100)),
            EventDraft(
                .witnessRequestRefused(
                    WitnessRequestRefused(
                        origin: senderCheckpoint.origin, status: 422,
                        reason: "the consistency proof from 4215 events does not lead to this checkpoint's root",
                        request: "old 4215\n\n" + senderNote, cosignedSize: 4_215,
                        cosignedRoot: senderCheckpoint.rootHash)),
                idempotencyKey: WitnessRequestRefused.idempotencyKey(requestSHA256: String(repeating: "9a", count: 32))),
            EventDraft(
                .personIndexCommitted(PersonIndexCommitted(indexedSize: 4_300, root: String(repeating: "5c", count: 32), names: 1_204)),
                idempotencyKey: PersonIndexCommitted.idempotencyKey(indexedSize: 4_300)),
        ]
        assert(drafts.map(\.type) == EventType.allCases)
        return drafts
    }

    /// Drafts that carry the optional fields ``all(email:)`` leaves out, so the schema checks
    /// see them too: a sign-in backfilled with `ingest sign-in --verify-at`, an interrupted run,
    /// a generate run stopped by the breaker after pauses, a token refused for a named key.
    public static func variants() -> [EventDraft] {
        let t = Timestamp(rfc3339: "2026-11-02T09:30:00Z")!
        return [
            EventDraft(
                .runStarted(
                    RunStarted(
                        command: "generate", inputPath: "users.csv", inputSHA256: String(repeating: "12", count: 32), targetTeam: "BBBB222222",
                        userCount: 2000)), runID: "run-6"),
            EventDraft(
                .runFinished(
                    RunFinished(
                        command: "generate", counts: ["succeeded": 0, "failed": 230, "abandoned": 4, "not_attempted": 1766],
                        durationMilliseconds: 9_800, exitStatus: 3,
                        stoppedBy: CallFailure(
                            kind: .invalidRequest, code: "invalid_request", httpStatus: 400, message: "230 of the last 250 calls refused the same way"
                        ),
                        stopReason: .breaker, appleUnavailable: RunFinished.AppleUnavailable(pauses: 1, pausedMilliseconds: 2_500, callsRefused: 7))),
                runID: "run-6"),
            EventDraft(
                .accessTokenFailed(
                    AccessTokenFailed(
                        teamID: "BBBB222222", clientID: "com.example.app", keyID: "KEYB222222",
                        failure: CallFailure(kind: .invalidToken, httpStatus: 401, message: "the access token was refused"))), runID: "run-6"),
            EventDraft(
                .runStarted(
                    RunStarted(
                        command: "exchange", inputPath: "handoff-0001/rows.csv", inputSHA256: String(repeating: "56", count: 32), userCount: 1990,
                        handoff: "signed", handoffManifestSHA256: String(repeating: "78", count: 32))), runID: "run-3"),
            EventDraft(
                .runFinished(
                    RunFinished(
                        command: "exchange", counts: ["succeeded": 310, "failed": 0, "abandoned": 2, "not_attempted": 1688],
                        durationMilliseconds: 4_200, exitStatus: 130, interrupted: "SIGINT")), runID: "run-2"),
            EventDraft(
                .signInVerified(
                    SignInVerified(
                        audience: "com.example.app", issuedAt: t, expiresAt: t.adding(days: 1), realUserStatus: 2,
                        verifiedAt: Timestamp(microseconds: t.microseconds + 3_600_000_000))),
                identifiers: Identifiers(transferSub: "t.2222", recipientSub: "001999.jkl.0789"), occurredAt: t),
            EventDraft(
                .handoffRowsReceived(
                    HandoffRowsReceived(
                        origin: nil, package: nil, manifestSHA256: nil, fileSHA256: String(repeating: "9a", count: 32),
                        chunk: 0, chunkCount: 1, rowCount: 1, firstRow: 0, accountIDs: [""], transferSubs: ["t.3333"], sequences: [])),
                idempotencyKey: HandoffRowsReceived.idempotencyKey(
                    origin: nil, package: nil, fileSHA256: String(repeating: "9a", count: 32), chunk: 0)),
            EventDraft(
                .applyStarted(
                    ApplyStarted(
                        targetKind: .sqlite, target: "/srv/app/app.sqlite", table: "accounts", keyColumn: "id",
                        columns: PerColumn(recipientSub: "apple_sub"), condition: nil, undoOf: "run-4", userCount: 1, batchSize: 1_000)),
                idempotencyKey: ApplyStarted.idempotencyKey(run: "run-5"), runID: "run-5"),
            // Apply batches as versions before 0.5.0 wrote them: the accounts in the body.
            EventDraft(
                .applyIntended(
                    ApplyIntended(
                        batch: 0, accountIDs: ["acct-42", "acct-44"], oldValues: ["001999.def.0789", nil], newValues: ["000123.abc.0456", nil],
                        planned: [.change, .collision], holders: [1: ["acct-7"]])),
                idempotencyKey: ApplyIntended.idempotencyKey(run: "run-5", batch: 0), runID: "run-5"),
            EventDraft(
                .applySettled(
                    ApplySettled(
                        batch: 0, intentSHA256: String(repeating: "bc", count: 32), committed: false, recovered: true, undo: true,
                        accountIDs: ["acct-42"], outcomes: [])),
                idempotencyKey: ApplySettled.idempotencyKey(run: "run-5", batch: 0), runID: "run-5"),
        ]
    }
}
