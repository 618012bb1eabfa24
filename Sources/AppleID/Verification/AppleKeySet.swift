import AsyncHTTPClient
import Basics
import Foundation
import NIOCore

/// Where Apple's public keys come from, cached: fetched from a JWKS URL (refetched when a
/// token names an unknown `kid`, at most once a minute) or read once from a file.
public actor AppleKeySet {
    /// Where the key set is read from.
    public enum Source: Sendable {
        /// A JWKS URL, such as `https://appleid.apple.com/auth/keys`.
        case url(String)
        /// A JWKS file, read once.
        case file(String)
        /// Keys already in hand.
        case fixed(JSONWebKeySet)
    }

    /// The key set could not be fetched or read; the token may be fine, so callers should
    /// answer "try again later", not record a rejection.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    public let source: Source

    /// Where the keys come from, for people: the URL, or the file.
    public nonisolated var origin: String {
        switch source {
        case .url(let url): url
        case .file(let path): "the file \(path)"
        case .fixed: "keys given in code"
        }
    }
    /// The shortest time between two fetches prompted by unknown key IDs.
    public let refetchInterval: Duration
    /// How long one fetch may take.
    public let timeout: TimeAmount
    private let http: HTTPClient
    private var cached: JSONWebKeySet?
    private var lastFetch: ContinuousClock.Instant?
    private var inFlight: Task<JSONWebKeySet, any Error>?
    /// How many times the key set was fetched or read.
    public private(set) var fetches = 0

    public init(_ source: Source, http: HTTPClient = .shared, refetchInterval: Duration = .seconds(60), timeout: TimeAmount = .seconds(10)) {
        self.source = source
        self.timeout = timeout
        self.http = http
        self.refetchInterval = refetchInterval
        if case .fixed(let set) = source { cached = set }
    }

    /// The key set holding the key named `kid`; nil when the key set, fresh enough, does not
    /// have it.
    public func keys(holding kid: String) async throws -> JSONWebKeySet? {
        if let cached, cached.holds(kid) { return cached }
        if cached != nil {
            // Only a URL can hold keys we have not seen, and only after the quiet minute.
            guard case .url = source else { return nil }
            if let lastFetch, ContinuousClock.now - lastFetch < refetchInterval { return nil }
        }
        let set = try await refresh()
        return set.holds(kid) ? set : nil
    }

    /// Fetches the key set now (one fetch shared by concurrent callers).
    @discardableResult
    public func refresh() async throws -> JSONWebKeySet {
        if let inFlight { return try await inFlight.value }
        let source = source
        let http = http
        let timeout = timeout
        let task = Task { try await AppleKeySet.load(source, http: http, timeout: timeout) }
        inFlight = task
        defer { inFlight = nil }
        fetches += 1
        let set = try await task.value
        // Only a successful fetch starts the quiet minute: while Apple's keys cannot be
        // fetched, tokens are answered "try again later", never refused for their kid.
        lastFetch = .now
        cached = set
        return set
    }

    /// The largest key set read, from a file or Apple's answer: 1 MiB (Apple's is under 2 KiB).
    static let maximumSize = 1 << 20

    private static func load(_ source: Source, http: HTTPClient, timeout: TimeAmount) async throws -> JSONWebKeySet {
        switch source {
        case .fixed(let set):
            return set
        case .file(let path):
            let data: [UInt8]
            do { data = try FileBytes.read(path, limit: maximumSize) } catch {
                throw Unavailable(description: "cannot read the JWKS file: \(ErrorText.describing(error))")
            }
            do { return try await JSONWebKeySet(json: Data(data)) } catch { throw Unavailable(description: "\(path): \(error)") }
        case .url(let url):
            let response: HTTPClientResponse
            let body: ByteBuffer
            do {
                response = try await http.execute(HTTPClientRequest(url: url), timeout: timeout)
                body = try await response.body.collect(upTo: maximumSize)
            } catch {
                throw Unavailable(description: "fetching Apple's keys from \(url) failed: \(error)")
            }
            guard response.status == .ok else {
                throw Unavailable(description: "fetching Apple's keys from \(url) answered HTTP \(response.status.code)")
            }
            do { return try await JSONWebKeySet(json: Data(body.readableBytesView)) } catch { throw Unavailable(description: "\(url): \(error)") }
        }
    }
}
