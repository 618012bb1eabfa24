import Foundation

/// A server product (`handover simulator serve`, `handover serve`) run as its own process:
/// started, its first line read for the URL it listens on, stopped with SIGTERM; everything it
/// prints is kept (``RunningProduct``), and it is killed if its test lets go of it running.
public final class ServerProcess: Sendable {
    public let running: RunningProduct
    /// The first `http://` or `https://` URL of its banner line.
    public let baseURL: String

    /// Why a server process could not be started.
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Starts `product` with `arguments` and waits (up to a minute) for its banner line.
    public init(_ arguments: [String], product: String = "handover", environment: [String: String] = [:]) throws {
        running = try RunningProduct(product, arguments, environment: environment)
        let started = Date()
        while !running.output.contains("\n") {
            guard running.isRunning, Date().timeIntervalSince(started) < 60 else {
                running.signal(SIGKILL)
                let ended = running.wait()
                throw Failed(description: "\(arguments.prefix(2).joined(separator: " ")) printed no banner: \(ended.out) \(ended.err)")
            }
            usleep(10_000)
        }
        let line = String(running.output.prefix { $0 != "\n" })
        guard let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") || $0.hasPrefix("https://") }) else {
            running.signal(SIGKILL)
            running.wait()
            throw Failed(description: "no URL in the banner \"\(line)\"")
        }
        baseURL = String(url.hasSuffix(",") ? url.dropLast() : url)
    }

    /// Sends SIGTERM, waits, and returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        finish().status
    }

    /// Sends SIGTERM, waits, and returns how it ended and all it printed.
    public func finish() -> (status: Int32, signalled: Bool, out: String, err: String) {
        if running.isRunning { running.signal(SIGTERM) }
        return running.wait()
    }
}
