import AppleID
import Basics
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Intake
import Ledger
import LogEngine
import Logging
import NIOCore
import NIOSSL
import Witnessing

/// The HTTP side of `handover serve`: Apple's notifications and the app backend's sign-in
/// reports in, health and metrics out.
///
/// - `POST /apple/notifications`: Apple's body `{"payload": "<JWS>"}`.
/// - `POST /apple/sign-ins`: `{"identity_token": "<JWS>", "nonce": "..."}` with
///   `Authorization: Bearer <secret>`; `GET /v1/transfer-subs/{id}`, `GET /v1/subs/{id}`.
/// - `GET /healthz`, `GET /metrics` (Prometheus text).
///
/// The routes are ``ServeRoute``'s. Those of the recipient team (sign-ins, lookups) answer 403
/// on a sender's ledger and record nothing.
///
/// A 200 goes out only once the event is durable, so Apple redelivers anything lost. A
/// refusal is recorded and answered 400 (413 for a body over 64 KiB), up to the flood guard's
/// budget per source and minute; beyond it, 429 and one summary event per source and minute.
/// When Apple's keys cannot be fetched the answer is 503 and nothing is recorded, so Apple
/// tries again.
public struct HandoverServer: Sendable {
    public let intake: AppleIntake
    public let configuration: ServeConfiguration
    public let metrics = ServerMetrics()
    public let floodGuard: FloodGuard
    public let logger: Logger
    /// Whether the last write found the disk full.
    public let storage = StorageHealth()
    /// This ledger as a witness of the logs it was told to witness; nil answers every
    /// add-checkpoint 404 (no log is known).
    public let witness: CheckpointWitness?
    /// The tiles directory served under `/tiles/`; nil answers 404.
    public let tiles: TileServing?

    public init(
        intake: AppleIntake, configuration: ServeConfiguration, witness: CheckpointWitness? = nil, tiles: TileServing? = nil,
        logger: Logger = Logger(label: "handover.serve")
    ) {
        self.intake = intake
        self.witness = witness
        self.tiles = tiles
        self.configuration = configuration
        self.floodGuard = FloodGuard(budgetPerMinute: configuration.rejectionBudget)
        self.logger = logger
    }

    /// The routes, one for each ``ServeRoute``: the recipient team's behind
    /// ``RecipientRouteMiddleware``, every answer counted by ``RouteMetricsMiddleware``.
    public func router() -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.add(middleware: RouteMetricsMiddleware(metrics: metrics))
        let recipient = router.group().add(middleware: RecipientRouteMiddleware(settings: intake.settings, secret: configuration.signInSecret))
        for route in ServeRoute.allCases {
            let routes: any RouterMethods<ServeRequestContext> = route.role == nil ? router : recipient
            routes.on(RouterPath(route.path), method: route.method) { request, context in try await respond(route, request, context) }
        }
        return router
    }

    /// The routes this server's ledger is the wrong team's for: each answers 403, recording nothing.
    public var refusedRoutes: [ServeRoute] { ServeRoute.allCases.filter { ($0.role?.role).map { $0 != intake.settings.role } ?? false } }

    private func respond(_ route: ServeRoute, _ request: Request, _ context: ServeRequestContext) async throws -> Response {
        switch route {
        case .notifications:
            let gate = rejectionGate(route, source: source(of: request, context))
            return try await answer {
                let body = try await HandoverServer.collect(request.body)
                return try await intake.receiveNotification(body, admitRejection: gate)
            }.response(from: request, context: context)
        case .signIns:
            let gate = rejectionGate(route, source: source(of: request, context))
            return try await answer {
                let report = SignInReport(try await HandoverServer.collect(request.body))
                return try await intake.receiveSignIn(report.token, nonce: report.nonce, received: report.received, admitRejection: gate)
            }.response(from: request, context: context)
        // The app backend's lookups: answered from the projections, recording nothing.
        case .transferSubLookup: return try lookUp(.transferSub, context).response(from: request, context: context)
        case .subLookup: return try lookUp(intake.subKind, context).response(from: request, context: context)
        case .addCheckpoint:
            guard let witness else { return HandoverServer.plainText(.notFound, "unknown log origin") }
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: CheckpointWitness.maximumRequestBytes) } catch is NIOTooManyBytesError {
                return HandoverServer.plainText(.contentTooLarge, "request body over \(CheckpointWitness.maximumRequestBytes) bytes")
            } catch {
                return HandoverServer.plainText(.badRequest, "the request body could not be read")
            }
            let answer = await witness.addCheckpoint(Array(buffer: body))
            return Response(
                status: HTTPResponse.Status(code: answer.status), headers: [.contentType: answer.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(string: answer.body)))
        case .tiles:
            let path = context.parameters.getCatchAll().joined(separator: "/")
            return tiles?.response(path: path, authorization: request.headers[.authorization]) ?? HandoverServer.plainText(.notFound, "not found")
        case .health: return try health().response(from: request, context: context)
        case .metrics:
            do {
                try metrics.updateLedgerFigures(intake.ledger, projection: intake.projection)
            } catch {
                // The counters are still worth serving; the ledger's figures keep their last values.
                logger.error("metrics: the ledger's figures cannot be read", metadata: ["error": "\(error)"])
            }
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.prometheusText())))
        }
    }

    /// A plain-text answer, for the routes whose protocol is not JSON (tlog-witness, tlog-tiles).
    static func plainText(_ status: HTTPResponse.Status, _ message: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    private func health() -> EditedResponse<ServeReply> {
        if let full = storage.diskFull, let space = DiskSpace(at: intake.ledger.directory), space.available < DiskSpace.nearlyFull {
            return ServeReply(status: "disk-full", detail: full.message, freeBytes: space.available).answer(.serviceUnavailable, [.retryAfter: "60"])
        }
        do {
            let head = try intake.ledger.read { try $0.head().sequence }
            return ServeReply(status: "ok", head: head).answer(.ok)
        } catch {
            logger.error("healthz: the ledger cannot be read", metadata: ["error": "\(error)"])
            return ServeReply(status: "unavailable", detail: "the ledger cannot be read").answer(.serviceUnavailable)
        }
    }

    /// The client's address: the connection's peer, or, when the peer is the trusted proxy,
    /// the last address of the `X-Forwarded-For` it sent (the one it saw), provided that is an
    /// IP address: a header is outside text, and only an address is recorded as a source.
    func source(of request: Request, _ context: ServeRequestContext) -> String {
        let peer = context.remoteAddress?.ipAddress ?? "unknown"
        guard let proxy = configuration.trustedProxy, peer == proxy,
            let forwarded = request.headers[HTTPField.Name("X-Forwarded-For")!]?.split(separator: ",").last?.trimming(.whitespaces),
            // A header that is not an IP address is expected from a stranger: the peer is recorded.
            (try? SocketAddress(ipAddress: forwarded, port: 0)) != nil
        else { return peer }
        return forwarded
    }

    /// `GET /v1/transfer-subs/{id}` and `/v1/subs/{id}`: the user `id` names as a `kind`, 200
    /// with ``UserLookup``'s fields, or 404 when nothing is recorded under it.
    private func lookUp(_ kind: IdentifierKind, _ context: ServeRequestContext) -> EditedResponse<ServeReply> {
        guard let id = context.parameters.get("id"), !id.isEmpty, id.utf8.count <= Identifiers.maximumLength else {
            return ServeReply(error: "bad_request", detail: "the identifier is empty or longer than \(Identifiers.maximumLength) bytes")
                .answer(.badRequest)
        }
        do {
            let lookup = try intake.lookup(Identifier(kind, id))
            guard lookup.user != nil else { return ServeReply(error: "not_found", lookup: lookup).answer(.notFound) }
            return ServeReply(status: "found", lookup: lookup).answer(.ok)
        } catch {
            logger.error("lookup: the ledger cannot be read", metadata: ["error": "\(error)"])
            return ServeReply(status: "unavailable", detail: "the ledger cannot be read").answer(.serviceUnavailable)
        }
    }

    private func rejectionGate(_ route: ServeRoute, source: String) -> @Sendable (_ payloadSHA256: String) -> Bool {
        { [floodGuard] hash in floodGuard.admit(source: source, route: route.rawValue, payloadSHA256: hash) }
    }

    /// Records the flood guard's summaries: of the minutes ended by now, or with `all` (the
    /// server stopping) of every minute. Returns how many it recorded.
    @discardableResult
    public func recordSummaries(all: Bool = false) async throws -> Int {
        let summaries = floodGuard.takeSummaries(all: all)
        for summary in summaries {
            let key = "rejections-summarized:\(summary.source):\(summary.from.microseconds):\(summary.until.microseconds)"
            _ = try await intake.ledger.append(EventDraft(.rejectionsSummarized(summary), idempotencyKey: key))
            metrics.summarized()
        }
        return summaries.count
    }

    /// Runs `receive` and turns its receipt or failure into the answer.
    private func answer(_ receive: () async throws -> IntakeReceipt) async -> EditedResponse<ServeReply> {
        do {
            let receipt = try await receive()
            storage.recovered()
            metrics.record(receipt)
            switch receipt.outcome {
            case .recorded(let sequence), .duplicate(of: let sequence):
                return ServeReply(status: receipt.isDuplicate ? "duplicate" : "recorded", sequence: sequence, lookup: receipt.lookup).answer(.ok)
            case .rejected(let rejection, let sequence):
                let reply = ServeReply(error: "rejected", reason: rejection.reason.rawValue, detail: rejection.detail, sequence: sequence)
                // An oversized body is not read to its end: the connection closes after the answer.
                return rejection.reason == .bodyTooLarge ? reply.answer(.contentTooLarge, [.connection: "close"]) : reply.answer(.badRequest)
            case .suppressed(let rejection, _):
                let detail =
                    "more than \(floodGuard.budgetPerMinute) refused deliveries from this address this minute; this one is counted, not recorded"
                return ServeReply(error: "too_many_rejections", reason: rejection.reason.rawValue, detail: detail)
                    .answer(.tooManyRequests, [.retryAfter: "60"])
            }
        } catch let error as AppleKeySet.Unavailable {
            logger.warning("Apple's keys unavailable; asking the sender to retry", metadata: ["error": "\(error)"])
            let detail = "Apple's public keys cannot be fetched now (\(error.description)); try again later"
            return ServeReply(error: "unavailable", detail: detail).answer(.serviceUnavailable, [.retryAfter: "60"])
        } catch let error as LedgerError where error.code == .diskFull {
            if storage.full(error) {
                logger.critical("the disk holding the ledger is full; answering 503 until space is freed", metadata: ["error": "\(error.message)"])
            }
            return ServeReply(error: "disk-full", detail: error.message).answer(.serviceUnavailable, [.retryAfter: "60"])
        } catch {
            logger.error("could not record a delivery", metadata: ["error": "\(error)"])
            return ServeReply(error: "internal", detail: "the delivery could not be recorded; try again").answer(.internalServerError)
        }
    }

    /// Reads the body up to one byte past the verifier's limit, which alone decides what is too
    /// large: enough for it to refuse an oversized body, recorded with the hash of what was read
    /// so that a redelivery is known, without holding all of it. (`collect(upTo:)` throws such a
    /// body away, and with it what the refusal records.)
    static func collect(_ body: RequestBody) async throws -> Data {
        let limit = AppleTokenVerifier.maximumBodySize + 1
        var data = Data()
        for try await chunk in body {
            data.append(contentsOf: chunk.readableBytesView.prefix(limit - data.count))
            if data.count >= limit { break }
        }
        return data
    }

    /// Serves until SIGTERM or SIGINT (or cancellation), then finishes the requests in
    /// flight and returns. `onListening` gets the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let server: HTTPServerBuilder
        if let certificate = configuration.tlsCertificate, let key = configuration.tlsKey {
            server = try .tls(.http1(), tlsConfiguration: TLSFiles.configuration(certificate: certificate, key: key))
        } else {
            server = .http1()
        }
        let app = Application(
            router: router(), server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "handover"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
        // The flood guard's summaries: each minute's once it has ended, the rest at the end.
        let summaries = Task {
            while !Task.isCancelled {
                // Cancelled at shutdown: the loop ends, and the last summaries are recorded below.
                try? await Task.sleep(for: .seconds(5))
                do { try await recordSummaries() } catch { logger.error("could not record the rejection summaries", metadata: ["error": "\(error)"]) }
            }
        }
        defer { summaries.cancel() }
        do {
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            summaries.cancel()
            // The server's own error is what ends the command; this one is logged beside it.
            do { try await recordSummaries(all: true) } catch let summaryError {
                logger.error("could not record the rejection summaries", metadata: ["error": "\(summaryError)"])
            }
            throw error
        }
        summaries.cancel()
        try await recordSummaries(all: true)
    }
}
