import AppleID
import Basics
import Crypto
import CryptoExtras
import Foundation
import Ledger

/// The stand-in's state on disk, so separate processes (the sender's run, the recipient's
/// run, a test) see the same Apple: the derivation secret, the RSA signing key, registered
/// teams and their public keys, app transfers and users who revoked consent.
public struct SimulatorDirectory: Sendable {
    /// A team registered with the stand-in: its public key checks the team's client secrets.
    public struct Team: Codable, Sendable, Hashable {
        public var teamID: String
        public var keyID: String
        public var clientIDs: [String]
        public var publicKeyPEM: String

        enum CodingKeys: String, CodingKey {
            case teamID = "team_id", keyID = "key_id", clientIDs = "client_ids", publicKeyPEM = "public_key_pem"
        }
    }

    /// An app transfer: from when the 60-day window runs.
    public struct Transfer: Codable, Sendable, Hashable {
        public var clientID: String
        public var fromTeam: String
        public var toTeam: String
        /// Seconds since 1970.
        public var acceptedAt: Int64
        public var windowDays: Int

        public init(clientID: String, fromTeam: String, toTeam: String, acceptedAt: Int64, windowDays: Int = 60) {
            self.clientID = clientID
            self.fromTeam = fromTeam
            self.toTeam = toTeam
            self.acceptedAt = acceptedAt
            self.windowDays = windowDays
        }

        enum CodingKeys: String, CodingKey {
            case clientID = "client_id", fromTeam = "from_team", toTeam = "to_team", acceptedAt = "accepted_at", windowDays = "window_days"
        }
    }

    public let path: String

    /// Opens the directory at `path`, creating it with a fresh secret and RSA key if needed.
    /// With `secretSeed`, a secret made here is derived from the seed, so the identifiers the
    /// stand-in derives from it (`transfer_sub`, team B's `sub`) are the same in every directory
    /// made with that seed; a directory that has a secret keeps it.
    public init(path: String, secretSeed: FaultSeed? = nil) throws {
        self.path = path
        let fm = FileManager.default
        try fm.createDirectory(atPath: path + "/teams", withIntermediateDirectories: true)
        if !fm.fileExists(atPath: secretPath) {
            let secret =
                secretSeed.map { Hex.encode(SHA256.hash(data: Data("handover-stand-in-secret\u{0}\($0.value)".utf8))) }
                ?? SymmetricKey(size: .bits256).withUnsafeBytes { Hex.encode($0) }
            try write(secret + "\n", to: secretPath)
        }
        if !fm.fileExists(atPath: rsaKeyPath) {
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            try write(key.pemRepresentation, to: rsaKeyPath)
        }
    }

    private var secretPath: String { path + "/secret" }
    private var rsaKeyPath: String { path + "/apple-signing-key.pem" }
    private var transfersPath: String { path + "/transfers.json" }
    /// One identifier per line: users who revoked consent.
    public var revokedPath: String { path + "/revoked.txt" }

    private func write(_ text: String, to file: String) throws {
        do { try AtomicFile.write(Array(text.utf8), to: file, mode: 0o600) } catch let error as FileError {
            throw SimulatorError(error.message)
        }
    }

    /// The secret every derivation is keyed with.
    public func secret() throws -> SymmetricKey {
        let text: String
        do { text = try SimulatorDirectory.text(secretPath, limit: 4096) } catch {
            throw SimulatorError("cannot read the stand-in's secret: \(ErrorText.describing(error))")
        }
        guard let bytes = Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SimulatorError("\(secretPath) is not hex")
        }
        return SymmetricKey(data: bytes)
    }

    /// The RSA key identity tokens and notifications are signed with.
    public func signingKey() throws -> _RSA.Signing.PrivateKey {
        try _RSA.Signing.PrivateKey(pemRepresentation: SimulatorDirectory.text(rsaKeyPath, limit: 64 * 1024))
    }

    /// Registers `teamID` with a new P-256 key; returns the key ID and the private key as a
    /// `.p8` PEM (written to `keys/AuthKey_KEYID.p8` too).
    public func registerTeam(_ teamID: String, clientIDs: [String], keyID: String? = nil) throws -> (keyID: String, privateKeyPath: String) {
        guard AppleCredentials.isTenCharacterID(teamID) else { throw SimulatorError("team ID \(teamID) is not 10 characters of A-Z and 0-9") }
        if let keyID, !AppleCredentials.isTenCharacterID(keyID) { throw SimulatorError("key ID \(keyID) is not 10 characters of A-Z and 0-9") }
        let keyID = keyID ?? String(Hex.encode(SHA256.hash(data: Data((teamID + UUID().uuidString).utf8))).uppercased().prefix(10))
        let key = P256.Signing.PrivateKey()
        let team = Team(teamID: teamID, keyID: keyID, clientIDs: clientIDs, publicKeyPEM: key.publicKey.pemRepresentation)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try write(String(decoding: try encoder.encode(team), as: UTF8.self) + "\n", to: path + "/teams/\(teamID).json")
        try FileManager.default.createDirectory(atPath: path + "/keys", withIntermediateDirectories: true)
        let keyPath = path + "/keys/AuthKey_\(keyID).p8"
        try write(key.pemRepresentation + "\n", to: keyPath)
        return (keyID, keyPath)
    }

    /// Every registered team, by team ID.
    public func teams() throws -> [String: Team] {
        // No teams/ yet is expected (no team registered): no teams.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path + "/teams")) ?? []
        var teams: [String: Team] = [:]
        for name in names where name.hasSuffix(".json") {
            let data = Data(try FileBytes.read(path + "/teams/" + name, limit: 64 * 1024))
            let team = try JSONDecoder().decode(Team.self, from: data)
            teams[team.teamID] = team
        }
        return teams
    }

    /// Records an app transfer (replacing an earlier one of the same app).
    public func recordTransfer(_ transfer: Transfer) throws {
        var all = try transfers().filter { $0.clientID != transfer.clientID }
        all.append(transfer)
        try write(String(decoding: try JSONEncoder().encode(all), as: UTF8.self) + "\n", to: transfersPath)
    }

    /// The recorded app transfers.
    public func transfers() throws -> [Transfer] {
        guard let data = try FileBytes.readIfPresent(transfersPath, limit: 1 << 20) else { return [] }
        return try JSONDecoder().decode([Transfer].self, from: Data(data))
    }

    /// Marks identifiers (a `sub` or `transfer_sub`) as having revoked consent; returns those
    /// newly marked, in the order given (an identifier marked before is left as it is).
    @discardableResult
    public func revoke(_ identifiers: [String]) throws -> [String] {
        // No file yet is expected (nothing revoked): an empty list.
        let existing =
            try FileBytes.readIfPresent(revokedPath, limit: SimulatorDirectory.maximumRevokedBytes).map { String(decoding: $0, as: UTF8.self) } ?? ""
        var listed = Set(existing.split(whereSeparator: \.isNewline).map(String.init))
        let added = identifiers.filter { listed.insert($0).inserted }
        if !added.isEmpty { try write(existing + added.map { $0 + "\n" }.joined(), to: revokedPath) }
        return added
    }

    /// Identifiers marked as having revoked consent.
    public func revoked() -> Set<String> {
        // No file yet is expected (nothing revoked): an empty list.
        let text =
            (try? FileBytes.readIfPresent(revokedPath, limit: SimulatorDirectory.maximumRevokedBytes)).flatMap { $0 }.map {
                String(decoding: $0, as: UTF8.self)
            } ?? ""
        return Set(text.split(whereSeparator: \.isNewline).map(String.init))
    }

    /// The largest list of revoked identifiers read: millions of them.
    static let maximumRevokedBytes = 1 << 30

    /// The text of one of the stand-in's own files, refused over `limit` bytes.
    private static func text(_ path: String, limit: Int) throws -> String {
        String(decoding: try FileBytes.read(path, limit: limit), as: UTF8.self)
    }
}

/// A stand-in setup or state problem.
public struct SimulatorError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
