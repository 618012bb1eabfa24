import Basics
import Crypto
import Foundation

/// One team's Sign in with Apple credentials: team ID, client ID, key ID and private key.
/// Its description names the IDs, never the key.
public struct AppleCredentials: Sendable, CustomStringConvertible {
    public let teamID: String
    public let clientID: String
    public let keyID: String
    public let privateKey: P256.Signing.PrivateKey

    public init(teamID: String, clientID: String, keyID: String, privateKey: P256.Signing.PrivateKey) {
        self.teamID = teamID
        self.clientID = clientID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    /// Loads the private key from a `.p8` file (PKCS#8 PEM, as Apple's developer site gives it).
    public init(teamID: String, clientID: String, keyID: String, privateKeyPath: String) throws {
        try self.init(validatingTeamID: teamID, clientID: clientID, keyID: keyID, privateKey: AppleCredentials.privateKey(at: privateKeyPath))
    }

    /// The private key in a `.p8` file (PKCS#8 PEM); an ``AppleIDError`` of class
    /// `invalid_configuration` when the file cannot be read or holds no P-256 key.
    public static func privateKey(at path: String) throws -> P256.Signing.PrivateKey {
        let pem: String
        // A .p8 file is a few hundred bytes.
        do { pem = String(decoding: try FileBytes.readOnce(path, limit: 64 * 1024), as: UTF8.self) } catch {
            throw AppleIDError(.invalidConfiguration, "cannot read the private key file: \(ErrorText.describing(error))")
        }
        do { return try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw AppleIDError(.invalidConfiguration, "\(path) is not a P-256 private key in PEM form (Apple's .p8 file)")
        }
    }

    /// Checks the IDs' shapes: a team ID and key ID are 10 characters of A-Z and 0-9.
    public init(validatingTeamID teamID: String, clientID: String, keyID: String, privateKey: P256.Signing.PrivateKey) throws {
        guard AppleCredentials.isTenCharacterID(teamID) else {
            throw AppleIDError(.invalidConfiguration, "team ID \"\(teamID)\" is not 10 characters of A-Z and 0-9")
        }
        guard AppleCredentials.isTenCharacterID(keyID) else {
            throw AppleIDError(.invalidConfiguration, "key ID \"\(keyID)\" is not 10 characters of A-Z and 0-9")
        }
        guard AppleCredentials.isClientID(clientID) else {
            throw AppleIDError(.invalidConfiguration, "client ID \"\(clientID)\" is empty or contains spaces")
        }
        self.init(teamID: teamID, clientID: clientID, keyID: keyID, privateKey: privateKey)
    }

    /// Whether `id` can be a client ID (an App ID or Services ID): not empty, no spaces.
    public static func isClientID(_ id: String) -> Bool { !id.isEmpty && !id.contains(where: \.isWhitespace) }

    /// Whether `id` looks like an Apple team ID or key ID.
    public static func isTenCharacterID(_ id: String) -> Bool {
        id.utf8.count == 10
            && id.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    public var description: String { "AppleCredentials(team \(teamID), client \(clientID), key \(keyID))" }
}
