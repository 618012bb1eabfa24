import Crypto
import ExitStatuses
import Foundation
import Ledger

/// A bearer secret held only as its SHA-256: the sign-in secret that protects
/// `POST /apple/sign-ins`, or the read secret of `serve --tiles`'s entry bundles.
public struct BearerSecret: Sendable {
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

    /// A secret from its text (surrounding whitespace ignored); `name` says which secret in a refusal.
    public init(secret: String, name: String = "sign-in secret") throws {
        let trimmed = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count >= BearerSecret.minimumLength else {
            throw Invalid(description: "the \(name) must be at least \(BearerSecret.minimumLength) bytes")
        }
        digest = Array(SHA256.hash(data: Data(trimmed.utf8)))
    }

    /// A secret from its hex SHA-256 digest.
    public init(digestHex: String) throws {
        guard let bytes = Hex.decode(digestHex.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
            throw Invalid(description: "not a SHA-256 digest in hex")
        }
        digest = bytes
    }

    /// A secret read from the file at `path`; `name` says which secret in a refusal.
    public static func load(file path: String, name: String = "sign-in secret") throws -> BearerSecret {
        let data: [UInt8]
        do { data = try FileBytes.read(path, limit: maximumFileBytes) } catch {
            throw Invalid(description: "cannot read the \(name) file: \(ErrorText.describing(error))")
        }
        return try BearerSecret(secret: String(decoding: data, as: UTF8.self), name: name)
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
