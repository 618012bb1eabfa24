import AsyncHTTPClient
import Foundation
import NIOCore

/// A call that got no answer, in words for people: whether the connection was never made
/// (nothing listens there, the host is unreachable or unknown) or was lost before the answer,
/// and the system's reason ("connection refused"), not the network library's internals.
struct TransportFailure {
    /// The URL called.
    let url: String
    /// What went wrong.
    let error: any Error

    /// Errors of `connect(2)`: the connection was never made.
    private static let connectErrors: Set<CInt> = [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL, EHOSTDOWN, ENETDOWN]

    /// "could not connect to URL: connection refused", "the connection to URL was lost:
    /// connection reset by peer", "the connection to URL was closed before an answer".
    var message: String {
        if let io = error as? IOError {
            let reason = Self.reason(errno: io.errnoCode)
            return Self.connectErrors.contains(io.errnoCode)
                ? "could not connect to \(url): \(reason)" : "the connection to \(url) was lost: \(reason)"
        }
        if let http = error as? HTTPClientError, http == .remoteConnectionClosed {
            return "the connection to \(url) was closed before an answer"
        }
        // NIO's connection error (every address failed, or the name did not resolve).
        if String(describing: type(of: error)) == "NIOConnectionError" { return "could not connect to \(url): \(error)" }
        return "the connection to \(url) failed: \(error)"
    }

    /// The system's text for `errno`, as part of a sentence ("connection refused").
    private static func reason(errno code: CInt) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "error \(code)" }
        return first.lowercased() + text.dropFirst()
    }
}
