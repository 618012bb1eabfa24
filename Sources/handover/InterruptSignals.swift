import Dispatch
import Foundation
import Migration

/// SIGINT and SIGTERM as requests to end work early rather than kills.
enum InterruptSignals {
    /// Runs `body` with SIGINT and SIGTERM passed to `handler` instead of ending the process,
    /// then restores their default actions.
    static func handling<T: Sendable>(_ handler: @escaping @Sendable (RunInterruption.Signal) -> Void, _ body: () async throws -> T) async throws -> T
    {
        let watched: [(Int32, RunInterruption.Signal)] = [(SIGINT, .interrupt), (SIGTERM, .terminate)]
        let sources = watched.map { number, signal in
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { handler(signal) }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for (number, _) in watched { Foundation.signal(number, SIG_DFL) }
        }
        return try await body()
    }

    /// Runs `body` with SIGINT and SIGTERM forwarded to `interruption` (saying so on standard
    /// error), then restores their default actions.
    static func forwarding<T: Sendable>(to interruption: RunInterruption, grace: Double, _ body: () async throws -> T) async throws -> T {
        try await handling(
            { signal in
                let message =
                    switch interruption.request(signal) {
                    case .stopping:
                        "\n\(signal.rawValue): taking no more users; the calls in flight get \(grace.formatted()) s to finish and be recorded (signal again to stop them now)\n"
                    case .cutShort:
                        "\n\(signal.rawValue) again: abandoning the calls still in flight\n"
                    }
                FileHandle.standardError.write(Data(message.utf8))
            }, body)
    }
}
