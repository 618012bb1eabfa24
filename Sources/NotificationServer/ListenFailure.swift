import Foundation
import NIOCore

/// A server that could not listen on its address, in words for people: the address is in use,
/// not this machine's, or needs privileges. The servers' own error says only "bind(...)".
public enum ListenFailure {
    /// What to tell the user when `error` ended a server that was to listen on `host:port`;
    /// nil when `error` is not a failure to listen.
    public static func message(_ error: any Error, host: String, port: Int) -> String? {
        guard let io = error as? IOError, io.description.hasPrefix("bind(") else { return nil }
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let reason =
            switch io.errnoCode {
            case EADDRINUSE: "the address is in use (another process listens there)"
            case EADDRNOTAVAIL: "the address is not one of this machine's"
            case EACCES: "permission denied (ports below 1024 need privileges)"
            default: String(cString: strerror(io.errnoCode))
            }
        return "cannot listen on \(address): \(reason)"
    }
}
