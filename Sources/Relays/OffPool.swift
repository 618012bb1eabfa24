import Dispatch

/// Blocking work run from async code without holding one of the threads async tasks run on:
/// how an LMDB read transaction (whose closure is synchronous and may read for seconds) is
/// reached from a task. The work hops to a thread of the global dispatch queue once, and the
/// task resumes once with what it returned or threw.
public enum OffPool {
    /// Runs `work` on a thread outside the cooperative pool and returns its value.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
