import AppleID
import Ledger
import Projections

/// What a run does for each user, for one side of the transfer: which identifier names the
/// user, how Apple is called, which events record the outcome, and the output CSV's rows.
public protocol MigrationStep: Sendable {
    /// The command's name, as recorded in "run started".
    var command: String { get }
    /// The input column naming each user.
    var keyColumn: String { get }
    /// The ledger role this step belongs to.
    var role: LedgerCreated.Role { get }
    /// The team users are sent to (generate only).
    var targetTeam: String? { get }
    /// The output CSV's columns.
    var output: Answer<MigrationOutputRow> { get }

    /// The ledger's idempotency key for this user's success event: present means done.
    func idempotencyKey(for user: MigrationUser) -> String
    /// The identifier this user is known by in the ledger before the call.
    func identifier(for user: MigrationUser) -> Identifier
    /// Called with the next users to be attempted, before any is attempted (in order, once each).
    func prepare(_ users: ArraySlice<MigrationUser>) throws
    /// Calls Apple for `user` and returns the success event to record.
    func perform(_ user: MigrationUser, session: AppleSession, runID: String) async throws -> EventDraft
    /// The event recording that `user` failed with `failure`.
    func failureEvent(_ user: MigrationUser, failure: CallFailure, runID: String) -> EventDraft
    /// The output row for a user whose success event is `event`.
    func outputRow(for user: MigrationUser, event: RecordedEvent, sealer: Sealer) throws -> MigrationOutputRow?
    /// Whether the user, as the ledger knows them (`state`), is done without this step's call:
    /// team B's user who signed in with a `transfer_sub` during the window.
    func isDoneWithoutCall(_ state: UserState) -> Bool
    /// The output row for a user done without this step's call, from what the ledger knows.
    func outputRow(for user: MigrationUser, state: UserState, sealer: Sealer) throws -> MigrationOutputRow?
}

extension MigrationStep {
    public func prepare(_ users: ArraySlice<MigrationUser>) throws {}
    public func isDoneWithoutCall(_ state: UserState) -> Bool { false }
    public func outputRow(for user: MigrationUser, state: UserState, sealer: Sealer) throws -> MigrationOutputRow? { nil }
}

extension CallFailure {
    /// The ledger's record of an error from Apple.
    public init(_ error: AppleIDError) {
        self.init(kind: error.code, code: error.appleError, httpStatus: error.httpStatus, message: error.message, attempts: error.attempts)
    }
}
