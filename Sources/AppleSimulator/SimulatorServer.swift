import AppleID
import Foundation
import Hummingbird
import Logging
import NIOCore

/// The request context of the stand-in: it keeps the channel so a fault can drop the
/// connection without answering.
struct SimulatorContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The stand-in for appleid.apple.com over HTTP: `/auth/token`, `/auth/usermigrationinfo`
/// (both forms), `/auth/keys`, plus `/simulator/stats`, and `/simulator/hold?after=N` and
/// `/simulator/release`, which hold migration calls after the next N and let them go
/// (``FaultInjection/holdAfterCalls``).
public struct SimulatorServer: Sendable {
    public let apple: SimulatedApple
    public let minter: TokenMinter
    public let faults: FaultInjection
    public let stats = SimulatorStats()
    /// The outages injected, and the calls that met them.
    public let outages: OutageSchedule
    public let logger: Logger
    private let revoker: TokenRevoker
    private let wording: RefusalWording
    private let rolls: FaultRolls
    private let hold: CallHold

    public init(directory: SimulatorDirectory, rules: SimulatedApple.Rules, faults: FaultInjection, logger: Logger) throws {
        self.apple = try SimulatedApple(directory: directory, rules: rules)
        self.minter = try TokenMinter(key: directory.signingKey())
        self.faults = faults
        self.logger = logger
        self.revoker = TokenRevoker(faults.tokenRevocation)
        self.wording = RefusalWording(faults.refusalDescriptions)
        self.outages = OutageSchedule(faults.outages)
        self.rolls = FaultRolls(seed: faults.seed)
        self.hold = CallHold(after: faults.holdAfterCalls)
    }

    /// The routes.
    func router() -> Router<SimulatorContext> {
        let router = Router(context: SimulatorContext.self)
        router.post("/auth/token") { request, context in
            try await answer("token", request, context) { form, now in try await token(form, now: now) }
        }
        router.post("/auth/usermigrationinfo") { request, context in
            await hold.pass()
            return try await answer("usermigrationinfo", request, context) { form, now in
                try await migrationInfo(form, authorization: request.headers[.authorization], now: now)
            }
        }
        router.get("/auth/keys") { _, _ in
            stats.count("keys.200")
            return json(.ok, try minter.jwks())
        }
        router.get("/simulator/stats") { _, _ in
            json(.ok, stats.json)
        }
        router.post("/simulator/hold") { request, _ in
            guard let after = request.uri.queryParameters.get("after", as: Int.self), after >= 0 else {
                return json(.badRequest, #"{"error":"give ?after=N, the calls to let through before holding"}"#)
            }
            hold.arm(after: after)
            return json(.ok, #"{"after":\#(after)}"#)
        }
        router.post("/simulator/release") { _, _ in
            let held = hold.held
            hold.release()
            return json(.ok, #"{"released":\#(held)}"#)
        }
        return router
    }

    /// Reads the form body, runs `handle` (credentials and tokens are checked on arrival,
    /// as Apple's front end does), then applies the injected latency and faults and turns a
    /// refusal into Apple's error answer. A call that meets an outage is answered before the
    /// faults are rolled, so it takes no roll from its user.
    private func answer(
        _ endpoint: String, _ request: Request, _ context: SimulatorContext,
        _ handle: ([String: String], Int64) async throws -> String
    ) async throws -> Response {
        let body = try await request.body.collect(upTo: 64 * 1024)
        if let outage = outages.meet() {
            switch outage.answer {
            case .dropped:
                stats.count("\(endpoint).outage.dropped")
                try await context.channel.close()
                return Response(status: .internalServerError)
            case .status(let status):
                stats.count("\(endpoint).outage.\(status)")
                var response = json(HTTPResponse.Status(code: status), status == 429 ? #"{"error":"rate_limited"}"# : #"{"error":"server_error"}"#)
                if let retryAfter = outage.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
                return response
            }
        }
        let form = FormEncoding.decode(String(buffer: body))
        let outcome: Result<String, SimulatedApple.Refusal>
        do { outcome = .success(try await handle(form, Int64(Date().timeIntervalSince1970))) } catch let error as SimulatedApple.Refusal {
            outcome = .failure(error)
        }
        if faults.latencyMilliseconds > 0 { try await Task.sleep(for: .milliseconds(faults.latencyMilliseconds)) }
        // The call's user (team A's sub, team B's transfer_sub; a token call's client): with a
        // seed, the roll is that user's own, whatever the order of the calls, and a call refused
        // for its access token (401, which comes of when a token is used) is answered so and
        // takes no roll, so that the user's next call gets the roll it would have had.
        let identifier = form["transfer_sub"] ?? form["sub"] ?? form["client_id"] ?? ""
        let refusedToken = if case .failure(let refusal) = outcome { refusal.status == 401 } else { false }
        switch refusedToken && faults.seed != nil ? .answer : faults.decide(rolls.roll(endpoint: endpoint, identifier: identifier)) {
        case .drop:
            stats.count("\(endpoint).dropped")
            try await context.channel.close()
            return Response(status: .internalServerError)
        case .rateLimit:
            stats.count("\(endpoint).429")
            var response = json(.tooManyRequests, #"{"error":"rate_limited"}"#)
            response.headers[.retryAfter] = String(faults.retryAfterSeconds)
            return response
        case .serverError:
            stats.count("\(endpoint).500")
            return json(.internalServerError, #"{"error":"server_error"}"#)
        case .answer:
            break
        }
        switch outcome {
        case .success(let result):
            stats.count("\(endpoint).200")
            return json(.ok, result)
        case .failure(let error):
            stats.count("\(endpoint).\(error.error)")
            logger.debug("refused", metadata: ["endpoint": "\(endpoint)", "reason": "\(error.description)"])
            let text = SimulatorAnswers.text(SimulatorAnswers.Failure(error: error.error, errorDescription: wording.description(error.description)))
            return json(HTTPResponse.Status(code: error.status), text)
        }
    }

    private func token(_ form: [String: String], now: Int64) async throws(SimulatedApple.Refusal) -> String {
        guard form["grant_type"] == "client_credentials" else {
            throw SimulatedApple.Refusal(status: 400, error: "unsupported_grant_type", description: "grant_type must be client_credentials")
        }
        guard form["scope"] == "user.migration" else {
            throw SimulatedApple.Refusal(status: 400, error: "invalid_scope", description: "scope must be user.migration")
        }
        let team = try await apple.authenticate(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        let clientID = form["client_id"] ?? ""
        guard !apple.windowClosed(teamID: team.teamID, clientID: clientID, now: now) else {
            throw SimulatedApple.Refusal(
                status: 400, error: "invalid_grant", description: "the app transfer period has ended; user migration is inactive")
        }
        let (token, lifetime) = apple.issueToken(teamID: team.teamID, clientID: clientID)
        return SimulatorAnswers.text(SimulatorAnswers.Token(accessToken: token, expiresIn: lifetime))
    }

    private func migrationInfo(_ form: [String: String], authorization: String?, now: Int64) async throws(SimulatedApple.Refusal) -> String {
        let bearer = try apple.checkToken(authorization)
        guard !revoker.refuses(expiresAt: bearer.expiresAt, newest: apple.lastIssuedTokenExpiry) else {
            throw SimulatedApple.Refusal(status: 401, error: "invalid_token", description: "the access token has been revoked")
        }
        let team = try await apple.authenticate(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        guard bearer.teamID == team.teamID, bearer.clientID == form["client_id"] else {
            throw SimulatedApple.Refusal(status: 400, error: "invalid_client", description: "the access token belongs to another team or client")
        }
        guard !apple.windowClosed(teamID: team.teamID, clientID: bearer.clientID, now: now) else {
            throw SimulatedApple.Refusal(status: 400, error: "invalid_request", description: "the app transfer period has ended")
        }
        defer { revoker.answered() }
        if let transferSub = form["transfer_sub"] {
            let user = try apple.exchange(teamID: team.teamID, transferSub: transferSub)
            return SimulatorAnswers.text(SimulatorAnswers.Exchange(sub: user.sub, email: user.email, isPrivateEmail: user.isPrivateEmail))
        }
        guard let sub = form["sub"], let target = form["target"] else {
            throw SimulatedApple.Refusal(status: 400, error: "invalid_request", description: "send transfer_sub, or sub and target")
        }
        let transferSub = try apple.generate(teamID: team.teamID, sub: sub, target: target)
        return SimulatorAnswers.text(SimulatorAnswers.TransferID(transferSub: transferSub))
    }

    private func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json;charset=UTF-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// Serves on `host:port` until cancelled; `onListening` gets the bound port (useful with port 0).
    public func run(host: String = "127.0.0.1", port: Int, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let app = Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "handover-apple-simulator"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}

/// A stand-in running in this process, for tests, the demo and the bench.
public final class RunningSimulator: Sendable {
    /// The base URL to point Handover at.
    public let baseURL: String
    public let server: SimulatorServer
    private let task: Task<Void, any Error>

    /// Starts `server` on a free loopback port and returns once it is listening.
    public init(_ server: SimulatorServer) async throws {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        self.server = server
        self.task = Task {
            try await server.run(port: 0) { port in
                continuation.yield(port)
                continuation.finish()
            }
        }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next() else { throw SimulatorError("the simulator did not start") }
        self.baseURL = "http://127.0.0.1:\(port)"
    }

    /// Stops the server and waits for it.
    public func stop() async {
        task.cancel()
        // The task was just cancelled: its CancellationError is the expected ending.
        _ = try? await task.value
    }
}
