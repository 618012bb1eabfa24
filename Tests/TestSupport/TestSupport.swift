import Foundation
import Ledger
import LogEngine
import Synchronization
import Testing

/// A fresh temporary directory per test, removed when the test ends.
///
/// Its name holds the test's (`handover-test-<Suite>.<test>-<12 hex digits>`), so that a
/// directory left behind names the test that left it: `tools/test` fails the run on one. The
/// name is kept short: a PostgreSQL cluster a test starts in it puts a Unix socket there,
/// whose path may not pass 107 bytes.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init() {
        let unique = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        path = NSTemporaryDirectory() + "handover-test-" + TemporaryDirectory.testName + "-" + unique
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// The running test as `Suite.function`, in letters, digits, `.` and `_` (at most 40 of
    /// them); "unknown" outside a test.
    public static var testName: String {
        guard let test = Test.current else { return "unknown" }
        let words = test.id.nameComponents.suffix(2).map { component in
            String(component.prefix { $0 != "(" }.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        }
        let name = words.joined(separator: ".")
        return name.isEmpty ? "unknown" : String(name.prefix(40))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    public func sub(_ name: String) -> String { path + "/" + name }
}

/// A recipient ledger's "ledger created" body for tests.
public func testIdentity(role: LedgerCreated.Role = .recipient) -> LedgerCreated {
    LedgerCreated(teamID: "BBBB222222", clientIDs: ["com.example.test"], role: role, ledgerID: UUID().uuidString)
}

/// A built executable of this package (`handover`, `handover-lab`), beside the test bundle.
public func productPath(_ name: String) -> String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name).path
}

/// Runs a product to completion; returns its exit status and standard output and error.
/// `environment` adds to this process's environment; `unsetting` names variables to leave out.
@discardableResult
public func runProduct(
    _ name: String, _ arguments: [String], environment: [String: String] = [:], unsetting: Set<String> = [], input: Data? = nil
) throws -> (status: Int32, out: String, err: String) {
    try runCommand(productPath(name), arguments, environment: environment, unsetting: unsetting, input: input)
}

/// ``runProduct(_:_:environment:unsetting:input:)`` waited for on a thread of its own, for a
/// test whose servers run in this process: blocking one of the few threads their tasks run on
/// (two on a 2-core machine) while two tests do the same would leave the servers none.
@discardableResult
public func runProductAwaiting(
    _ name: String, _ arguments: [String], environment: [String: String] = [:]
) async throws -> (status: Int32, out: String, err: String) {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try runProduct(name, arguments, environment: environment) })
        }
    }
}

/// Runs the executable at `path` to completion, as ``runProduct(_:_:environment:unsetting:input:)`` does.
@discardableResult
public func runCommand(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], unsetting: Set<String> = [], input: Data? = nil
) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    for k in unsetting { env[k] = nil }
    process.environment = env
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let stdin = Pipe()
    if input != nil { process.standardInput = stdin }
    try process.run()
    if let input {
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
    }
    // Both pipes drained at once: a child that fills one pipe (64 KiB) while this reads the
    // other to its end would wait for this, and this for it.
    let errData = Mutex(Data())
    let errDone = DispatchSemaphore(value: 0)
    let errHandle = err.fileHandleForReading
    Thread {
        let data = errHandle.readDataToEndOfFile()
        errData.withLock { $0 = data }
        errDone.signal()
    }.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errDone.wait()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData.withLock { $0 }, as: UTF8.self))
}

/// Whether `needle` occurs anywhere in the bytes of the files under `directory`.
public func filesContain(_ directory: String, _ needle: String) throws -> Bool {
    try filesContain(directory, bytes: Array(needle.utf8))
}

/// Whether `bytes` occur anywhere in the files under `directory`.
public func filesContain(_ directory: String, bytes: [UInt8]) throws -> Bool {
    let files = FileManager.default.enumerator(atPath: directory)!.compactMap { $0 as? String }
    for file in files {
        guard let data = FileManager.default.contents(atPath: directory + "/" + file) else { continue }
        if data.range(of: Data(bytes)) != nil { return true }
    }
    return false
}

/// Flips one byte inside the stored record that contains `marker`, directly in data.mdb.
/// Every copy is flipped: LMDB's copy-on-write can leave stale copies in free pages, and the
/// live one must be hit.
public func flipByte(in ledgerDirectory: String, inRecordContaining marker: String) throws {
    let file = ledgerDirectory + "/data.mdb"
    var data = try Data(contentsOf: URL(fileURLWithPath: file))
    var searchFrom = data.startIndex
    var flipped = 0
    while let range = data.range(of: Data(marker.utf8), in: searchFrom..<data.endIndex) {
        data[range.lowerBound + 2] ^= 0x01
        searchFrom = range.upperBound
        flipped += 1
    }
    guard flipped > 0 else { throw LedgerError(.malformedRecord, "\(marker) not found in \(file)") }
    try data.write(to: URL(fileURLWithPath: file))
}
