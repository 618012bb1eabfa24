import Hummingbird

/// Counts every answer by route and status for `/metrics` (``ServerMetrics/respond(route:status:)``).
struct RouteMetricsMiddleware: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(
        _ request: Request, context: ServeRequestContext, next: (Request, ServeRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            let response = try await next(request, context)
            if let route = context.route { metrics.respond(route: route.rawValue, status: response.status.code) }
            return response
        } catch let error as any HTTPResponseError {
            if let route = context.route { metrics.respond(route: route.rawValue, status: error.status.code) }
            throw error
        }
    }
}
