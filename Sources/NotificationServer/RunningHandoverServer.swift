/// A ``HandoverServer`` running in this process, for tests, the demo and the bench.
public final class RunningHandoverServer: Sendable {
    public let server: HandoverServer
    /// The base URL it listens on (`http://` or `https://`, 127.0.0.1 and the bound port).
    public let baseURL: String
    private let task: Task<Void, any Error>

    /// Starts `server` and returns once it is listening (its configuration's port may be 0).
    public init(_ server: HandoverServer) async throws {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        self.server = server
        self.task = Task {
            try await server.run { port in
                continuation.yield(port)
                continuation.finish()
            }
        }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        baseURL = "\(server.configuration.usesTLS ? "https" : "http")://127.0.0.1:\(port)"
    }

    /// Stops the server and waits for it.
    public func stop() async {
        task.cancel()
        // The task was just cancelled: its CancellationError is the expected ending.
        _ = try? await task.value
    }
}
