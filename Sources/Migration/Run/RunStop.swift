import AppleID
import Basics
import ExitStatuses
import Ledger

/// Why a run stopped before its list was done, and what it tells the operator.
enum RunStop: Sendable {
    /// Apple refused the credentials: every user would fail.
    case credentialsRefused(AppleIDError)
    /// Nearly every call was refused the same way, by the endpoint of `command`.
    case breaker(FailureBreaker.Trip, command: String)
    /// Apple asked for more patience than the run was given: nobody was lost.
    case pace(ApplePaceStop)

    /// The reason "run finished" records.
    var reason: RunFinished.StopReason {
        switch self {
        case .credentialsRefused: .credentials
        case .breaker: .breaker
        case .pace(.outageLimit): .outage
        case .pace(.retryAfterBeyondCeiling): .retryAfter
        }
    }

    /// The failure "run finished" records as `stopped_by`.
    var failure: CallFailure {
        switch self {
        case .credentialsRefused(let error): CallFailure(error)
        case .breaker(let trip, let command):
            CallFailure(
                kind: FailureClass(rawValue: trip.failureClass) ?? .other, code: trip.failureClass,
                message: RunStop.breakerMessage(trip, command: command))
        case .pace(let stop):
            CallFailure(stop.cause).withMessage(stop.description)
        }
    }

    /// The exit status of a run it stopped: 3 when Apple refused the run as a whole, 1 (run
    /// again later) when Apple asked for more patience.
    var exitStatus: ExitStatus {
        switch self {
        case .credentialsRefused, .breaker: .credentialsRefused
        case .pace: .failed
        }
    }

    /// What the breaker says: the class, how often, Apple's words once, and what usually
    /// causes it at this endpoint.
    static func breakerMessage(_ trip: FailureBreaker.Trip, command: String) -> String {
        "Apple refused \(trip.count) of \(trip.calls) calls in a row with \(trip.failureClass), a mistake of the whole run rather than of its users; "
            + "no more calls were made. Apple said: \(trip.sample). Likely: \(likelyCauses(trip.failureClass, command: command)). "
            + "Fix it and run the same command with --retry-failed; --breaker changes the threshold."
    }

    private static func likelyCauses(_ failureClass: String, command: String) -> String {
        switch (failureClass, command) {
        case ("invalid_request", "generate"):
            "--target is not the recipient's team ID; the users' subs belong to another app (another client ID) or another team; the app is not yet transferred"
        case ("invalid_request", _):
            "the transfer is not accepted yet or its 60 days are over; the transfer IDs were generated for another team (team A's --target); the client ID is not the transferred app's"
        case ("invalid_grant", _):
            "the client secret or access token is not for this client ID"
        default:
            "a setting of the run that every call shares (the client ID, the team, the target, the window)"
        }
    }
}

extension CallFailure {
    fileprivate func withMessage(_ message: String) -> CallFailure {
        var failure = self
        failure.message = message
        return failure
    }
}
