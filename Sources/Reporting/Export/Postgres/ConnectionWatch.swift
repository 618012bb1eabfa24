import NIOCore
import Synchronization

/// Ends the work waiting on a PostgreSQL connection as soon as the connection closes.
///
/// PostgresNIO writes each statement to its channel without a promise: a statement written
/// just after the server closed the connection (a restart, a shutdown) is answered by nobody,
/// and its caller waits forever. Work run through ``run(_:onClose:)`` instead fails with the
/// watch's error once the channel closes, and its `onClose` lets it go of what it holds; the
/// abandoned task finishes, or stays suspended, on its own.
final class ConnectionWatch: Sendable {
    private struct State {
        var closed = false
        var waiting: [UInt64: @Sendable () -> Void] = [:]
        var next: UInt64 = 0
    }

    private let state = Mutex(State())
    private let closedError: any Error & Sendable

    /// Watches the channel `closeFuture` belongs to; work it ends throws `closedError`.
    init(_ closeFuture: EventLoopFuture<Void>, closedError: any Error & Sendable) {
        self.closedError = closedError
        closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            let waiting = self.state.withLock { state in
                state.closed = true
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for end in waiting { end() }
        }
    }

    /// Runs `body`; throws the closed error at once if the connection closes first, after
    /// calling `onClose`.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T, onClose: @escaping @Sendable () -> Void = {}) async throws -> T {
        let once = ResumeOnce<T>()
        let closedError = self.closedError
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let id: UInt64? = state.withLock { state in
                guard !state.closed else { return nil }
                defer { state.next += 1 }
                state.waiting[state.next] = {
                    onClose()
                    once.resume(with: .failure(closedError))
                }
                return state.next
            }
            guard let id else {
                once.resume(with: .failure(closedError))
                return
            }
            Task { [self] in
                let result = await Result(catching: body)
                self.state.withLock { _ = $0.waiting.removeValue(forKey: id) }
                once.resume(with: result)
            }
        }
    }
}

/// A continuation resumed by whichever of two callers comes first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<T, any Error>) { self.continuation.withLock { $0 = continuation } }

    func resume(with result: Result<T, any Error>) {
        continuation.withLock { continuation in
            continuation?.resume(with: result)
            continuation = nil
        }
    }
}

extension Result where Failure == any Error {
    /// The result of `body`, thrown error included.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
