import Foundation
import Synchronization

/// Hands out pending users one at a time to the workers, preparing each chunk (data keys)
/// ahead of the workers, on a thread of its own.
///
/// Preparing a chunk writes and syncs files: on a worker it would hold up every worker (and,
/// blocking the threads async tasks run on, everything else in the process). So the next
/// chunk is prepared while the workers are still taking users from the current one, and a
/// worker that catches up with the preparation waits without blocking a thread.
final class WorkQueue: Sendable {
    private struct State {
        var next = 0
        /// `users[..<prepared]` are prepared.
        var prepared = 0
        /// A chunk is being prepared.
        var preparing = false
        /// Why the last preparation failed: every later `next()` throws it.
        var failure: (any Error)?
        /// Workers waiting for the chunk being prepared.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let users: [MigrationUser]
    private let chunk: Int
    private let step: any MigrationStep

    init(users: [MigrationUser], chunk: Int, step: any MigrationStep) {
        self.users = users
        self.chunk = max(1, chunk)
        self.step = step
    }

    /// The next user to attempt, once prepared; nil when every user has been handed out.
    func next() async throws -> MigrationUser? {
        while true {
            enum Turn { case user(MigrationUser?), wait }
            var start: Range<Int>?
            let turn = try state.withLock { state -> Turn in
                if let failure = state.failure { throw failure }
                guard state.next < users.count else { return .user(nil) }
                // The next chunk starts preparing once half of this one is handed out.
                if !state.preparing, state.prepared < users.count, state.prepared - state.next <= chunk / 2 {
                    state.preparing = true
                    start = state.prepared..<min(users.count, state.prepared + chunk)
                }
                guard state.next < state.prepared else { return .wait }
                defer { state.next += 1 }
                return .user(users[state.next])
            }
            if let start { prepare(start) }
            switch turn {
            case .user(let user): return user
            case .wait:
                await withCheckedContinuation { continuation in
                    let ready = state.withLock { state in
                        guard state.preparing else { return true }
                        state.waiting.append(continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }

    /// Prepares `range` on a thread of its own, then wakes the workers waiting for it.
    private func prepare(_ range: Range<Int>) {
        let thread = Thread { [self] in
            var failure: (any Error)?
            do { try step.prepare(users[range]) } catch { failure = error }
            let waiting = state.withLock { state in
                state.preparing = false
                if let failure { state.failure = failure } else { state.prepared = range.upperBound }
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
        thread.name = "handover-prepare"
        thread.start()
    }
}
