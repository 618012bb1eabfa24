import Foundation
import NIOSSL

/// `serve`'s certificate chain and private key, read from their PEM files: a file that is not
/// there, cannot be read or holds no PEM of its kind is refused naming the file, the option
/// and what is wrong, before anything listens.
enum TLSFiles {
    /// The TLS settings from the PEM files `certificate` and `key`, TLS 1.2 at least.
    static func configuration(certificate: String, key: String) throws -> TLSConfiguration {
        try readable(certificate, option: "--tls-cert")
        try readable(key, option: "--tls-key")
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw ServeConfiguration.Refused(
                description: "--tls-cert \(certificate): not a PEM certificate chain (a \"-----BEGIN CERTIFICATE-----\" block) that can be read")
        }
        guard !chain.isEmpty else {
            throw ServeConfiguration.Refused(description: "--tls-cert \(certificate): holds no certificate (a \"-----BEGIN CERTIFICATE-----\" block)")
        }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw ServeConfiguration.Refused(
                description: "--tls-key \(key): not a PEM private key (a \"-----BEGIN PRIVATE KEY-----\" block, unencrypted) that can be read")
        }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    /// Refuses `path` unless it is a file this process can read.
    private static func readable(_ path: String, option: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ServeConfiguration.Refused(description: "\(option) \(path): no such file")
        }
        guard !isDirectory.boolValue else { throw ServeConfiguration.Refused(description: "\(option) \(path): is a directory, not a PEM file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ServeConfiguration.Refused(description: "\(option) \(path): cannot be read by this user (check its owner and mode)")
        }
    }
}
