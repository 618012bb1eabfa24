import Foundation
import Hummingbird
import NIOCore

/// The request context of `serve`: Hummingbird's basics, the peer's address, which the flood
/// guard budgets refusals by, and the encoder of every JSON answer.
public struct ServeRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The address of the connection's other end.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Members in sorted order, slashes as they are.
    public var responseEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The route the request matched, once the router has matched one.
    var route: ServeRoute? { endpointPath.flatMap(ServeRoute.init(path:)) }
}
