import Basics
import Ledger

/// The projection rules: how each event type changes the users and the transfer window.
///
/// Every event type has a rule here, including those that touch no user (run and token
/// events, rejections), which only advance the checkpoint.
struct UserFold<Store: ProjectionStore> {
    let store: Store

    func fold(_ event: RecordedEvent) throws {
        let time = event.effectiveTime
        switch event.body {
        case .ledgerCreated, .runStarted, .runFinished, .accessTokenIssued, .accessTokenFailed, .signInRejected, .notificationRejected,
            .rejectionsSummarized,
            .handoffIssued, .handoffReceived, .handoffRefused, .handoffAcknowledged, .applyStarted, .applyIntended, .witnessCosigned,
            .checkpointWitnessed, .witnessRequestRefused, .personIndexCommitted:
            break
        case .applySettled(let body) where body.committed:
            // Each cell's outcome becomes its user's; an undo changes only what it restored.
            for row in body.rows {
                let outcomes = row.outcomes.filter { !body.undo || $0.outcome == .undone }
                guard !outcomes.isEmpty else { continue }
                try update([Identifier(.accountID, row.account)], at: event.sequence, creating: nil) { u in
                    for cell in outcomes { u.applied[cell.column] = AppliedCell(cell.outcome, at: event.recordedAt) }
                }
            }
        case .applySettled:
            break
        case .handoffRowsReceived(let body):
            // Each row is a user handed over: known from now on by transfer_sub and account_id.
            for (accountID, transferSub) in zip(body.accountIDs, body.transferSubs) {
                let ids =
                    accountID.isEmpty
                    ? [Identifier(.transferSub, transferSub)] : [Identifier(.accountID, accountID), Identifier(.transferSub, transferSub)]
                try update(ids, at: event.sequence, creating: .received) { u in
                    if u.status == .pending || u.status == .unmatched { u.status = .received }
                    u.package = u.package ?? body.package
                }
            }
        case .transferAccepted(let accepted):
            try store.setWindow(TransferWindow(acceptedAt: accepted.acceptedAt, windowDays: accepted.windowDays, sequence: event.sequence))
        case .transferIDGenerated(let body):
            try update(event, creating: .pending) { u in
                u.targetTeam = body.targetTeam
                u.attempts += 1
                u.lastAttemptAt = time
                u.lastError = nil
                u.lastErrorClass = nil
                if !u.status.isDone {
                    u.status = .transferIDGenerated
                    u.migratedAt = time
                    u.migratedRecordedAt = event.recordedAt
                    u.migratedVia = .transferIDGeneration
                }
            }
        case .transferIDGenerationFailed(let body):
            try update(event, creating: .pending) { u in
                u.targetTeam = body.targetTeam
                recordFailure(body.failure, at: time, in: &u)
            }
        case .transferIDExchanged(let body):
            try update(event, creating: .pending) { u in
                u.attempts += 1
                u.lastAttemptAt = time
                u.lastError = nil
                u.lastErrorClass = nil
                markMigrated(&u, via: .exchange, at: time, recordedAt: event.recordedAt)
                setEmail(body.email, at: event.recordedAt, in: &u)
                if let isPrivate = body.isPrivateEmail { u.isPrivateEmail = isPrivate }
            }
        case .transferIDExchangeFailed(let body):
            try update(event, creating: .pending) { u in recordFailure(body.failure, at: time, in: &u) }
        case .signInVerified(let body):
            let linked = event.identifiers.transferSub != nil
            try update(event, creating: linked ? .pending : .unmatched) { u in
                if linked { markMigrated(&u, via: .signIn, at: time, recordedAt: event.recordedAt) }
                setEmail(body.email, at: event.recordedAt, in: &u)
                if let isPrivate = body.isPrivateEmail { u.isPrivateEmail = isPrivate }
            }
        case .notificationReceived(let body):
            try update(event, creating: .unmatched) { u in
                u.notifications += 1
                switch body.kind {
                case .emailEnabled, .emailDisabled:
                    u.emailForwarding = body.kind == .emailEnabled
                    u.emailForwardingChangedAt = event.recordedAt
                case .consentRevoked: u.consentRevokedAt = u.consentRevokedAt ?? body.eventTime
                case .accountDeleted: u.accountDeletedAt = u.accountDeletedAt ?? body.eventTime
                }
                if u.erasedAt == nil { setEmail(body.email, at: event.recordedAt, in: &u) }
                if let isPrivate = body.isPrivateEmail { u.isPrivateEmail = isPrivate }
            }
        case .userErased:
            try update(event, creating: nil) { u in
                u.erasedAt = u.erasedAt ?? event.recordedAt
                u.email = nil
            }
        }
        try store.setCheckpoint(event.sequence)
    }

    private func markMigrated(_ u: inout UserState, via path: MigrationPath, at time: Timestamp, recordedAt: Timestamp) {
        guard u.status != .migrated else { return }
        u.status = .migrated
        u.migratedAt = time
        u.migratedRecordedAt = recordedAt
        u.migratedVia = path
    }

    /// The address an event carried, when it carried one, and when it was recorded.
    private func setEmail(_ email: SealedValue?, at recordedAt: Timestamp, in u: inout UserState) {
        guard let email else { return }
        u.email = email
        u.emailChangedAt = recordedAt
    }

    private func recordFailure(_ failure: CallFailure, at time: Timestamp, in u: inout UserState) {
        u.attempts += 1
        u.lastAttemptAt = time
        u.lastErrorClass = failure.kind
        u.lastError = failure.message
        if !u.status.isDone { u.status = .failed }
    }

    /// Finds the user the event's identifiers name (merging users those identifiers join),
    /// creates one with status `creating` when none exists, applies `change`, links every
    /// identifier and stores the result. With `creating` nil an unknown user is left alone.
    private func update(_ event: RecordedEvent, creating initial: UserStatus?, _ change: (inout UserState) -> Void) throws {
        try update(event.identifiers.all.filter { $0.kind != .jti }, at: event.sequence, creating: initial, change)
    }

    /// ``update(_:creating:_:)`` for the user `ids` name, as event `sequence` does.
    private func update(_ ids: [Identifier], at sequence: UInt64, creating initial: UserStatus?, _ change: (inout UserState) -> Void) throws {
        let found = try ids.map { try store.userKey(for: $0) }
        var keys: [UInt64] = []
        for case let key? in found where !keys.contains(key) { keys.append(key) }
        var user: UserState
        if let first = keys.min(), var existing = try store.user(first) {
            for other in keys where other != first {
                guard let merged = try store.user(other) else { continue }
                UserFold.merge(merged, into: &existing)
                for id in merged.identifiers { try store.link(id, to: first, at: sequence) }
                try store.remove(other, at: sequence)
            }
            user = existing
        } else if let initial {
            user = UserState(key: try store.allocateUserKey(), status: initial, sequence: sequence)
        } else {
            return
        }
        for id in ids where user.ids[id.kind] == nil {
            user.ids[id.kind] = id.value
        }
        for (id, key) in zip(ids, found) where key != user.key {
            try store.link(id, to: user.key, at: sequence)
        }
        change(&user)
        user.lastSequence = sequence
        try store.put(user)
    }

    /// Folds a second record of the same person into `target` (kept fields win; counts add).
    static func merge(_ other: UserState, into target: inout UserState) {
        for kind in IdentifierKind.userKinds where target.ids[kind] == nil { target.ids[kind] = other.ids[kind] }
        if other.status > target.status {
            target.status = other.status
            target.migratedAt = other.migratedAt
            target.migratedRecordedAt = other.migratedRecordedAt
            target.migratedVia = other.migratedVia
        }
        target.targetTeam = target.targetTeam ?? other.targetTeam
        target.package = target.package ?? other.package
        for column in ApplyColumn.allCases where target.applied[column] == nil { target.applied[column] = other.applied[column] }
        if target.email == nil { (target.email, target.emailChangedAt) = (other.email, other.emailChangedAt) }
        target.isPrivateEmail = target.isPrivateEmail ?? other.isPrivateEmail
        if target.emailForwarding == nil {
            (target.emailForwarding, target.emailForwardingChangedAt) = (other.emailForwarding, other.emailForwardingChangedAt)
        }
        target.consentRevokedAt = [target.consentRevokedAt, other.consentRevokedAt].compactMap { $0 }.min()
        target.accountDeletedAt = [target.accountDeletedAt, other.accountDeletedAt].compactMap { $0 }.min()
        target.erasedAt = [target.erasedAt, other.erasedAt].compactMap { $0 }.min()
        target.attempts += other.attempts
        target.notifications += other.notifications
        if (other.lastAttemptAt ?? Timestamp(microseconds: .min)) > (target.lastAttemptAt ?? Timestamp(microseconds: .min)) {
            target.lastAttemptAt = other.lastAttemptAt
            target.lastError = other.lastError
            target.lastErrorClass = other.lastErrorClass
        }
        target.firstSequence = min(target.firstSequence, other.firstSequence)
        target.lastSequence = max(target.lastSequence, other.lastSequence)
    }
}
