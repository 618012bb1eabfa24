import Synchronization

/// Hands out pending users one at a time to the workers, preparing each chunk (data keys)
/// before its first user goes out.
final class WorkQueue: Sendable {
    private struct State {
        var next = 0
        var prepared = 0
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

    func next() throws -> MigrationUser? {
        try state.withLock { state in
            guard state.next < users.count else { return nil }
            if state.next >= state.prepared {
                let end = min(users.count, state.prepared + chunk)
                try step.prepare(users[state.prepared..<end])
                state.prepared = end
            }
            defer { state.next += 1 }
            return users[state.next]
        }
    }
}
