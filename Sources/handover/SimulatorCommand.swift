import AppleID
import AppleSimulator
import ArgumentParser
import Basics
import Foundation
import Ledger
import Logging

/// `--dir`, the stand-in's state directory.
struct SimulatorDirectoryOption: ParsableArguments {
    @Option(help: ArgumentHelp("The stand-in's state directory (keys, teams, transfers).", valueName: "dir"))
    var dir = "./apple-simulator"

    func open() throws -> SimulatorDirectory { try SimulatorDirectory(path: dir) }
}

/// `handover simulator`: the Apple stand-in and its setup.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator", abstract: "The Apple stand-in: serve it, register teams, record transfers, mint tokens.",
        subcommands: [Serve.self, RegisterTeam.self, Transfer.self, Revoke.self, Email.self, MintIdentityToken.self, MintNotification.self])

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve /auth/token, /auth/usermigrationinfo and /auth/keys.", exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(help: "Address to listen on.") var host = "127.0.0.1"
        @Option(help: "Port to listen on (0: any free port, printed).") var port = 8089
        @Option(name: .customLong("token-lifetime"), help: "Access token lifetime, seconds.") var tokenLifetime = 3600
        @Option(name: .customLong("latency-ms"), help: "Latency added to every answer.") var latency = 0
        @Option(name: .customLong("rate-429"), help: "Fraction of calls answered 429 with Retry-After.") var rate429 = 0.0
        @Option(name: .customLong("retry-after"), help: "Retry-After sent with 429, seconds.") var retryAfter = 1
        @Option(name: .customLong("rate-500"), help: "Fraction of calls answered 500.") var rate500 = 0.0
        @Option(name: .customLong("rate-drop"), help: "Fraction of connections closed without an answer.") var rateDrop = 0.0
        @Option(
            name: .customLong("revoked-fraction"),
            help: "Fraction of users who revoked consent (invalid_request), chosen by a hash of their identifier.") var revokedFraction = 0.0
        @Option(
            name: .customLong("revoke-tokens-after"),
            help: ArgumentHelp("After this many migration calls, refuse (401) every access token issued so far, once.", valueName: "calls"))
        var revokeTokensAfter: Int?
        @Option(
            name: .customLong("refuse-tokens-after"),
            help: ArgumentHelp("After this many migration calls, refuse (401) every access token, however new.", valueName: "calls"))
        var refuseTokensAfter: Int?
        @Option(
            help: ArgumentHelp(
                """
                Decide the injected faults from N instead of at random: whether a call is answered 429, 500 or dropped \
                (--rate-429, --rate-500, --rate-drop) is a function of N, the endpoint, the user in the call (team A's sub, \
                team B's transfer_sub; a token call's client_id) and how many times that user was asked before, not of the \
                order calls arrive; --revoked-fraction's users are chosen by N too. So two runs with the same N and the same \
                users, on the same --dir (whose secret makes the transfer_subs), fault the same users the same way at any \
                concurrency. --outage, --latency-ms and the token options stay timed or counted in arrival order; a call \
                they answer (an outage's, a refused token's 401) takes no roll. Without --seed, faults are random.
                """, valueName: "N"))
        var seed: UInt64?
        @Option(
            name: .customLong("outage"),
            help: ArgumentHelp(
                "An outage: after CALLS calls, SECONDS of every call answered ANSWER (429, a 5xx status, or drop: the connection closed), with Retry-After if given (repeat).",
                valueName: "CALLS:SECONDS:ANSWER[:RETRY_AFTER]"))
        var outages: [OutageArgument] = []
        @Option(
            name: .customLong("hold-after"),
            help: ArgumentHelp(
                "After this many migration calls, hold every later one unanswered until POST /simulator/release: a run stopped part way, alive.",
                valueName: "calls"))
        var holdAfter: Int?

        func validate() throws {
            if revokeTokensAfter != nil && refuseTokensAfter != nil {
                throw ValidationError("--revoke-tokens-after and --refuse-tokens-after exclude each other")
            }
        }

        func run() async throws {
            var rules = SimulatedApple.Rules()
            rules.tokenLifetime = tokenLifetime
            rules.revokedFraction = revokedFraction
            rules.seed = seed.map(FaultSeed.init)
            var faults = FaultInjection()
            faults.latencyMilliseconds = latency
            faults.rateLimitedFraction = rate429
            faults.retryAfterSeconds = retryAfter
            faults.serverErrorFraction = rate500
            faults.droppedFraction = rateDrop
            faults.outages = outages.map(\.outage)
            faults.seed = seed.map(FaultSeed.init)
            faults.holdAfterCalls = holdAfter
            faults.tokenRevocation = revokeTokensAfter.map { .once(afterCalls: $0) } ?? refuseTokensAfter.map { .always(afterCalls: $0) }
            var logger = Logger(label: "handover.simulator")
            logger.logLevel = .warning
            let server = try SimulatorServer(directory: directory.open(), rules: rules, faults: faults, logger: logger)
            try await server.run(host: host, port: port) { port in
                Console.now("Apple stand-in listening on http://\(host):\(port) (state in \(directory.dir))")
            }
        }
    }

    struct RegisterTeam: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "register-team", abstract: "Register a team with a new key; prints the key ID and the .p8 path.",
            exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(name: .customLong("team-id"), help: "The team's 10-character team ID (A-Z, 0-9).") var teamID: String
        @Option(name: .customLong("client-id"), help: "Client IDs of the team's app (repeat).") var clientIDs: [String]
        @Option(
            name: .customLong("key-id"),
            help: ArgumentHelp("The key's 10-character key ID, A-Z and 0-9 as Apple's are (default: a new one).", valueName: "id"))
        var keyID: String?

        func validate() throws {
            guard AppleCredentials.isTenCharacterID(teamID) else {
                throw ValidationError("--team-id: \"\(teamID)\" is not 10 characters of A-Z and 0-9")
            }
            if let keyID, !AppleCredentials.isTenCharacterID(keyID) {
                throw ValidationError("--key-id: \"\(keyID)\" is not 10 characters of A-Z and 0-9, as Apple's key IDs are (KEYA111111, say)")
            }
            for clientID in clientIDs where !AppleCredentials.isClientID(clientID) {
                throw ValidationError("--client-id: \"\(clientID)\" is empty or contains spaces")
            }
        }

        func run() throws {
            let (key, path) = try directory.open().registerTeam(teamID, clientIDs: clientIDs, keyID: keyID)
            Console.out("team \(teamID) key-id \(key) private-key \(path)")
        }
    }

    struct Transfer: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record an app transfer; its 60-day window closes the endpoints afterwards.", exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(name: .customLong("client-id")) var clientID: String
        @Option var from: String
        @Option var to: String
        @Option(name: .customLong("accepted-at"), help: "When the transfer was accepted (RFC 3339 or a date; default now).") var acceptedAt: String?
        @Option(name: .customLong("window-days")) var windowDays = 60

        func validate() throws {
            let allowed = TransferAccepted.windowDaysAllowed
            guard allowed.contains(windowDays) else { throw ValidationError("--window-days must be \(allowed.lowerBound) to \(allowed.upperBound)") }
        }

        func run() throws {
            let time = try acceptedAt.map { try parseTime($0, option: "--accepted-at") } ?? .now()
            try directory.open().recordTransfer(
                .init(clientID: clientID, fromTeam: from, toTeam: to, acceptedAt: time.seconds, windowDays: windowDays))
            Console.out("transfer of \(clientID) from \(from) to \(to) accepted at \(time); endpoints close \(time.adding(days: windowDays))")
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mark users (sub or transfer_sub) as having revoked consent; prints one line per user.", exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Argument(help: ArgumentHelp("The users' sub (team A's calls) or transfer_sub (team B's).", valueName: "id")) var identifiers: [String]

        func validate() throws {
            guard !identifiers.isEmpty else { throw ValidationError("name at least one user: a sub or a transfer_sub") }
            for identifier in identifiers where identifier.isEmpty || identifier.contains(where: \.isNewline) {
                throw ValidationError("\"\(identifier)\" is not an identifier: empty, or a line break in it")
            }
        }

        func run() throws {
            var added = Set(try directory.open().revoke(identifiers))
            for identifier in identifiers {
                Console.out((added.remove(identifier) != nil ? "revoked consent: " : "already revoked: ") + identifier)
            }
        }
    }

    struct Email: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the email each of team A's users gave the app at sign-in (a private relay address, or their own): one line per sub.",
            discussion:
                "What the rehearsal's accounts table starts with. A user who shares their own address keeps it under the team the app moves to; "
                + "one who hid theirs has a relay address of team A's, which stops reaching them once the app is the other team's.",
            exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(name: .customLong("team-id"), help: ArgumentHelp("Team A: the team whose transfer is recorded.", valueName: "team"))
        var teamID: String
        @Argument(help: ArgumentHelp("Team A's sub of each user.", valueName: "sub")) var subs: [String]

        func validate() throws {
            guard !subs.isEmpty else { throw ValidationError("name at least one user's sub") }
        }

        func run() throws {
            let apple = try SimulatedApple(directory: try directory.open(), rules: .init())
            for sub in subs {
                guard let email = apple.senderEmail(teamID: teamID, sub: sub) else {
                    throw CLIExit(
                        .usage, "no transfer from team \(teamID) is recorded in \(directory.dir): record it with `handover simulator transfer`")
                }
                Console.out("\(InertText.forScreen(sub)) \(email)")
            }
        }
    }

    struct MintIdentityToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mint-identity-token", abstract: "Print an identity token signed with the stand-in's RSA key.", exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(name: .customLong("client-id")) var clientID: String
        @Option var sub: String
        @Option(name: .customLong("transfer-sub")) var transferSub: String?
        @Option var email: String?
        @Option var nonce: String?
        @Option(help: "Lifetime in seconds.") var lifetime: Int64 = 600

        func run() async throws {
            let minter = try TokenMinter(key: directory.open().signingKey())
            Console.data(
                try await minter.identityToken(
                    audience: clientID, sub: sub, transferSub: transferSub, email: email,
                    isPrivateEmail: email.map { $0.hasSuffix("@privaterelay.appleid.com") },
                    nonce: nonce, issuedAt: Timestamp.now().seconds, lifetime: lifetime))
        }
    }

    struct MintNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mint-notification", abstract: "Print a server-to-server notification body signed with the stand-in's RSA key.",
            exits: CommandExits.noLedger)
        @OptionGroup var directory: SimulatorDirectoryOption
        @Option(name: .customLong("client-id")) var clientID: String
        @Option(help: "email-enabled, email-disabled, consent-revoked or account-deleted.") var type: String
        @Option var sub: String
        @Option var email: String?

        func run() async throws {
            let minter = try TokenMinter(key: directory.open().signingKey())
            Console.data(
                try await minter.notification(
                    audience: clientID, type: type, sub: sub, email: email, isPrivateEmail: email.map { $0.hasSuffix("@privaterelay.appleid.com") },
                    eventTime: Timestamp.now().seconds))
        }
    }
}

/// `--outage CALLS:SECONDS:ANSWER[:RETRY_AFTER]`.
struct OutageArgument: ExpressibleByArgument {
    let outage: SimulatedOutage

    init?(argument: String) {
        guard let outage = SimulatedOutage(argument: argument) else { return nil }
        self.outage = outage
    }
}
