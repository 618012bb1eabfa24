import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One HTTP exchange's status and body.
struct HTTPAnswer {
    let status: Int
    let body: String
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:] }
}

extension HTTPClient {
    /// Sends one request and collects the answer.
    func send(_ url: String, method: HTTPMethod = .POST, body: Data? = nil, headers: [(String, String)] = []) async throws -> HTTPAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        // A bound against a hang, not a speed: on a busy machine running the other suites beside
        // this one, one answer has taken more than 30 s.
        let response = try await execute(request, timeout: .seconds(300))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return HTTPAnswer(status: Int(response.status.code), body: String(buffer: bytes))
    }
}
