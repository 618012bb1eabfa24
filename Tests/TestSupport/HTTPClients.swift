import AsyncHTTPClient

/// Runs `body` with an HTTP client of its own and shuts the client down afterwards, whether
/// `body` returns or throws (a client dropped without a shutdown stops the whole test process).
public func withHTTPClient<T>(
    configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
    _ body: (HTTPClient) async throws -> T
) async throws -> T {
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let value: T
    do {
        value = try await body(client)
    } catch {
        try? await client.shutdown()
        throw error
    }
    try await client.shutdown()
    return value
}
