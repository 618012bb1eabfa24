import ExitStatuses
import Foundation
import NIOCore

/// Where and how `serve` listens: checked when it is made (``Refused``), so that one that
/// exists can be bound.
public struct ServeConfiguration: Sendable {
    public let host: String
    public let port: Int
    /// PEM certificate chain and private key; both or neither.
    public let tlsCertificate: String?
    public let tlsKey: String?
    /// Plain HTTP on a non-loopback address, for running behind a TLS-terminating proxy.
    public let insecureHTTP: Bool
    /// Protects `POST /apple/sign-ins`; without it sign-in reports are refused.
    public var signInSecret: BearerSecret?
    /// Refused deliveries recorded one by one per source address and minute (``FloodGuard``).
    public let rejectionBudget: Int
    /// The address of a proxy in front whose `X-Forwarded-For` names the client.
    public let trustedProxy: String?

    public init(
        host: String = "127.0.0.1", port: Int = 8443, tlsCertificate: String? = nil, tlsKey: String? = nil,
        insecureHTTP: Bool = false, signInSecret: BearerSecret? = nil, rejectionBudget: Int = 60, trustedProxy: String? = nil
    ) throws {
        self.rejectionBudget = rejectionBudget
        self.trustedProxy = trustedProxy
        self.host = host
        self.port = port
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.insecureHTTP = insecureHTTP
        self.signInSecret = signInSecret
        try validate()
    }

    /// Why a configuration was refused.
    public struct Refused: Error, CustomStringConvertible, ExitStatusDeciding {
        public let description: String
        public var exitStatus: ExitStatus { .usage }
    }

    /// Whether TLS is on.
    public var usesTLS: Bool { tlsCertificate != nil }

    /// Whether `host` names only this machine.
    public var isLoopback: Bool {
        let h = host.lowercased()
        return h == "localhost" || h == "::1" || h == "[::1]" || h.hasPrefix("127.")
    }

    /// Refuses plain HTTP on an address others can reach, unless asked for explicitly:
    /// Apple sends notifications over TLS 1.2 or later only, and sign-in reports carry tokens.
    private func validate() throws(Refused) {
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw Refused(description: "--tls-cert and --tls-key go together: pass both or neither")
        }
        guard (0...65_535).contains(port) else { throw Refused(description: "--port must be 0 to 65535") }
        guard (0...1_000_000).contains(rejectionBudget) else { throw Refused(description: "--rejection-budget must be 0 to 1000000 a minute") }
        // An option that is not an IP address is refused here, with what it should be.
        if let trustedProxy, (try? SocketAddress(ipAddress: trustedProxy, port: 0)) == nil {
            throw Refused(description: "--trusted-proxy must be an IP address (the proxy's, as the connection shows it), not \"\(trustedProxy)\"")
        }
        if !usesTLS, !isLoopback, !insecureHTTP {
            throw Refused(
                description:
                    "refusing plain HTTP on \(host), which is not a loopback address: pass --tls-cert and --tls-key, or --insecure-http if a proxy in front terminates TLS"
            )
        }
    }

    /// Reads the certificate and key (``TLSFiles``), so that a file that is missing, unreadable
    /// or not PEM is refused naming it before anything opens or listens.
    public func checkTLSFiles() throws {
        if let tlsCertificate, let tlsKey { _ = try TLSFiles.configuration(certificate: tlsCertificate, key: tlsKey) }
    }
}
