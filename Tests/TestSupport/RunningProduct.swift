import Foundation
import Synchronization

/// A product of this package run in the background, as a service or a long command is: started,
/// signalled, waited for, its output collected as it comes (so a chatty process never blocks on
/// a full pipe), and killed if its test lets go of it while it still runs.
public final class RunningProduct: Sendable {
    public let process: Process
    private let out = Pipe(), err = Pipe()
    private let printed = Printed()
    /// The two threads reading the pipes until the process's end closes them.
    private let readers = DispatchGroup()

    /// What the process printed so far, appended to by the threads reading the pipes.
    private final class Printed: Sendable {
        private let data = Mutex<(out: Data, err: Data)>((Data(), Data()))
        func withLock<T>(_ body: (inout (out: Data, err: Data)) -> T) -> T { data.withLock { body(&$0) } }
    }

    /// Starts `name` with `arguments`; `environment` adds to this process's environment.
    public convenience init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(executable: productPath(name), arguments, environment: environment)
    }

    /// Starts the program at `path` with `arguments`; `environment` adds to this process's environment.
    public init(executable path: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Plain threads with blocking reads, not `readabilityHandler`: on Linux its dispatch
        // sources, cancelled while the descriptors close, have crashed libdispatch's event loop.
        for (handle, isOut) in [(out.fileHandleForReading, true), (err.fileHandleForReading, false)] {
            readers.enter()
            Thread { [printed, readers] in
                defer { readers.leave() }
                while true {
                    let data = handle.availableData
                    if data.isEmpty { return }
                    printed.withLock { if isOut { $0.out.append(data) } else { $0.err.append(data) } }
                }
            }.start()
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    public var isRunning: Bool { process.isRunning }

    /// Sends `signal` (SIGTERM, SIGKILL, ...).
    public func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// What it has printed so far on standard output.
    public var output: String { String(decoding: printed.withLock { $0.out }, as: UTF8.self) }

    /// What it has printed so far on standard error.
    public var errorOutput: String { String(decoding: printed.withLock { $0.err }, as: UTF8.self) }

    /// Waits for it to end: its exit status (or the signal that ended it), whether a signal
    /// did, and all it printed.
    @discardableResult
    public func wait() -> (status: Int32, signalled: Bool, out: String, err: String) {
        process.waitUntilExit()
        readers.wait()
        let all = printed.withLock { printed in (printed.out, printed.err) }
        return (
            process.terminationStatus, process.terminationReason == .uncaughtSignal, String(decoding: all.0, as: UTF8.self),
            String(decoding: all.1, as: UTF8.self)
        )
    }
}
