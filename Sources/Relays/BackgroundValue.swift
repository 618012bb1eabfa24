import Dispatch

/// A value computed on another thread while the caller goes on with its own share of the
/// work: how a whole-ledger read puts the second core to use (hashing or encoding one batch
/// while the caller reads the next).
///
/// The work must touch only what it was handed, and the caller must not touch that until
/// ``wait()`` returns: a promise the compiler cannot check (buffers into a read transaction's
/// memory map are handed over this way), hence `@unchecked Sendable`. No lock is needed:
/// `value` is written before `done` is signalled and read only after it is waited for, and
/// `finished` belongs to the one thread that waits.
public final class BackgroundValue<Value>: @unchecked Sendable {
    private var value: Value?
    private let done = DispatchSemaphore(value: 0)
    private var finished = false

    /// Starts `work` on a thread of the global queue.
    public init(_ work: @escaping () -> Value) {
        let handed = Handed(work)
        DispatchQueue.global().async {
            self.value = handed.work()
            self.done.signal()
        }
    }

    /// Whether the work has finished, without waiting: then ``wait()`` returns at once. Call
    /// it from the thread that waits.
    public var isFinished: Bool {
        if !finished, done.wait(timeout: .now()) == .success { finished = true }
        return finished
    }

    /// Waits for the work to finish and returns what it computed. Call it from one thread.
    public func wait() -> Value {
        if !finished {
            done.wait()
            finished = true
        }
        return value!
    }

    /// The work, carried to the other thread under the caller's promise above.
    private struct Handed: @unchecked Sendable {
        let work: () -> Value
        init(_ work: @escaping () -> Value) { self.work = work }
    }
}
