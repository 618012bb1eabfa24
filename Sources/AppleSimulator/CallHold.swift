import Synchronization

/// The stand-in's hold (``FaultInjection/holdAfterCalls``): the first calls pass, every later
/// one waits unanswered until ``release()``, so that a run stops part way at a known user and
/// stays there, alive, for as long as a test or a rehearsal needs.
final class CallHold: Sendable {
    private struct State {
        var limit: Int?
        var passed = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    /// Holds every call after the first `limit`; nil holds none.
    init(after limit: Int?) { state = Mutex(State(limit: limit)) }

    /// Holds every call after the next `limit` (``release()`` first lets the held ones go).
    func arm(after limit: Int) {
        release()
        state.withLock { $0 = State(limit: limit) }
    }

    /// Returns at once for the first calls and after a release; otherwise waits for it.
    func pass() async {
        if state.withLock({ $0.limit == nil }) { return }
        await withCheckedContinuation { continuation in
            let go = state.withLock { state in
                guard let limit = state.limit else { return true }
                if state.passed < limit {
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
            state.limit = nil
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Calls waiting now.
    var held: Int { state.withLock { $0.waiting.count } }
}
