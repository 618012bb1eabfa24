import Foundation

/// Runs the `handover` product with `args` to completion: its exit status and what it printed.
@discardableResult
public func handover(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
    try runProduct("handover", args)
}

/// Runs the `handover` product with the arguments listed, as `handover(_ args: [String])` does.
@discardableResult
public func handover(_ args: String...) throws -> (status: Int32, out: String, err: String) {
    try runProduct("handover", args)
}

/// The ledgers and files `handover demo` writes, made once per test process (the first test to
/// ask waits for the demo; the others then wait for nothing) and handed to each test as fresh
/// copies in its own directory, so a test may change what it gets without touching another's.
public enum DemoLedger {
    /// One of the demo's two ledgers.
    public enum Side: String, Sendable {
        /// Team A's, which generated the transfer identifiers.
        case sender
        /// Team B's, which exchanged them and recorded sign-ins and notifications.
        case recipient
    }

    /// The users the demo is run with: what every test on it asks for (more than 250 users and
    /// migrations, more than 100 data keys, every notification type, users failed and retried,
    /// erased and signed in; export slices of 50 events and more).
    public static let users = 300

    /// A fresh copy (`cp -a`) of `side`'s ledger at `directory/demo/<side>`, where
    /// `handover demo --directory directory/demo` would have written it.
    public static func copy(_ side: Side = .recipient, into directory: TemporaryDirectory) throws -> String {
        try copy(item: side.rawValue, into: directory)
    }

    /// A fresh copy of a file the demo wrote beside its ledgers (`handoff.csv`,
    /// `exchanged.csv`) at `directory/demo/<name>`.
    public static func copy(file name: String, into directory: TemporaryDirectory) throws -> String {
        try copy(item: name, into: directory)
    }

    /// What the demo printed on standard output.
    public static func printout() throws -> String {
        try made.get()
    }

    /// Why the demo, or a copy of what it wrote, could not be made.
    public struct Failed: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    private static func copy(item: String, into directory: TemporaryDirectory) throws -> String {
        _ = try made.get()
        let parent = directory.sub("demo")
        let copy = parent + "/" + item
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let r = try runCommand("/bin/cp", ["-a", root + "/" + item, copy])
        guard r.status == 0 else { throw Failed(description: "cp -a of the demo's \(item) exited \(r.status): \(r.err)") }
        return copy
    }

    /// The process-wide directory the demo writes into, removed when the process exits.
    private static let root = NSTemporaryDirectory() + "handover-test-demo-" + UUID().uuidString

    /// The demo, run on first use (a `static let` is initialized once, by the first thread to
    /// reach it, the others waiting): its printout, or why it failed.
    private static let made: Result<String, Failed> = {
        atexit { try? FileManager.default.removeItem(atPath: DemoLedger.root) }
        do {
            let r = try handover("demo", "--users", String(users), "--directory", root)
            guard r.status == 0 else { return .failure(Failed(description: "handover demo exited \(r.status): \(r.err)")) }
            return .success(r.out)
        } catch {
            return .failure(Failed(description: "handover demo could not be run: \(error)"))
        }
    }()
}

/// Runs `handover` with `arguments` and sends it SIGKILL at a random moment within `took`
/// microseconds; whether it was still running then (and so was killed).
public func handoverKilled(_ arguments: [String], within took: UInt32) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: productPath("handover"))
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    usleep(UInt32.random(in: 0..<took))
    let running = process.isRunning
    if running { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return running
}
