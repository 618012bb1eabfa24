import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare HTTP/1.1 keep-alive client on one blocking loopback socket: what a load of requests is
/// measured with when the client's own cost must stay small beside the server's (AsyncHTTPClient
/// spends more per request than `serve` does on a lookup). One thread uses each, hence
/// `@unchecked Sendable` without a lock.
final class RawHTTPClient: @unchecked Sendable {
    private let socket: Int32
    private let host: String
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)

    /// Connects to 127.0.0.1:`port`.
    init(port: Int, host: String = "127.0.0.1") throws {
        self.host = host
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw POSIXError(.init(rawValue: errno) ?? .ECONNREFUSED)
        }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(socket) }

    /// GETs `path` with `headers` (each line ended by CRLF); the status and body.
    func get(_ path: String, headers: String = "") throws -> (status: Int, body: [UInt8]) {
        try exchange(Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(headers)\r\n".utf8))
    }

    /// POSTs `body` to `path`; the status and body.
    func post(_ path: String, body: String) throws -> (status: Int, body: [UInt8]) {
        try exchange(Array("POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
    }

    private func exchange(_ request: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            sent += n
        }
        var received: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw POSIXError(.ECONNRESET) }
            received += buffer[0..<n]
            guard let end = Self.headerEnd(received) else { continue }
            let head = received[..<end]
            // "HTTP/1.1 200 OK": the three digits after the first space.
            let status = head.firstIndex(of: UInt8(ascii: " ")).map { space in Self.number(head[(space + 1)...]) } ?? 0
            let length = Self.contentLength(head)
            while received.count < end + 4 + length {
                let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { throw POSIXError(.ECONNRESET) }
                received += buffer[0..<n]
            }
            return (status, Array(received[(end + 4)..<(end + 4 + length)]))
        }
    }

    /// The decimal number at the start of `bytes` (spaces before it skipped).
    private static func number(_ bytes: ArraySlice<UInt8>) -> Int {
        var value = 0
        for byte in bytes.drop(while: { $0 == UInt8(ascii: " ") }) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The Content-Length header's value in the response head `head`, 0 when absent.
    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
        let name = Array("\r\ncontent-length:".utf8)
        var i = head.startIndex
        while i + name.count <= head.endIndex {
            if zip(head[i..<(i + name.count)], name).allSatisfy({ (0x41...0x5A).contains($0) ? $0 + 0x20 == $1 : $0 == $1 }) {
                return number(head[(i + name.count)...])
            }
            i += 1
        }
        return 0
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i }
        return nil
    }
}
