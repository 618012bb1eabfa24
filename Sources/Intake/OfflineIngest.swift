import AppleID
import Basics
import ExitStatuses
import Foundation
import Ledger

/// Items read from files or lines (`handover ingest`), handed to ``AppleIntake`` one after
/// another: what each came to, counted, and each refusal said as it happens.
public struct OfflineIngest {
    /// What the items are.
    public enum Kind: Sendable {
        case notification
        /// Identity tokens, checked against `verifyAt` instead of now when given (a backfill).
        case signIn(verifyAt: Date?)
    }

    /// What the items came to.
    public struct Tally: Sendable {
        public var recorded = 0, duplicates = 0, erased = 0
        /// Refusals by reason.
        public var rejected: [String: Int] = [:]
        public var rejectedCount: Int { rejected.values.reduce(0, +) }
    }

    /// Apple's keys could not be had, so the item could not be checked: nothing more is read,
    /// and the command ends not all done (exit 1).
    public struct Stopped: Error, CustomStringConvertible, ExitStatusDeciding {
        /// Where the item came from (a file, a line of standard input).
        public let source: String
        public let cause: AppleKeySet.Unavailable
        public var description: String { "\(cause.description); nothing more was ingested (\(source) and later items were not read)" }
        public var exitStatus: ExitStatus { .failed }
    }

    public let intake: AppleIntake
    public let kind: Kind

    public init(intake: AppleIntake, kind: Kind) {
        self.intake = intake
        self.kind = kind
    }

    /// Ingests `items` in order; `onRejected` gets each refusal's line, its source first.
    /// Throws ``Stopped`` when Apple's keys cannot be had.
    public func run(_ items: [(source: String, data: Data)], onRejected: (String) -> Void) async throws -> Tally {
        var tally = Tally()
        for (source, data) in items {
            let receipt: IntakeReceipt
            do {
                switch kind {
                case .notification: receipt = try await intake.receiveNotification(data)
                case .signIn(let verifyAt):
                    let report = SignInReport(data)
                    receipt = try await intake.receiveSignIn(report.token, nonce: report.nonce, verifyAt: verifyAt, received: report.received)
                }
            } catch let error as AppleKeySet.Unavailable {
                throw Stopped(source: source, cause: error)
            }
            if receipt.erased { tally.erased += 1 }
            switch receipt.outcome {
            case .recorded: tally.recorded += 1
            case .duplicate: tally.duplicates += 1
            case .rejected(let rejection, let sequence):
                tally.rejected[rejection.reason.rawValue, default: 0] += 1
                onRejected("\(source): rejected (\(rejection.reason)): \(InertText.forScreen(rejection.detail)) [event \(sequence)]")
            case .suppressed(let rejection, _):  // ingest sets no flood guard; counted all the same
                tally.rejected[rejection.reason.rawValue, default: 0] += 1
                onRejected("\(source): rejected (\(rejection.reason)): \(InertText.forScreen(rejection.detail)) [not recorded]")
            }
        }
        return tally
    }
}
