import AppleID
import Crypto
import Ledger
import Projections
import Synchronization

/// Team B's step: each `transfer_sub` becomes the team's own `sub` and email; the email is
/// sealed with the user's data key before it reaches the ledger.
public final class TransferIDExchange: MigrationStep {
    private let keyStore: KeyStore
    /// Data keys made ahead for the users about to be attempted, by `transfer_sub`.
    private let keys = Mutex<[String: (id: String, key: SymmetricKey)]>([:])

    public init(keyStore: KeyStore) { self.keyStore = keyStore }

    public var command: String { "exchange" }
    public var keyColumn: String { "transfer_sub" }
    public var role: LedgerCreated.Role { .recipient }
    public var targetTeam: String? { nil }
    public var output: Answer<MigrationOutputRow> { MigrationOutputRow.exchange }

    public func idempotencyKey(for user: MigrationUser) -> String { "exchange:\(user.identifier)" }

    public func identifier(for user: MigrationUser) -> Identifier { Identifier(.transferSub, user.identifier) }

    /// Makes the data keys of the next users in one key-store transaction, so sealing
    /// costs no fsync per user. A key made for a user whose exchange then fails is unused.
    public func prepare(_ users: ArraySlice<MigrationUser>) throws {
        let subjects = users.map { identifier(for: $0) }
        let made = try keyStore.dataKeys(for: subjects)
        keys.withLock { keys in
            for (subject, key) in zip(subjects, made) { keys[subject.value] = key }
        }
    }

    public func perform(_ user: MigrationUser, session: AppleSession, runID: String) async throws -> EventDraft {
        let migrated = try await session.exchangeTransferID(user.identifier)
        var sealed: SealedValue?
        if let email = migrated.email {
            let prepared = keys.withLock { $0.removeValue(forKey: user.identifier) }
            let key = if let prepared { prepared } else { try await keyStore.dataKey(for: identifier(for: user)) }
            sealed = try Sealer.seal(email, keyID: key.id, key: key.key)
        }
        return EventDraft(
            .transferIDExchanged(TransferIDExchanged(email: sealed, isPrivateEmail: migrated.isPrivateEmail)),
            identifiers: Identifiers(accountID: user.accountID, transferSub: user.identifier, recipientSub: migrated.sub),
            idempotencyKey: idempotencyKey(for: user), runID: runID)
    }

    public func failureEvent(_ user: MigrationUser, failure: CallFailure, runID: String) -> EventDraft {
        keys.withLock { _ = $0.removeValue(forKey: user.identifier) }
        return EventDraft(
            .transferIDExchangeFailed(TransferIDExchangeFailed(failure: failure)),
            identifiers: Identifiers(accountID: user.accountID, transferSub: user.identifier), runID: runID)
    }

    public func outputRow(for user: MigrationUser, event: RecordedEvent, sealer: Sealer) throws -> MigrationOutputRow? {
        guard case .transferIDExchanged(let body) = event.body else { return nil }
        return try row(
            user, accountID: event.identifiers.accountID, recipientSub: event.identifiers.recipientSub, email: body.email,
            isPrivateEmail: body.isPrivateEmail, sealer: sealer)
    }

    /// A user who signed in with this `transfer_sub` during the window already has team B's
    /// `sub`: calling Apple for them again would only repeat what the sign-in recorded.
    public func isDoneWithoutCall(_ state: UserState) -> Bool {
        state.status == .migrated && state.migratedVia == .signIn
    }

    public func outputRow(for user: MigrationUser, state: UserState, sealer: Sealer) throws -> MigrationOutputRow? {
        try row(
            user, accountID: state.accountID, recipientSub: state.recipientSub, email: state.erasedAt == nil ? state.email : nil,
            isPrivateEmail: state.isPrivateEmail, sealer: sealer)
    }

    /// The user's row; the address opened with the user's key, none once the user is erased.
    private func row(
        _ user: MigrationUser, accountID: String?, recipientSub: String?, email: SealedValue?, isPrivateEmail: Bool?,
        sealer: Sealer
    ) throws -> MigrationOutputRow {
        let address = try email.flatMap { try sealer.open($0) }
        return MigrationOutputRow(
            accountID: user.accountID ?? accountID, transferSub: user.identifier, recipientSub: recipientSub,
            email: address.map(EmailValue.clear) ?? .none, isPrivateEmail: isPrivateEmail)
    }
}
