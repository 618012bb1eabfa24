import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// aics-witness (PyPI), a C2SP tlog-witness server nobody here wrote, run on loopback for a
/// test: its own key, the logs it is told to witness, its answers read back with its `status`.
public final class WitnessServer: Sendable {
    /// The witness's URL, `http://127.0.0.1:PORT`.
    public let url: String
    /// The witness's cosigner verifier key, as `aics-witness init` printed it.
    public let vkey: String
    private let config: String
    private let process: RunningProduct

    /// Configures a witness named `name` in `directory` to witness each of `logs` (origin and
    /// verifier key) and starts it.
    public init(in directory: String, name: String, logs: [(origin: String, vkey: String)]) throws {
        let tool = TransparencyTools.directory + "/aics-witness"
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            throw TransparencyTools.ToolMissing(description: "\(tool) is missing: run tools/setup --transparency")
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        config = directory + "/witness.json"
        let port = try unusedLoopbackPort()
        let made = try runCommand(tool, ["init", "-c", config, "--name", name, "--listen", "127.0.0.1:\(port)"])
        guard made.status == 0, let line = made.out.split(separator: "\n").last else {
            throw TransparencyTools.ToolMissing(description: "aics-witness init: \(made.out)\(made.err)")
        }
        vkey = String(line)
        for log in logs {
            let added = try runCommand(tool, ["add-log", "-c", config, "--origin", log.origin, "--vkey", log.vkey])
            guard added.status == 0 else { throw TransparencyTools.ToolMissing(description: "aics-witness add-log: \(added.out)\(added.err)") }
        }
        url = "http://127.0.0.1:\(port)"
        process = try RunningProduct(executable: tool, ["serve", "-c", config])
        try WitnessServer.waitForListener(port: port, process: process)
    }

    deinit { process.signal(SIGTERM) }

    /// `aics-witness status --json`: the witness and, per log, the size and root it last cosigned.
    public func status() throws -> [String: Any] {
        let r = try runCommand(TransparencyTools.directory + "/aics-witness", ["status", "-c", config, "--json"])
        guard r.status == 0, let object = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any] else {
            throw TransparencyTools.ToolMissing(description: "aics-witness status: \(r.out)\(r.err)")
        }
        return object
    }

    /// The state aics-witness keeps for `origin`: its `status` entry.
    public func log(_ origin: String) throws -> [String: Any]? {
        (try status()["logs"] as? [[String: Any]])?.first { $0["origin"] as? String == origin }
    }

    /// What it logged, for a failing test's message.
    public var printed: String { process.output + process.errorOutput }

    /// Waits until something accepts connections on `port` (at most 30 s: a busy machine starts
    /// Python slowly), or the process ends.
    private static func waitForListener(port: Int, process: RunningProduct) throws {
        for _ in 0..<300 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(fd)
            if connected { return }
            guard process.isRunning else { break }
            usleep(100_000)
        }
        throw TransparencyTools.ToolMissing(description: "aics-witness did not listen on \(port): \(process.output)\(process.errorOutput)")
    }
}
