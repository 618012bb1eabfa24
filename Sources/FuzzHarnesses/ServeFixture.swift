import AppleID
import AppleSimulator
import CryptoExtras
import Foundation
import HTTPTypes
import Hummingbird
import Intake
import Ledger
import Logging
import NIOCore
import NIOEmbedded
import NotificationServer
import Projections
import Synchronization

/// Team B's ledger with `serve` in front of it, as the serve harnesses drive it in-process:
/// Apple's key set is the stand-in's (a ``TokenMinter`` whose key the harness signs with),
/// and every refusal is recorded (no flood budget), so each input reaches the ledger. The
/// ledger is made afresh every ``inputsPerLedger`` inputs, so a long run does not fill memory.
final class ServeFixture: Sendable {
    static let inputsPerLedger = 20_000
    static let clientID = "com.example.notes"
    static let secret = "fuzz-sign-in-secret"

    /// The stand-in's signer: Apple's key as far as the fixture's intake knows.
    static let minter: TokenMinter = {
        do { return try TokenMinter(key: _RSA.Signing.PrivateKey(keySize: .bits2048)) } catch { fatalError("cannot make an RSA key: \(error)") }
    }()

    let ledger: Ledger
    let intake: AppleIntake
    let server: HandoverServer
    let responder: any HTTPResponder<ServeRequestContext>

    private init(directory: String) throws {
        var quiet = Logger(label: "handover.fuzz")
        quiet.logLevel = .critical
        let projection = UserProjection()
        ledger = try blocking {
            try await Ledger.create(
                at: directory, LedgerCreated(teamID: "BBBB222222", clientIDs: [ServeFixture.clientID], role: .recipient, ledgerID: "fuzz-serve"),
                folders: [projection])
        }
        let keys = AppleKeySet(.fixed(try blocking { try await JSONWebKeySet(json: Data(ServeFixture.minter.jwks().utf8)) }))
        intake = try AppleIntake(ledger: ledger, projection: projection, keys: keys, logger: quiet)
        server = try HandoverServer(
            intake: intake,
            configuration: ServeConfiguration(signInSecret: BearerSecret(secret: ServeFixture.secret, for: .signIn), rejectionBudget: 1_000_000),
            logger: quiet)
        responder = server.router().buildResponder()
    }

    private static let state = Mutex<(fixture: ServeFixture, inputs: Int, generation: Int)?>(nil)

    /// The fixture for the next input.
    static func next() -> ServeFixture {
        state.withLock { state in
            if let current = state, current.inputs < inputsPerLedger {
                state!.inputs += 1
                return current.fixture
            }
            state?.fixture.ledger.close()
            let generation = (state?.generation ?? 0) + 1
            do {
                let fixture = try ServeFixture(directory: FuzzWorkspace.fresh("serve") + "/ledger-\(generation)")
                state = (fixture, 1, generation)
                return fixture
            } catch {
                fatalError("cannot make the serve fixture: \(error)")
            }
        }
    }

    /// `serve`'s answer to one request, as its router gives it (a route it does not have is
    /// the router's 404).
    func respond(method: HTTPRequest.Method, path: String, headers: HTTPFields, body: [UInt8]) throws -> HTTPResponse.Status {
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path, headerFields: headers),
            body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let responder = responder
        return try blocking {
            var logger = Logger(label: "handover.fuzz")
            logger.logLevel = .critical
            // A channel of its own for the request's context, closed after it (an embedded
            // channel left open keeps its pipeline alive).
            let channel = EmbeddedChannel()
            defer { _ = try? channel.finish() }
            let context = ServeRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            do {
                return try await responder.respond(to: request, context: context).status
            } catch let error as HTTPError {
                return error.status
            }
        }
    }

    /// What `serve` may answer; a 500 means a delivery that could not be recorded.
    static let expectedStatuses: Set<Int> = [200, 400, 401, 404, 405, 413, 429]
}
