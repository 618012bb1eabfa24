import Hummingbird
import Ledger

/// Guards the recipient team's routes (sign-ins, lookups): on a sender's ledger they answer
/// 403 and record nothing, before the bearer secret is asked for, so that nobody sets a secret
/// on the wrong ledger; otherwise they need the sign-in reports' bearer secret (401 without).
struct RecipientRouteMiddleware: RouterMiddleware {
    let settings: LedgerCreated
    let secret: BearerSecret?

    func handle(
        _ request: Request, context: ServeRequestContext, next: (Request, ServeRequestContext) async throws -> Response
    ) async throws -> Response {
        if let refusal = context.route?.role?.refusal(of: settings, at: "this server's ledger") {
            return try ServeReply(error: "wrong_ledger", detail: refusal.message).answer(.forbidden).response(from: request, context: context)
        }
        guard let secret else {
            let detail =
                "sign-in reports and lookups are off: no bearer secret was set (handover init --sign-in-secret-file, or serve --sign-in-secret-file)"
            return try ServeReply(error: "unauthorized", detail: detail).answer(.unauthorized).response(from: request, context: context)
        }
        guard secret.accepts(authorization: request.headers[.authorization]) else {
            return try ServeReply(error: "unauthorized", detail: "missing or wrong bearer secret")
                .answer(.unauthorized, [.wwwAuthenticate: "Bearer"]).response(from: request, context: context)
        }
        return try await next(request, context)
    }
}
