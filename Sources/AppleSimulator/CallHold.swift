import Synchronization

/// The stand-in's hold (``FaultInjection/holdAfterCalls``): the first calls pass, every later
/// one waits unanswered until ``release()``, so that a run stops part way at a known user and
/// stays there, alive, for as long as a test or a rehearsal needs.
final class CallHold: Sendable {
    private struct State {
        var passed = 0
        var released = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let limit: Int?
    private let state = Mutex(State())

    /// Holds every call after the first `limit`; nil holds none.
    init(after limit: Int?) { self.limit = limit }

    /// Returns at once for the first calls and after a release; otherwise waits for it.
    func pass() async {
        guard let limit else { return }
        await withCheckedContinuation { continuation in
            let go = state.withLock { state in
                if state.released || state.passed < limit {
                    state.passed += 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
    }

    /// Lets every held call go, and every later one.
    func release() {
        let waiting = state.withLock { state in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Calls waiting now.
    var held: Int { state.withLock { $0.waiting.count } }
}
