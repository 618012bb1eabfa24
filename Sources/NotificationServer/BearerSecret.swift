import Basics
import Crypto
import ExitStatuses
import Foundation
import Ledger

/// A bearer secret held only as its SHA-256: the sign-in secret that protects
/// `POST /apple/sign-ins`, or the read secret of `serve --tiles`'s entry bundles.
public struct BearerSecret: Sendable {
    /// Which secret it is, as a refusal names it.
    public enum Use: String, Sendable {
        /// The secret that protects `POST /apple/sign-ins`.
        case signIn = "sign-in secret"
        /// The secret that grants `serve --tiles`'s entry bundles.
        case tilesRead = "tiles read secret"
    }

    /// The shortest secret accepted, in bytes.
    public static let minimumLength = 16
    /// Where `init` keeps the sign-in secret's digest inside a ledger directory.
    public static func digestFile(in ledgerDirectory: String) -> String { ledgerDirectory + "/sign-in-secret.sha256" }

    private let digest: [UInt8]

    /// Why a secret cannot be used.
    public struct Invalid: Error, CustomStringConvertible, ExitStatusDeciding {
        public let description: String
        public var exitStatus: ExitStatus { .usage }
    }

    /// The secret `secret` (surrounding whitespace ignored), used as `use` says.
    public init(secret: String, for use: Use) throws {
        let trimmed = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count >= BearerSecret.minimumLength else {
            throw Invalid(description: "the \(use.rawValue) must be at least \(BearerSecret.minimumLength) bytes")
        }
        digest = Array(SHA256.hash(data: Data(trimmed.utf8)))
    }

    /// The sign-in secret whose hex SHA-256 digest `init` stored in `ledgerDirectory`; nil when
    /// none is stored there.
    public static func storedSignInSecret(in ledgerDirectory: String) throws -> BearerSecret? {
        let path = digestFile(in: ledgerDirectory)
        guard let data = try FileBytes.readIfPresent(path, limit: maximumFileBytes) else { return nil }
        guard let bytes = Hex.decode(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32
        else {
            throw Invalid(description: "\(path) does not hold a SHA-256 digest in hex: give `serve --sign-in-secret-file` instead")
        }
        return BearerSecret(digest: bytes)
    }

    private init(digest: [UInt8]) {
        self.digest = digest
    }

    /// The secret read from the file at `path`, used as `use` says.
    public static func load(file path: String, for use: Use) throws -> BearerSecret {
        let data: [UInt8]
        do { data = try FileBytes.read(path, limit: maximumFileBytes) } catch {
            throw Invalid(description: "cannot read the \(use.rawValue) file: \(ErrorText.describing(error))")
        }
        return try BearerSecret(secret: String(decoding: data, as: UTF8.self), for: use)
    }

    /// The largest secret or digest file read.
    public static let maximumFileBytes = 4096

    /// The digest as lower-case hex, as stored in the ledger directory.
    public var digestHex: String { Hex.encode(digest) }

    /// Whether an `Authorization` header carries this secret as a bearer token (compared in constant time).
    public func accepts(authorization: String?) -> Bool {
        guard let authorization, authorization.utf8.count > 7,
            authorization.utf8.prefix(7).elementsEqual("bearer ".utf8, by: { (0x41...0x5A).contains($0) ? $0 + 0x20 == $1 : $0 == $1 })
        else { return false }
        let presented = Array(SHA256.hash(data: Data(authorization.dropFirst(7).trimming(.whitespaces).utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(presented, digest) { difference |= a ^ b }
        return difference == 0
    }
}
