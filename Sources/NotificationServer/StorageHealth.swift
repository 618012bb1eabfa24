import Ledger
import LogEngine
import Synchronization

/// Whether the disk holding the ledger last refused a write for lack of room: `serve` answers
/// 503 meanwhile and `/healthz` reports it, and the first write that succeeds clears it.
public final class StorageHealth: Sendable {
    private let lastFull = Mutex<LedgerError?>(nil)

    public init() {}

    /// Notes a write refused for lack of room; returns whether it is the first since writes last succeeded.
    func full(_ error: LedgerError) -> Bool {
        lastFull.withLock { state in
            defer { state = error }
            return state == nil
        }
    }

    /// Notes a write that succeeded.
    func recovered() { lastFull.withLock { $0 = nil } }

    /// The last refusal, while no write has succeeded since.
    public var diskFull: LedgerError? { lastFull.withLock { $0 } }
}
