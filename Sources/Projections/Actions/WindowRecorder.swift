import Basics
import ExitStatuses
import Ledger

/// Records the app-transfer acceptance date, which starts the 60-day window.
public struct WindowRecorder {
    public let ledger: Ledger
    public let projection: UserProjection

    public init(ledger: Ledger, projection: UserProjection) {
        self.ledger = ledger
        self.projection = projection
    }

    /// Why a date was not recorded.
    public struct Refusal: Error, CustomStringConvertible, ExitStatusDeciding {
        public let description: String
        public var exitStatus: ExitStatus { .usage }
    }

    /// Records `acceptedAt`. The same date again is a no-op; a different one is refused
    /// unless `correcting` is set (then a new event supersedes the old one).
    @discardableResult
    public func record(acceptedAt: Timestamp, correcting: Bool) async throws -> Bool {
        let current = try projection.read(ledger) { snapshot, _ in try snapshot.window() }
        if let current {
            if current.acceptedAt == acceptedAt { return false }
            guard correcting else {
                throw Refusal(
                    description:
                        "the window was already recorded as accepted at \(current.acceptedAt.rfc3339) (event \(current.sequence)); pass --correct to record \(acceptedAt.rfc3339) instead"
                )
            }
        }
        let days = try ledger.identity().windowDays
        _ = try await ledger.append(EventDraft(.transferAccepted(TransferAccepted(acceptedAt: acceptedAt, windowDays: days)), occurredAt: acceptedAt))
        return true
    }
}
