import AppleID
import ArgumentParser
import Foundation
import Migration

/// Apple credentials and endpoint, each option falling back to its environment variable
/// (README.md, "Migrating: both teams' workflow").
struct AppleOptions: ParsableArguments {
    @Option(name: .customLong("team-id"), help: "Your 10-character team ID (default: $APPLE_TEAM_ID).")
    var teamID: String?

    @Option(name: .customLong("client-id"), help: "The transferred app's client ID (default: $APPLE_CLIENT_ID).")
    var clientID: String?

    @Option(name: .customLong("key-id"), help: "The Sign in with Apple key's 10-character ID (default: $APPLE_KEY_ID).")
    var keyID: String?

    @Option(name: .customLong("private-key"), help: ArgumentHelp("The key's .p8 file (default: $APPLE_PRIVATE_KEY_PATH).", valueName: "file"))
    var privateKey: String?

    @Option(
        name: .customLong("apple-base-url"),
        help: ArgumentHelp("Apple's base URL (default: $HANDOVER_APPLE_BASE_URL, then https://appleid.apple.com).", valueName: "url"))
    var appleBaseURL: String?

    private func value(_ option: String?, _ variable: String) -> String? {
        if let option, !option.isEmpty { return option }
        if let env = ProcessInfo.processInfo.environment[variable], !env.isEmpty { return env }
        return nil
    }

    /// The credentials as given, unchecked; every one missing is named in the one message.
    func given() throws -> Preflight.Credentials {
        let team = value(teamID, "APPLE_TEAM_ID")
        let client = value(clientID, "APPLE_CLIENT_ID")
        let key = value(keyID, "APPLE_KEY_ID")
        let path = value(privateKey, "APPLE_PRIVATE_KEY_PATH")
        guard let team, let client, let key, let path else {
            let missing = [
                (team, "--team-id", "APPLE_TEAM_ID"), (client, "--client-id", "APPLE_CLIENT_ID"), (key, "--key-id", "APPLE_KEY_ID"),
                (path, "--private-key", "APPLE_PRIVATE_KEY_PATH"),
            ].filter { $0.0 == nil }
            let names = missing.map { "\($0.1) (or $\($0.2))" }.joined(separator: ", ")
            throw CLIExit.usage("Apple credentials missing: \(names) \(missing.count == 1 ? "is" : "are") required")
        }
        return Preflight.Credentials(teamID: team, clientID: client, keyID: key, privateKeyPath: path)
    }

    /// The credentials, the private key loaded and the IDs' shapes checked.
    func credentials() throws -> AppleCredentials {
        let given = try given()
        return try AppleCredentials(teamID: given.teamID, clientID: given.clientID, keyID: given.keyID, privateKeyPath: given.privateKeyPath)
    }

    var endpoints: AppleEndpoints { AppleOptions.endpoints(appleBaseURL) }

    /// `--apple-base-url`, then `$HANDOVER_APPLE_BASE_URL`, then Apple's.
    static func endpoints(_ flag: String?) -> AppleEndpoints {
        if let flag, !flag.isEmpty { return AppleEndpoints(baseURL: flag) }
        if let env = ProcessInfo.processInfo.environment["HANDOVER_APPLE_BASE_URL"], !env.isEmpty { return AppleEndpoints(baseURL: env) }
        return .apple
    }
}

/// Where Apple's public keys come from, for verifying identity tokens and notifications.
struct KeySetOptions: ParsableArguments {
    @Option(
        name: .customLong("jwks-url"),
        help: ArgumentHelp("Apple's JWKS (default: $HANDOVER_JWKS_URL, then /auth/keys under --apple-base-url).", valueName: "url"))
    var jwksURL: String?

    @Option(name: .customLong("jwks-file"), help: ArgumentHelp("Read Apple's keys from this JWKS file instead of fetching them.", valueName: "file"))
    var jwksFile: String?

    @Option(
        name: .customLong("apple-base-url"),
        help: ArgumentHelp("Apple's base URL (default: $HANDOVER_APPLE_BASE_URL, then https://appleid.apple.com).", valueName: "url"))
    var appleBaseURL: String?

    func validate() throws {
        if jwksURL != nil, jwksFile != nil { throw ValidationError("pass --jwks-url or --jwks-file, not both") }
    }

    /// The key set the options name; fetched lazily.
    func keySet() -> AppleKeySet {
        if let jwksFile { return AppleKeySet(.file(jwksFile)) }
        if let jwksURL, !jwksURL.isEmpty { return AppleKeySet(.url(jwksURL)) }
        if let env = ProcessInfo.processInfo.environment["HANDOVER_JWKS_URL"], !env.isEmpty { return AppleKeySet(.url(env)) }
        return AppleKeySet(.url(AppleOptions.endpoints(appleBaseURL).keys))
    }
}
