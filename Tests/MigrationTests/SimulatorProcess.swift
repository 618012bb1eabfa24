import AppleSimulator
import Foundation
import TestSupport

/// `handover simulator serve` as a separate process on a free port, for tests that run
/// `handover` as users do.
struct SimulatorProcess {
    let process: Process
    /// The base URL it printed.
    let baseURL: String

    /// Starts the stand-in on `directory` and waits for its "listening" line.
    init(directory: String, extra: [String] = []) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: productPath("handover"))
        process.arguments = ["simulator", "serve", "--dir", directory, "--port", "0"] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var banner = Data()
        while !banner.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw SimulatorError("the simulator exited: \(String(decoding: banner, as: UTF8.self))") }
            banner.append(chunk)
        }
        guard let url = String(decoding: banner, as: UTF8.self).split(separator: " ").first(where: { $0.hasPrefix("http://") }) else {
            throw SimulatorError("no URL in the simulator's banner")
        }
        baseURL = String(url)
    }

    /// Stops it and waits.
    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// `handover simulator register-team` for the app `com.example.app`; returns the .p8 path.
    @discardableResult
    static func registerTeam(_ team: String, keyID: String, in directory: String) throws -> String {
        let r = try runProduct("handover", ["simulator", "register-team", "--dir", directory, "--team-id", team, "--client-id", "com.example.app", "--key-id", keyID])
        guard r.status == 0 else { throw SimulatorError("register-team failed: \(r.err)") }
        return directory + "/keys/AuthKey_\(keyID).p8"
    }
}
