import Foundation

/// A server product (`handover simulator serve`, `handover serve`) run as its own process:
/// started, its first line read for the URL it listens on, stopped with SIGTERM.
public final class ServerProcess: Sendable {
    public let process: Process
    /// The first `http://` or `https://` URL of its banner line.
    public let baseURL: String

    /// Why a server process could not be started.
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Starts `handover` with `arguments` and waits for its banner line.
    public init(_ arguments: [String], product: String = "handover") throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: productPath(product))
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let started = process
        func fail(_ description: String) -> Failed {
            if started.isRunning { kill(started.processIdentifier, SIGKILL); started.waitUntilExit() }
            return Failed(description: description)
        }
        var banner = Data()
        while !banner.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw fail("\(arguments.prefix(2).joined(separator: " ")) exited: \(String(decoding: banner, as: UTF8.self))") }
            banner.append(chunk)
        }
        let line = String(decoding: banner, as: UTF8.self)
        guard let url = line.split(whereSeparator: { $0 == " " || $0 == "\n" }).first(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else {
            throw fail("no URL in the banner \"\(line)\"")
        }
        baseURL = String(url.hasSuffix(",") ? url.dropLast() : url)
    }

    /// A server still running when its test lets go of it (a failed expectation ended the
    /// test early) is killed, so no test leaves a process behind.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Sends SIGTERM, waits, and returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
