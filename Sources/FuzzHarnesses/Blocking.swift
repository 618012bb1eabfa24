import Dispatch
import Synchronization

/// Runs async code to its end from a fuzzer's synchronous callback, whose thread is the
/// fuzzer's own (never one of the cooperative pool's), so waiting on it blocks nothing else.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
}
